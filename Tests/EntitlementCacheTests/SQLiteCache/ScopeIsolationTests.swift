import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A snapshot stored for one scope is invisible through a scope that differs in any one part.
@Suite("Scope isolation")
struct ScopeIsolationTests {
  static let neighbours: [(String, CacheScope)] = [
    ("SDK key", Fixture.scope(sdkKey: "sdk_live_other")),
    ("installation", Fixture.scope(installation: "install-2")),
    ("environment", Fixture.scope(environment: .sandbox)),
    ("app user", Fixture.scopeB),
  ]

  @Test(arguments: neighbours)
  func neighbourSeesNothingOfTheStoredScope(part: String, neighbour: CacheScope) throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)

    #expect(cache.access(to: "pro", for: neighbour).state == .offlineUnavailable(.noSnapshot))
    #expect(cache.activeEntitlementKeys(for: neighbour).isEmpty)
    #expect(try cache.evaluatedCustomerInfo(for: neighbour) == nil)
    #expect(try cache.load(neighbour) == nil)

    // Writes through the neighbour leave the stored scope alone, and the other way round.
    clock.advance(by: .minute)
    try cache.store(try StoreTest.snapshot(status: "revoked"), for: neighbour)
    try cache.recordRefreshFailure(for: neighbour, reason: "neighbour failed")
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.freshness == .fresh)
    #expect(cache.access(to: "pro", for: neighbour).state == .denied(.revoked))
    try cache.remove(neighbour)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)

    // The same holds for a cache with nothing in memory.
    let reopened = try Fixture.cache(in: directory, clock: clock)
    #expect(reopened.access(to: "pro", for: neighbour).state == .offlineUnavailable(.noSnapshot))
    #expect(reopened.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(try reopened.load(Fixture.scopeA)?.bookkeeping.lastRefreshFailedAt == nil)
  }

  @Test func everyEnvironmentIsItsOwnScope() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    for environment in StoreEnvironment.allCases {
      try cache.store(
        try StoreTest.snapshot(key: environment.rawValue),
        for: Fixture.scope(environment: environment))
    }
    for environment in StoreEnvironment.allCases {
      #expect(
        cache.activeEntitlementKeys(for: Fixture.scope(environment: environment))
          == [environment.rawValue])
    }
    let summaries = try CacheInspector(cache).scopeSummaries()
    #expect(Set(summaries.compactMap(\.environment)) == Set(StoreEnvironment.allCases))
  }
}
