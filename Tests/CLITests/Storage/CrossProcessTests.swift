import EntitlementCache
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

/// A committed write in one process is seen by the next read in another: the app's cache in
/// this process and the tool in a child process share one file.
@Suite struct CrossProcessTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  private func openCache(at time: String) throws -> (SQLiteCustomerInfoCache, ManualClock) {
    let clock = ManualClock(try #require(Date(iso8601: time)))
    var configuration = CacheConfiguration()
    configuration.changeCheckInterval = .zero
    configuration.pruneOnOpen = false
    let cache = try SQLiteCustomerInfoCache(
      path: workspace.db, configuration: configuration, clock: clock.cacheClock)
    return (cache, clock)
  }

  private var scope: CacheScope {
    get throws {
      try CacheScope(
        sdkKey: SampleScope.sdkKey, installationID: SampleScope.installation,
        environment: .production,
        appUserID: SampleScope.userA)
    }
  }

  @Test func theLibrarySeesTheToolsWrite() throws {
    let (cache, _) = try openCache(at: "2026-11-30T12:01:00Z")
    // The first read makes the (empty) scope resident in memory.
    #expect(cache.access(to: "pro", for: try scope).state == .offlineUnavailable(.noSnapshot))

    try workspace.put()
    let decision = cache.access(to: "pro", for: try scope)
    #expect(decision.state == .granted)
    #expect(decision.evidence.storedAt == Date(iso8601: SampleSnapshot.requestDate))

    let failed = try workspace.run(
      "refresh-failed", Sample.scope() + ["--now", "2026-11-30T12:00:30Z"])
    #expect(failed.status == 0)
    #expect(cache.access(to: "pro", for: try scope).evidence.freshness == .offline)

    #expect(try workspace.run("purge", Sample.scope()).status == 0)
    #expect(cache.access(to: "pro", for: try scope).state == .offlineUnavailable(.noSnapshot))
  }

  @Test func theToolSeesTheLibrarysWrite() throws {
    let (cache, _) = try openCache(at: SampleSnapshot.requestDate)
    #expect(
      try workspace.check(now: "2026-11-30T12:01:00Z").json["reason"] as? String == "no_snapshot")

    try cache.store(
      try CustomerInfoSnapshot(jsonData: Data(SampleSnapshot.json.utf8)), for: try scope)
    let (result, json) = try workspace.check(now: "2026-11-30T12:01:00Z")
    #expect(result.status == 0)
    #expect(json["state"] as? String == "granted")

    try cache.recordRefreshFailure(for: try scope, reason: nil)
    let (_, offline) = try workspace.check(now: "2026-11-30T12:01:00Z")
    #expect((offline["evidence"] as? [String: Any])?["freshness"] as? String == "offline")
  }
}
