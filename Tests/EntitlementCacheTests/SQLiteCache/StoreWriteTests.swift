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

/// `close()`, and what explains an `unreadable` answer.
@Suite("Closing the cache and read-failure diagnostics")
struct CloseAndDiagnosticsTests {
  @Test func closeFlushesTheReadMarksThenRefusesEverything() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    clock.advance(by: .minute * 10)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    try cache.close()

    let observer = try Fixture.cache(in: directory, clock: clock)
    #expect(
      try observer.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark
        == Fixture.requestDate.addingTimeInterval(10 * .minute))
    #expect(
      cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.unreadable))
    #expect(cache.lastReadFailure?.error == .closed)
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    #expect(throws: CacheError.closed) {
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    }
    #expect(throws: CacheError.closed) { try cache.load(Fixture.scopeA) }
    #expect(throws: CacheError.closed) { try cache.flush() }
    try cache.close()  // a second close does nothing
    #expect(observer.access(to: "pro", for: Fixture.scopeA).state == .granted)
  }

  @Test func closeReportsAFailedFlushAndStillCloses() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock) { $0.busyTimeout = 0 }
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    clock.advance(by: .minute * 10)
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    let otherProcess = try StoreTest.connection(cache.path)
    try otherProcess.execute("BEGIN IMMEDIATE")
    let error = try #require(throws: CacheError.self) { try cache.close() }
    guard case .storage(.flush, let cause) = error else {
      Issue.record("expected a flush error, got \(error)")
      return
    }
    #expect(cause.kind == .other)
    #expect(error.sqliteCause?.isBusy == true)
    try otherProcess.execute("ROLLBACK")
    #expect(throws: CacheError.closed) { try cache.flush() }
  }

  @Test func anUnreadableAnswerKeepsItsCauseWithoutRawIdentities() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let told = Locked<[Diagnostic]>([])
    let writer = try Fixture.cache(in: directory, clock: clock)
    try writer.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let raw = try StoreTest.connection(writer.path)
    try raw.execute("UPDATE scope SET device_status = 'blocked', device_block = 'not json'")
    let reader = try Fixture.cache(in: directory, clock: clock) { configuration in
      configuration.onDiagnostic = { diagnostic in told.withLock { $0.append(diagnostic) } }
    }
    #expect(reader.lastReadFailure == nil)
    let decision = reader.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .offlineUnavailable(.unreadable))
    let report = try #require(reader.lastReadFailure)
    #expect(
      told.withLock { $0 }
        == [Diagnostic(.readFailed(report.error), scope: Fixture.scopeA, date: clock.now)])
    // The same failure again is kept, not told again.
    clock.advance(by: .seconds(1))
    #expect(reader.access(to: "pro", for: Fixture.scopeA) == decision)
    #expect(reader.lastReadFailure?.at == clock.now)
    #expect(told.withLock { $0.count } == 1)
    guard case .unreadableSnapshot = report.error else {
      Issue.record("expected an unreadable snapshot, got \(report.error)")
      return
    }
    #expect(report.scopeHashPrefix == Fixture.scopeA.key.hexPrefix)
    #expect(!report.description.contains("user-a") && !report.description.contains("sdk_live"))
  }
}

/// Read marks, the boot clock and a read's policy at the edges: a reboot, a cache that must not
/// write, a closed cache, a flush with nothing to persist. Each failed once.
@Suite("Read marks, the boot clock and a read's policy at the edges")
struct ReadMarkEdgeCaseTests {

