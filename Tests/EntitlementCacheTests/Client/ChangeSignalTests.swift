import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// An idle client in the foreground reads nothing: its cross-process check looks at the
/// cache's change mark and reads only when it moved.
@Suite("Refresh client: the cache's change signal instead of reading every check")
struct ChangeSignalTests {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "an idle foreground client makes no cache read in 10 virtual minutes", arguments: [true, false])
  func idleClientReadsNothing(signals: Bool) throws {
    let counting = Locked<CountingCache<InMemoryCustomerInfoCache>?>(nil)
    let harness = try ClientHarness(cache: { clock, _ in
      let cache = CountingCache(InMemoryCustomerInfoCache(clock: clock), signals: signals)
      counting.withLock { $0 = cache }
      return cache
    })
    let cache = try #require(counting.withLock { $0 })
    harness.start(answering: ClientFixture.json())
    // Past the staleAfter boundary, which publishes by itself: nothing is due after it for
    // days.
    harness.runtime.advance(by: .minute * 6)
    let published = harness.states.count
    cache.resetReads()
    harness.runtime.advance(by: .minute * 10)
    #expect(harness.states.count == published)
    if signals {
      #expect(cache.reads == 0, "an idle client read the cache \(cache.reads) times")
    } else {
      // A cache without the signal is read at every check, as before: about 667 checks.
      #expect(cache.reads > 600)
    }
    // A write by another process moves the mark: published at the next check.
    try harness.storeDirectly(
      ClientFixture.json(requestDate: Fixture.requestDate.addingTimeInterval(16 * .minute)),
      user: "alice")
    harness.runtime.advance(by: .seconds(1))
    #expect(harness.states.count == published + 1)
    #expect(harness.states.last?.customerInfo?.freshness == .fresh)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a snapshot stored through the client's cache instance is published at once, with no check",
    arguments: CacheKind.allCases)
  func ownInstanceWritesArePublishedAtOnce(kind: CacheKind) throws {
    // No cross-process check at all: only the cache's write signal can publish the write.
    let harness = try ClientHarness(
      on: kind, configure: { $0.changeCheckInterval = nil })
    harness.start(answering: ClientFixture.json())
    let published = harness.states.count
    let reports = harness.reports.count
    try harness.storeDirectly(
      ClientFixture.json(requestDate: Fixture.requestDate.addingTimeInterval(.minute)),
      user: "alice")
    harness.runtime.runUntilIdle()
    #expect(harness.states.count == published + 1)
    #expect(
      harness.states.last?.customerInfo?.customerInfo.requestDate
        == Fixture.requestDate.addingTimeInterval(.minute))
    // The client's own refresh publishes once, after its report, as before.
    let client = harness.client
    harness.runtime.spawn { _ = await client.refresh() }
    harness.runtime.runUntilIdle()
    harness.answerEveryFetch(
      json: ClientFixture.json(requestDate: Fixture.requestDate.addingTimeInterval(2 * .minute)))
    #expect(harness.states.count == published + 2)
    #expect(harness.reports.count == reports + 1)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "an idle foreground client on SQLite reads nothing and decodes no body in 10 virtual minutes")
  func idleClientDecodesNothing() throws {
    let sqlite = Locked<SQLiteCustomerInfoCache?>(nil)
    let counting = Locked<CountingCache<SQLiteCustomerInfoCache>?>(nil)
    let harness = try ClientHarness(cache: { clock, directory in
      let base = try CacheKind.sqlite.make(clock: clock, in: directory)
      let cache = try #require(base as? SQLiteCustomerInfoCache)
      sqlite.withLock { $0 = cache }
      let wrapped = CountingCache(cache, signals: true)
      counting.withLock { $0 = wrapped }
      return wrapped
    })
    let cache = try #require(sqlite.withLock { $0 })
    let reads = try #require(counting.withLock { $0 })
    harness.start(answering: ClientFixture.json())
    harness.runtime.advance(by: .minute * 6)
    // The client's own store put the body in memory: nothing to decode, then or since.
    #expect(cache.testingSeam.bodyDecodes == 0)
    let published = harness.states.count
    reads.resetReads()
    harness.runtime.advance(by: .minute * 10)
    #expect(harness.states.count == published)
    #expect(cache.testingSeam.bodyDecodes == 0)
    // Not even from memory: the mark did not move, so the client asked the cache nothing.
    #expect(reads.reads == 0, "an idle client read the SQLite cache \(reads.reads) times")

    // Another process's write: published at the next check, its body decoded once.
    let other = try SQLiteCustomerInfoCache(
      path: cache.path, clock: harness.runtime.clock)
    try other.store(
      CustomerInfoSnapshot(
        jsonData: Data(
          ClientFixture.json(requestDate: Fixture.requestDate.addingTimeInterval(16 * .minute)).utf8
        )),
      for: ClientFixture.identity("alice").scope)
    harness.runtime.advance(by: .minute)
    #expect(harness.states.count == published + 1)
    #expect(harness.states.last?.customerInfo?.freshness == .fresh)
    #expect(cache.testingSeam.bodyDecodes == 1)
  }

  @Test("a second SQLite instance's write moves the first one's mark; reads do not")
  func sqliteMark() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let path = directory.path("cache.sqlite")
    let first = try SQLiteCustomerInfoCache(path: path, clock: clock.cacheClock)
    let second = try SQLiteCustomerInfoCache(path: path, clock: clock.cacheClock)
    let scope = ClientFixture.identity("alice").scope
    let snapshot = try CustomerInfoSnapshot(jsonData: Data(ClientFixture.json().utf8))
    let before = try #require(first.changeMark())
    _ = first.access(to: "pro", for: scope)
    _ = try first.evaluatedCustomerInfo(for: scope)
    #expect(first.changeMark() == before)
    try second.store(snapshot, for: scope)
    let afterOther = try #require(first.changeMark())
    #expect(afterOther != before)
    try first.recordRefreshFailure(for: scope, reason: "timeout")
    #expect(first.changeMark() != afterOther)
    try first.close()
    #expect(first.changeMark() == nil)
  }
}

