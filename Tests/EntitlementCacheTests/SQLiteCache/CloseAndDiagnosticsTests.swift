import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

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
    #expect(
      !report.description.contains(SampleScope.userA) && !report.description.contains("sdk_live"))
  }
}