  @Test("evaluatedCustomerInfo keeps the boot clock's measure past a reboot, as access does")
  func evaluatedViewRaisesTheBootMeasuredMark() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.t0, bootSession: "boot-1")
    let cache = try Fixture.cache(in: directory, clock: clock)
    let daily = Fixture.info([
      "pro": Fixture.entitlement(.active, expiresAt: Fixture.at(.day))
    ])
    try cache.store(try CustomerInfoSnapshot(daily), for: Fixture.scopeA)
    clock.set(Fixture.at(-20 * .day))
    clock.advance(by: .seconds(2 * .day))
    let view = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(view.decisions["pro"]?.state == .denied(.expired))
    try cache.flush()
    clock.reboot(session: "boot-2")
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    #expect(
      try Fixture.cache(in: directory, clock: clock).access(to: "pro", for: Fixture.scopeA).state
        == .denied(.expired))
  }

  @Test("a cache that must not persist read marks does not, not even with its next write")
  func readMarksStayInMemoryWhenTheConfigurationSaysSo() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.t0)
    let app = try Fixture.cache(in: directory, clock: clock)
    try app.store(
      try CustomerInfoSnapshot(Fixture.info(["pro": Fixture.monthly])), for: Fixture.scopeA)
    let toolClock = ManualClock(Fixture.at(365 * .day))
    let tool = try Fixture.cache(in: directory, clock: toolClock) {
      $0.persistsReadTimeBookkeeping = false
    }
    #expect(tool.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    try tool.recordRefreshFailure(for: Fixture.scopeB, reason: nil)
    try tool.flush()
    try tool.close()
    #expect(try app.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark == Fixture.t0)
    clock.advance(by: .seconds(.minute))
    let decision = try Fixture.cache(in: directory, clock: clock).access(
      to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .granted)
    #expect(!decision.evidence.clockRollbackSuspected)
  }

  @Test("a clock of the app's own keeps the system boot clock unless told otherwise")
  func customClockKeepsTheBootClock() {
    let custom = CacheClock(now: { Date() })
    #if os(Linux)
      #expect(custom.bootInstant() != nil)
    #endif
    #expect(CacheClock.fixed(Fixture.t0).bootInstant() == nil)
    #expect(CacheClock(now: { Date() }, bootInstant: { nil }).bootInstant() == nil)
  }

  @Test("a policy passed to a read is checked: out of range it fails closed, never open")
  func perCallPolicyIsChecked() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.t0)
    let cache = try Fixture.cache(in: directory, clock: clock)
    let lifetime = Fixture.info(["pro": Fixture.entitlement(.active)])
    try cache.store(try CustomerInfoSnapshot(lifetime), for: Fixture.scopeA)
    var broken = OfflinePolicy.conservative
    broken.nonExpiringMaxOfflineAge = .nan
    clock.advance(by: .seconds(400 * .day))
    let decision = cache.access(to: "pro", for: Fixture.scopeA, policy: broken)
    #expect(decision.state == .offlineUnavailable(.unreadable))
    #expect(
      cache.lastReadFailure?.error
        == .invalidConfiguration(
          field: "policy.nonExpiringMaxOfflineAge", problem: "must be a finite number of seconds"))
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA, policy: broken).isEmpty)
    #expect(throws: CacheError.self) {
      try cache.evaluatedCustomerInfo(for: Fixture.scopeA, policy: broken)
    }
    #expect(throws: CacheError.self) { try cache.purgeUnusable(policy: broken) }
    #expect(throws: CacheError.self) {
      try CacheInspector(cache).scopeSummaries(policy: broken)
    }
    #expect(try cache.load(Fixture.scopeA) != nil, "nothing was purged")
  }

  @Test("after close the inspector says closed, never that the file is empty")
  func inspectorAfterCloseThrows() throws {
    let directory = try TemporaryDirectory()
    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.t0))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try cache.close()
    #expect(throws: CacheError.closed) { try CacheInspector(cache).scopeSummaries() }
    #expect(throws: InspectionError.cache(.closed)) {
      try CacheInspector(cache).removeScope(hashPrefix: Fixture.scopeA.key.hexPrefix)
    }
  }

  @Test("flushing with nothing to persist opens no transaction, so another writer cannot block it")
  func emptyFlushOpensNoTransaction() throws {
    let directory = try TemporaryDirectory()
    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.t0)) {
      $0.busyTimeout = 0
    }
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    let otherProcess = try StoreTest.connection(cache.path)
    try otherProcess.execute("BEGIN IMMEDIATE")
    try cache.flush()
    try cache.close()
    try otherProcess.execute("ROLLBACK")
  }
}
