import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// What the in-memory cache does beyond the contract: its own configuration, and where it
/// differs from the SQLite cache on purpose.
@Suite("InMemoryCustomerInfoCache")
struct InMemoryCustomerInfoCacheTests {

  @Test("the doc comment's example: a unit test moves time, the decision follows")
  func documentedExample() throws {
    let clock = ManualClock(Fixture.t0)
    let cache = InMemoryCustomerInfoCache(clock: clock.cacheClock)
    let tomorrow = Fixture.info([
      "pro": Fixture.entitlement(.active, expiresAt: Fixture.at(.day))
    ])
    try cache.store(try CustomerInfoSnapshot(tomorrow), for: Fixture.scopeA)
    #expect(cache.hasActiveEntitlement("pro", for: Fixture.scopeA))
    #expect(cache.bound(to: Fixture.scopeA).activeEntitlementKeys == ["pro"])
    clock.advance(by: .seconds(2 * .day))
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
  }

  @Test("load shows the high-water mark reads raised at once: memory is the only storage")
  func readsRaiseTheLoadedMark() throws {
    let clock = ManualClock(Fixture.t0)
    let cache = InMemoryCustomerInfoCache(clock: clock.cacheClock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    clock.advance(by: .seconds(.hour))
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    let loaded = try #require(try cache.load(Fixture.scopeA))
    #expect(loaded.bookkeeping.deviceHighWaterMark == Fixture.at(.hour))
    #expect(loaded.bookkeeping.storedAt == Fixture.t0)
  }

  @Test("writes keep milliseconds, as the file does; reads keep the clock's own instant")
  func millisecondTimes() throws {
    let clock = ManualClock(Fixture.t0.addingTimeInterval(0.000_7))
    let cache = InMemoryCustomerInfoCache(clock: clock.cacheClock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.storedAt == Fixture.t0)
    clock.advance(by: .seconds(1.000_4))
    try cache.recordRefreshFailure(for: Fixture.scopeA, reason: nil)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.lastRefreshFailedAt == Fixture.at(1.001))
  }

  @Test("the size limit is the init's: one byte over is rejected, naming size and limit")
  func sizeLimit() throws {
    let snapshot = try Fixture.snapshot()
    let size = snapshot.jsonData.count
    let tight = InMemoryCustomerInfoCache(snapshotSizeLimit: size - 1, clock: .fixed(Fixture.t0))
    #expect(
      throws: CacheError.invalidSnapshot(
        SnapshotError(path: "", problem: .tooLarge(size: size, limit: size - 1)))
    ) { try tight.store(snapshot, for: Fixture.scopeA) }
    #expect(try tight.load(Fixture.scopeA) == nil)
    let exact = InMemoryCustomerInfoCache(snapshotSizeLimit: size, clock: .fixed(Fixture.t0))
    try exact.store(snapshot, for: Fixture.scopeA)
    #expect(try exact.load(Fixture.scopeA)?.bookkeeping.snapshotSize == size)
  }

  @Test("a policy out of range, its own or a read's, fails closed as the SQLite cache's does")
  func outOfRangePolicy() throws {
    var broken = OfflinePolicy.conservative
    broken.nonExpiringMaxOfflineAge = .nan
    let clock = ManualClock(Fixture.t0)
    let lifetime = try CustomerInfoSnapshot(Fixture.info(["pro": Fixture.entitlement(.active)]))
    let ownPolicy = InMemoryCustomerInfoCache(policy: broken, clock: clock.cacheClock)
    let goodPolicy = InMemoryCustomerInfoCache(clock: clock.cacheClock)
    for cache in [ownPolicy, goodPolicy] {
      try cache.store(lifetime, for: Fixture.scopeA)
    }
    clock.advance(by: .seconds(400 * .day))
    #expect(
      ownPolicy.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.unreadable))
    #expect(ownPolicy.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    #expect(throws: CacheError.self) { try ownPolicy.evaluatedCustomerInfo(for: Fixture.scopeA) }
    #expect(
      goodPolicy.access(to: "pro", for: Fixture.scopeA, policy: broken).state
        == .offlineUnavailable(.unreadable))
    #expect(
      goodPolicy.access(to: "pro", for: Fixture.scopeA).state == .denied(.offlineWindowElapsed))
  }

  @Test("a snapshot built in code with sub-millisecond dates is decided as stored, in every read")
  func subMillisecondDates() throws {
    // pro ends 0.4 ms after the day's boundary; the stored JSON keeps milliseconds, so it ends
    // on the boundary. Every read must agree, on both caches.
    let end = Fixture.at(.day).addingTimeInterval(0.000_4)
    let snapshot = try CustomerInfoSnapshot(
      Fixture.info(["pro": Fixture.entitlement(.active, expiresAt: end)]))
    let clock = ManualClock(Fixture.t0)
    let directory = try TemporaryDirectory()
    let sqlite = try Fixture.cache(in: directory, clock: clock)
    let memory = InMemoryCustomerInfoCache(clock: clock.cacheClock)
    for cache in [sqlite, memory] as [any CustomerInfoCache] {
      try cache.store(snapshot, for: Fixture.scopeA)
    }
    clock.set(Fixture.at(.day))
    let memoryView = try #require(try memory.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(memory.access(to: "pro", for: Fixture.scopeA) == memoryView.decisions["pro"])
    #expect(memory.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    let sqliteView = try #require(try sqlite.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(sqliteView == memoryView)
    // A snapshot built in code is the encoding read back, to the millisecond, so the SQLite
    // cache's memory decides as its stored bytes do (this was a known issue until then).
    #expect(sqlite.access(to: "pro", for: Fixture.scopeA) == sqliteView.decisions["pro"])
    #expect(
      sqlite.access(to: "pro", for: Fixture.scopeA)
        == memory.access(to: "pro", for: Fixture.scopeA))
    #expect(
      try Fixture.cache(in: directory, clock: clock).access(to: "pro", for: Fixture.scopeA)
        == memory.access(to: "pro", for: Fixture.scopeA),
      "a second SQLite instance reads the file and agrees with the in-memory cache")
  }

  @Test("reads and writes from many tasks at once: nothing lost, nothing torn")
  func concurrentUse() async throws {
    let clock = ManualClock(Fixture.t0)
    let cache = InMemoryCustomerInfoCache(clock: clock.cacheClock)
    let snapshot = try Fixture.snapshot()
    let scopes = (0..<8).map { Fixture.scope(user: "user-\($0)") }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for scope in scopes {
        group.addTask {
          for round in 0..<200 {
            if round.isMultiple(of: 10) {
              try cache.store(snapshot, for: scope)
            } else if round.isMultiple(of: 7) {
              try cache.recordRefreshFailure(for: scope, reason: "timeout")
            } else {
              _ = cache.access(to: "pro", for: scope)
              _ = try cache.evaluatedCustomerInfo(for: scope)
            }
          }
        }
      }
      try await group.waitForAll()
    }
    for scope in scopes {
      #expect(cache.access(to: "pro", for: scope).isGranted)
    }
  }
}
