import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Retention deletes exactly the scopes that can no longer grant anything and were not used for
/// the retention period, then the least recently used beyond the cap.
@Suite("Retention")
struct RetentionTests {
  static let start = Fixture.requestDate

  static func scope(_ name: String) -> CacheScope { Fixture.scope(user: name) }

  /// Keys of the scopes still in the file.
  static func remaining(_ cache: SQLiteCustomerInfoCache) throws -> Set<ScopeKey> {
    Set(try CacheInspector(cache).scopeSummaries().map(\.key))
  }

  /// A cache with a 10-day retention and these scopes, stored at `start` unless noted:
  /// - `expired-old`: expired a day after `start`.
  /// - `usable-old`: valid for a year.
  /// - `failed-old`: a refresh failure and no snapshot.
  /// - `revoked-old`: revoked.
  /// - `lifetime-old`: no expiry; its 30-day offline window outlives the test.
  /// - `expired-recent`: like `expired-old`, refreshed two days later (so its requestDate is
  ///   two days later too: server time is what expiry is judged by).
  static func populated(
    _ directory: TemporaryDirectory, clock: ManualClock,
    configure: (inout CacheConfiguration) -> Void = { _ in }
  ) throws -> SQLiteCustomerInfoCache {
    let cache = try Fixture.cache(in: directory, clock: clock) {
      $0.retention = 10 * .day
      configure(&$0)
    }
    try cache.store(
      try StoreTest.snapshot(expiresAt: "2026-12-01T12:00:00Z"), for: scope("expired-old"))
    try cache.store(
      try StoreTest.snapshot(expiresAt: "2027-11-30T12:00:00Z"), for: scope("usable-old"))
    try cache.recordRefreshFailure(for: scope("failed-old"), reason: nil)
    try cache.store(try StoreTest.snapshot(status: "revoked"), for: scope("revoked-old"))
    try cache.store(try StoreTest.snapshot(expiresAt: nil), for: scope("lifetime-old"))
    clock.advance(by: .seconds(2 * .day))
    try cache.store(
      try StoreTest.snapshot(
        requestDate: "2026-12-02T12:00:00Z", expiresAt: "2026-12-01T12:00:00Z",
        verifiedAt: "2026-11-30T12:00:00Z"),
      for: scope("expired-recent"))
    return cache
  }