/// A cache that counts its reads, with the change signal of the cache below it or without one.
final class CountingCache<Base: CustomerInfoChangeSignaling>: ForwardingCustomerInfoCache,
  CustomerInfoChangeSignaling
{
  let base: Base
  private let signals: Bool
  private let count = Locked(0)

  init(_ base: Base, signals: Bool) {
    self.base = base
    self.signals = signals
  }

  func observeWrites(_ observer: @escaping @Sendable () -> Void) -> WriteObservation {
    base.observeWrites(observer)
  }

  var reads: Int { count.withLock { $0 } }
  func resetReads() { count.withLock { $0 = 0 } }

  /// Nil without the signal: the client then reads at every check, as for a cache that lacks it.
  func changeMark() -> UInt64? { signals ? base.changeMark() : nil }

  func load(_ scope: CacheScope) throws(CacheError) -> CachedCustomerInfo? {
    count.withLock { $0 += 1 }
    return try base.load(scope)
  }

  func access(to entitlement: String, for scope: CacheScope, policy: OfflinePolicy?)
    -> AccessDecision
  {
    count.withLock { $0 += 1 }
    return base.access(to: entitlement, for: scope, policy: policy)
  }

  func activeEntitlementKeys(for scope: CacheScope, policy: OfflinePolicy?) -> Set<String> {
    count.withLock { $0 += 1 }
    return base.activeEntitlementKeys(for: scope, policy: policy)
  }

  func evaluatedCustomerInfo(for scope: CacheScope, policy: OfflinePolicy?) throws(CacheError)
    -> EvaluatedCustomerInfo?
  {
    count.withLock { $0 += 1 }
    return try base.evaluatedCustomerInfo(for: scope, policy: policy)
  }
}
