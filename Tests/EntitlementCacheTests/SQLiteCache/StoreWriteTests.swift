import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Writes change everything together or nothing, go to the scope they name, and record
/// refresh failures without touching access.
@Suite("Store writes")
struct StoreWriteTests {
  @Test func writeRejectedBySQLiteMidTransactionChangesNothing() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    let good = try Fixture.snapshot()
    try cache.store(good, for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)

    // Another connection makes SQLite refuse one entitlement row: the scope row's upsert has
    // already run inside the transaction when the refusal comes.
    let other = try StoreTest.connection(cache.path)
    try other.execute(
      """
      CREATE TRIGGER refuse_poison BEFORE INSERT ON entitlement WHEN new.key = 'poison'
      BEGIN SELECT RAISE(ABORT, 'poison refused'); END
      """)
    clock.advance(by: .minute)
    let poisoned = try StoreTest.snapshot(status: "revoked", key: "poison")
    let error = try #require(throws: CacheError.self) {
      try cache.store(poisoned, for: Fixture.scopeA)
    }
    guard case .storage(.store, let cause) = error else {
      Issue.record("expected a storage error, got \(error)")
      return
    }
    #expect(cause.kind == .other)
    #expect(error.sqliteCause?.resultCode == SQLITE_CONSTRAINT)
    #expect(error.description.hasPrefix("store snapshot: "))

    // Memory and file both still hold the previous snapshot and its bookkeeping.
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(cache.access(to: "poison", for: Fixture.scopeA).state == .denied(.notEntitled))
    let loaded = try #require(try cache.load(Fixture.scopeA))
    #expect(loaded.snapshot?.jsonData == good.jsonData)
    #expect(loaded.bookkeeping.storedAt == Fixture.requestDate)
    let reopened = try Fixture.cache(in: directory, name: "cache.sqlite", clock: clock)
    #expect(reopened.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(try StoreTest.connection(cache.path).scalarInt("SELECT count(*) FROM entitlement") == 2)

    // Once SQLite accepts writes again, the same cache writes normally.
    try other.execute("DROP TRIGGER refuse_poison")
    try cache.store(poisoned, for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.notEntitled))
  }

  @Test func fullDatabaseRejectsTheWriteAndKeepsThePreviousSnapshot() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    let good = try Fixture.snapshot()
    try cache.store(good, for: Fixture.scopeA)
    // Cap the file at its current size, as a full disk would; a large snapshot cannot fit.
    try cache.testingSeam.withWriter { connection in
      let pages = try connection.scalarInt("PRAGMA page_count")
      try connection.execute("PRAGMA max_page_count = \(pages)")
    }
    let large = try StoreTest.sample(
      replacing: ["padding"], with: .string(String(repeating: "y", count: 200_000)))
    let error = try #require(throws: CacheError.self) {
      try cache.store(try CustomerInfoSnapshot(jsonData: large), for: Fixture.scopeA)
    }
    guard case .storage(.store, let cause) = error else {
      Issue.record("expected a storage error, got \(error)")
      return
    }
    #expect(cause.kind == .full)
    #expect(error.sqliteCause?.resultCode == SQLITE_FULL)
    #expect(try cache.load(Fixture.scopeA)?.snapshot?.jsonData == good.jsonData)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
  }

  @Test func lateWriteForThePreviousUserLandsUnderThatUser() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    // The request for A captured A's scope when it started; the app then switched to B.
    let requestScope = Fixture.scopeA
    var current = cache.bound(to: Fixture.scopeA)
    current = cache.bound(to: Fixture.scopeB)
    #expect(current.access(to: "pro").state == .offlineUnavailable(.noSnapshot))

    clock.advance(by: .seconds(2))
    try cache.bound(to: requestScope).store(try Fixture.snapshot())

    #expect(current.access(to: "pro").state == .offlineUnavailable(.noSnapshot))
    #expect(current.activeEntitlementKeys.isEmpty)
    #expect(try current.evaluatedCustomerInfo() == nil)
    #expect(try cache.load(Fixture.scopeB) == nil)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    // Switching back finds A's access where it belongs.
    current = cache.bound(to: Fixture.scopeA)
    #expect(current.hasActiveEntitlement("pro"))
  }

  @Test func removeDeletesTheScopeAndItsRowsOnly() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeB)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)

    try cache.remove(Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    #expect(try cache.load(Fixture.scopeA) == nil)
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .granted)
    let raw = try StoreTest.connection(cache.path, readOnly: true)
    #expect(try raw.scalarInt("SELECT count(*) FROM scope") == 1)
    // Entitlement rows go with their scope (foreign key cascade).
    #expect(try raw.scalarInt("SELECT count(*) FROM entitlement") == 2)

    // Removing what is not there is not an error.
    try cache.remove(Fixture.scopeA)
    try cache.remove(Fixture.scope(user: "never-stored"))
  }

  @Test func refreshFailureWithASnapshotKeepsAccessAndReadsOffline() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.freshness == .fresh)

    clock.advance(by: .seconds(30))
    try cache.recordRefreshFailure(for: Fixture.scopeA, reason: "timeout")
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .granted)
    #expect(decision.evidence.freshness == .offline)
    #expect(decision.evidence.isComputedOffline == true)
    #expect(!decision.isHighTrust)
    let bookkeeping = try #require(try cache.load(Fixture.scopeA)?.bookkeeping)
    #expect(bookkeeping.storedAt == Fixture.requestDate)
    #expect(bookkeeping.lastRefreshAttemptAt == clock.now)
    #expect(bookkeeping.lastRefreshFailedAt == clock.now)
    #expect(bookkeeping.lastRefreshFailureReason == "timeout")
    #expect(bookkeeping.deviceHighWaterMark == clock.now)

    // The next success clears the failure.
    clock.advance(by: .seconds(30))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let after = try #require(try cache.load(Fixture.scopeA)?.bookkeeping)
    #expect(after.lastRefreshFailedAt == nil)
    #expect(after.lastRefreshFailureReason == nil)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.freshness == .fresh)
  }

  @Test func refreshFailureWithoutASnapshotStaysUnavailable() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    try cache.recordRefreshFailure(for: Fixture.scopeA, reason: nil)

    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    #expect(try cache.evaluatedCustomerInfo(for: Fixture.scopeA) == nil)
    let cached = try #require(try cache.load(Fixture.scopeA))
    #expect(cached.snapshot == nil)
    #expect(cached.bookkeeping.storedAt == nil)
    #expect(cached.bookkeeping.lastRefreshFailedAt == Fixture.requestDate)
    #expect(cached.bookkeeping.lastRefreshFailureReason == nil)

    // A later success turns the placeholder row into a normal one.
    clock.advance(by: .seconds(5))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.lastRefreshFailedAt == nil)
  }

  @Test func refreshFailureNeverMovesTheHighWaterMarkBack() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    clock.advance(by: .day * -1)
    try cache.recordRefreshFailure(for: Fixture.scopeA, reason: "clock set back")
    let bookkeeping = try #require(try cache.load(Fixture.scopeA)?.bookkeeping)
    #expect(bookkeeping.deviceHighWaterMark == Fixture.requestDate)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.clockRollbackSuspected)
  }

  @Test func replacingASnapshotDropsEntitlementsItNoLongerHas() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(cache.access(to: "lifetime", for: Fixture.scopeA).state == .granted)
    clock.advance(by: .minute)
    try cache.store(try StoreTest.snapshot(), for: Fixture.scopeA)
    #expect(cache.access(to: "lifetime", for: Fixture.scopeA).state == .denied(.notEntitled))
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA) == ["pro"])
    let reopened = try Fixture.cache(in: directory, clock: clock)
    #expect(reopened.access(to: "lifetime", for: Fixture.scopeA).state == .denied(.notEntitled))
    #expect(try StoreTest.connection(cache.path).scalarInt("SELECT count(*) FROM entitlement") == 1)
  }

  @Test func removeByHashPrefixDeletesExactlyOneScope() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeB)

    // A prefix that is empty, too short or not hex would match by accident: refused.
    for bad in ["", "abc", "xyz1"] {
      #expect(throws: InspectionError.invalidScopeHashPrefix(bad)) {
        _ = try CacheInspector(cache).removeScope(hashPrefix: bad)
      }
    }
    #expect(try StoreTest.scopeCount(cache.path) == 2)

    let prefix = Fixture.scopeA.key.hexPrefix.uppercased()
    #expect(try CacheInspector(cache).removeScope(hashPrefix: prefix) == Fixture.scopeA.key)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .granted)
    #expect(try CacheInspector(cache).removeScope(hashPrefix: prefix) == nil)
  }

  @Test func snapshotOverTheConfiguredCapIsRejectedAndChangesNothing() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let snapshot = try Fixture.snapshot()
    let cache = try Fixture.cache(in: directory, clock: clock) {
      $0.snapshotSizeLimit = snapshot.jsonData.count
    }
    try cache.store(snapshot, for: Fixture.scopeA)
    let padded = try CustomerInfoSnapshot(jsonData: snapshot.jsonData + Data("  ".utf8))
    #expect(
      throws: CacheError.invalidSnapshot(
        SnapshotError(
          path: "", problem: .tooLarge(size: padded.jsonData.count, limit: snapshot.jsonData.count))
      )
    ) {
      try cache.store(padded, for: Fixture.scopeA)
    }
    #expect(try cache.load(Fixture.scopeA)?.snapshot == snapshot)
  }

  @Test func snapshotAlteredOutsideTheLibraryIsReportedOnLoad() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try StoreTest.connection(cache.path).execute(
      "UPDATE scope SET snapshot = CAST('{\"requestDate\": 1}' AS BLOB)")
    // Found once the cache checks for other connections' writes, as every read from the file.
    _ = cache.changeMark()
    let error = try #require(throws: CacheError.self) { _ = try cache.load(Fixture.scopeA) }
    #expect(
      error
        == .unreadableSnapshot(
          SnapshotError(
            path: "requestDate", problem: .wrongType(expected: "a string", found: "a number"))))
    #expect(
      error.description
        == "stored snapshot does not decode: requestDate: expected a string, found a number")
    #expect(throws: CacheError.self) { _ = try cache.evaluatedCustomerInfo(for: Fixture.scopeA) }
  }
}