  @Test func pruneDeletesOnlyUnusableScopesUnusedForTheRetentionPeriod() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Self.start)
    let cache = try Self.populated(directory, clock: clock)

    clock.set(Self.start.addingTimeInterval(11 * .day))
    let report = try cache.prune()
    #expect(report == PruneReport(expired: 3, overCap: 0))
    #expect(
      try Self.remaining(cache)
        == Set(["usable-old", "lifetime-old", "expired-recent"].map { Self.scope($0).key }))
    #expect(cache.access(to: "pro", for: Self.scope("usable-old")).state == .granted)
    #expect(
      cache.access(to: "pro", for: Self.scope("expired-old")).state
        == .offlineUnavailable(.noSnapshot))
  }

  @Test func retentionBoundaryIsExact() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Self.start)
    let cache = try Self.populated(directory, clock: clock)
    // `expired-recent` was last used at start + 2 days: exactly 10 days later it is kept, and
    // one millisecond after that it goes.
    clock.set(Self.start.addingTimeInterval(12 * .day))
    #expect(try cache.prune().expired == 3)
    #expect(try Self.remaining(cache).contains(Self.scope("expired-recent").key))
    clock.advance(by: .seconds(0.001))
    #expect(try cache.prune().expired == 1)
    #expect(!(try Self.remaining(cache).contains(Self.scope("expired-recent").key)))
  }

  @Test func aReadKeepsAnUnusableScopeAlive() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Self.start)
    let cache = try Self.populated(directory, clock: clock)
    clock.set(Self.start.addingTimeInterval(5 * .day))
    #expect(cache.access(to: "pro", for: Self.scope("expired-old")).state == .denied(.expired))
    clock.set(Self.start.addingTimeInterval(11 * .day))
    // The read is in memory only; prune persists it in its own transaction before judging.
    #expect(try cache.prune().expired == 2)
    #expect(try Self.remaining(cache).contains(Self.scope("expired-old").key))
  }

  @Test func purgeUnusableDeletesWhatCannotGrantWhateverItsAge() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Self.start)
    let cache = try Self.populated(directory, clock: clock)
    clock.advance(by: .seconds(1))
    #expect(try cache.purgeUnusable() == 4)
    #expect(
      try Self.remaining(cache) == Set(["usable-old", "lifetime-old"].map { Self.scope($0).key }))

    // Under a stricter policy the lifetime scope cannot grant either.
    var policy = OfflinePolicy.conservative
    policy.nonExpiringMaxOfflineAge = .minute
    #expect(try cache.purgeUnusable(policy: policy) == 1)
    #expect(try Self.remaining(cache) == [Self.scope("usable-old").key])
  }

  @Test func scopeCapEvictsTheLeastRecentlyUsedFirst() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Self.start)
    let cache = try Fixture.cache(in: directory, clock: clock) { $0.maxScopes = 2 }
    for name in ["first", "second", "third"] {
      try cache.store(try StoreTest.snapshot(), for: Self.scope(name))
      clock.advance(by: .minute)
    }
    // Reading `first` makes `second` the least recently used.
    #expect(cache.hasActiveEntitlement("pro", for: Self.scope("first")))
    clock.advance(by: .minute)
    #expect(try cache.prune() == PruneReport(expired: 0, overCap: 1))
    #expect(try Self.remaining(cache) == Set(["first", "third"].map { Self.scope($0).key }))
    #expect(
      cache.access(to: "pro", for: Self.scope("second")).state == .offlineUnavailable(.noSnapshot))
    #expect(cache.access(to: "pro", for: Self.scope("first")).state == .granted)
  }

  @Test func readsCountAsUseOnceFlushed() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Self.start)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try StoreTest.snapshot(), for: Self.scope("read"))
    clock.advance(by: .minute)
    try cache.store(try StoreTest.snapshot(), for: Self.scope("written"))
    clock.advance(by: .minute)
    _ = cache.access(to: "pro", for: Self.scope("read"))

    // Another instance sees only what is in the file: before a flush, the read is not there.
    let observer = try Fixture.cache(in: directory, clock: clock)
    func lastUsed(_ name: String) throws -> Date? {
      try CacheInspector(observer).scopeSummaries().first { $0.key == Self.scope(name).key }?
        .lastUsedAt
    }
    #expect(try lastUsed("read") == Self.start)
    try cache.flush()
    #expect(try lastUsed("read") == Self.start.addingTimeInterval(2 * .minute))

    // So an instance with a cap of one, opened now, keeps the scope that was read.
    let capped = try Fixture.cache(in: directory, clock: clock) {
      $0.maxScopes = 1
      $0.pruneOnOpen = true
    }
    #expect(try Self.remaining(capped) == [Self.scope("read").key])
  }

  @Test func pruningAtOpenAppliesBothRules() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Self.start)
    do {
      _ = try Self.populated(directory, clock: clock)
    }
    clock.set(Self.start.addingTimeInterval(11 * .day))
    let reopened = try Fixture.cache(in: directory, clock: clock) {
      $0.retention = 10 * .day
      $0.maxScopes = 2
      $0.pruneOnOpen = true
    }
    // Three unusable old scopes by age, then the least recently used of the remaining three.
    #expect(
      try Self.remaining(reopened)
        == Set(["lifetime-old", "expired-recent"].map { Self.scope($0).key }))
  }

  @Test func pruneOnOpenOffLeavesEverything() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Self.start)
    do {
      _ = try Self.populated(directory, clock: clock)
    }
    clock.set(Self.start.addingTimeInterval(100 * .day))
    let reopened = try Fixture.cache(in: directory, clock: clock) { $0.maxScopes = 1 }
    #expect(try Self.remaining(reopened).count == 6)
  }
}
