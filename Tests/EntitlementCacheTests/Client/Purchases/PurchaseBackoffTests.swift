import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The purchase queue's backoff and expiry across launches, by the injected clock: each
/// launch is a new client and a new cache instance on the same file, as after a kill.
@Suite("Refresh client: purchase backoff across launches")
struct PurchaseBackoffTests {
  /// One device: a file, a virtual clock, and the client of the current launch.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  final class Device: Sendable {
    let runtime = SimulatedRuntime(start: Fixture.requestDate, bootSession: "boot-1")
    let directory: TemporaryDirectory
    let fetcher = HandAnsweredFetcher()
    let poster = HandAnsweredPoster()
    let scope = ClientFixture.identity("alice").scope

    init() throws {
      directory = try TemporaryDirectory()
    }

    func openCache() throws -> SQLiteCustomerInfoCache {
      var configuration = CacheConfiguration()
      configuration.pruneOnOpen = false
      configuration.changeCheckInterval = .zero
      return try SQLiteCustomerInfoCache(
        path: directory.path("cache.sqlite"), configuration: configuration,
        clock: runtime.clock)
    }

    /// Starts a client on a new cache instance; fetches are left unanswered (offline).
    func launch(as user: String = "alice") throws -> (EntitlementClient, SQLiteCustomerInfoCache) {
      let cache = try openCache()
      let client = try EntitlementClient(
        cache: cache, fetcher: fetcher, identity: ClientFixture.identity(user),
        runtime: runtime, poster: poster)
      client.start()
      runtime.runUntilIdle()
      return (client, cache)
    }

    /// Alice's launch enqueues `tx1`, its first post fails with `status`, and the process
    /// dies: the next launch finds the entry backed off.
    func leaveAFailedPost(status: Int?) throws {
      let (client, cache) = try launch()
      _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: scope)
      client.networkAvailable()
      runtime.runUntilIdle()
      poster.answer(.failure(.transient(status: status)))
      runtime.runUntilIdle()
      client.stop()
      runtime.runUntilIdle()
    }

    func entry(in cache: SQLiteCustomerInfoCache) throws -> QueuedPurchase? {
      try cache.queuedPurchases(observedBy: scope).first
    }
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "each failed post doubles the persisted delay from 2 s to the 1 h cap, jittered, and a relaunch keeps it"
  )
  func scheduleAcrossLaunches() throws {
    let device = try Device()
    var (client, cache) = try device.launch()
    _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: device.scope)
    client.networkAvailable()
    device.runtime.runUntilIdle()
    var delays: [TimeInterval] = []
    for attempt in 1...14 {
      #expect(device.poster.waiting.map(\.attempt) == [attempt])
      let failedAt = device.runtime.manualClock.now
      device.poster.answer(.failure(.transient(status: nil)))
      device.runtime.runUntilIdle()
      let due = try #require(try device.entry(in: cache)?.nextAttemptAt)
      delays.append(due.timeIntervalSince(failedAt))
      // The process dies; the next launch finds the entry backed off and waits for its time.
      client.stop()
      device.runtime.runUntilIdle()
      (client, cache) = try device.launch()
      #expect(device.poster.waiting.isEmpty, "attempt \(attempt) posted again before its time")
      let wait = Int64((due.timeIntervalSince(device.runtime.manualClock.now) * 1000).rounded())
      device.runtime.advance(by: .milliseconds(wait - 1))
      #expect(device.poster.waiting.isEmpty, "attempt \(attempt) posted 1 ms early")
      device.runtime.advance(by: .milliseconds(1))
    }
    for (index, delay) in delays.enumerated() {
      let base = min(2 * pow(2, Double(index)), .hour)
      #expect(
        delay >= base * 0.75 - 0.001 && delay <= min(base * 1.25, .hour) + 0.001,
        "\(index): \(delay)")
    }
    #expect(delays.last == .hour || (delays.last ?? 0) >= 0.75 * .hour)
    #expect(device.poster.requests.allSatisfy { $0.appUserID == "alice" })
    client.stop()
    device.runtime.runUntilIdle()
  }

  /// A launch as another user knows nothing of alice's entry; when she logs in again it is
  /// due, and nothing else in this launch would post it: her state said "processing" forever.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("logging back in posts the purchase an earlier launch left unposted")
  func logInPostsWhatAnEarlierLaunchLeft() throws {
    let device = try Device()
    try device.leaveAFailedPost(status: nil)
    let (client, _) = try device.launch(as: "bob")
    device.runtime.advance(by: .minute * 10)
    #expect(device.poster.waiting.isEmpty)

    let relaunched = client
    device.runtime.spawn { _ = try? await relaunched.logIn("alice") }
    device.runtime.runUntilIdle()
    #expect(device.poster.waiting.map(\.appUserID) == ["alice"])
    #expect(device.poster.waiting.map(\.transactionID) == ["tx1"])

    // Her log-in fetch answers before the post: not entitled yet. The post then syncs with no
    // CustomerInfo, and a fetch that starts after it follows, or her state says "buy" (not
    // entitled, nothing pending) until some later refresh.
    let notEntitled = Fixture.notEntitledJSON(requestDate: device.runtime.manualClock.now)
    device.fetcher.answer(user: "alice", json: notEntitled)
    device.runtime.runUntilIdle()
    let alices = { device.fetcher.waiting.filter { $0.appUserID == "alice" }.map(\.flow) }
    #expect(alices().isEmpty)
    device.poster.answer(.success(.synced(nil)))
    device.runtime.runUntilIdle()
    #expect(alices() == [.purchase])
    client.stop()
    device.runtime.runUntilIdle()
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a due time a clock set back pushed far ahead does not hold the purchase")
  func clockSetBack() throws {
    let device = try Device()
    try device.leaveAFailedPost(status: nil)
    device.runtime.manualClock.advance(by: .day * -2)
    let (client, _) = try device.launch()
    #expect(device.poster.waiting.map(\.attempt) == [2])
    client.stop()
    device.runtime.runUntilIdle()
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("unsent 30 days after its observation, an entry expires: kept, listed, never posted again")
  func thirtyDayExpiry() throws {
    let device = try Device()
    try device.leaveAFailedPost(status: 503)
    device.runtime.manualClock.advance(by: .seconds(QueuedPurchase.expiryAge))
    let (client, cache) = try device.launch()
    let sync = Outcome<PurchaseSyncResult>()
    device.runtime.spawn { [client] in sync.set(await client.syncPurchases()) }
    device.runtime.runUntilIdle()
    #expect(device.poster.waiting.isEmpty)
    // The start's fetch, then the sync's, which must start after the sync was asked for (and
    // the first launch's, which nobody waits for any more).
    while !device.fetcher.waiting.isEmpty {
      device.fetcher.answer(.failure(.transient(status: nil)))
      device.runtime.runUntilIdle()
    }
    // The start's drain expired it; the sync after it finds it final.
    let entry = try #require(try device.entry(in: cache))
    #expect(entry.state == .expired && entry.attempts == 1)
    #expect(entry.lastFailure == .transient(status: 503))
    #expect(sync.result?.pending.isEmpty == true)
    #expect(sync.result?.expired.map(\.transactionID) == ["tx1"])
    #expect(device.poster.requests.count == 1)
    client.stop()
    device.runtime.runUntilIdle()
  }
}
