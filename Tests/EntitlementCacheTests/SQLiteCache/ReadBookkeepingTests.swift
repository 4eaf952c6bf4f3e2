import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Reads raise the high-water mark and the last-use time in memory and persist them lazily:
/// never a write per read, never lost at close.
@Suite("Read bookkeeping")
struct ReadBookkeepingTests {
  /// The file's change counter as another connection sees it.
  static func dataVersion(_ connection: SQLiteConnection) throws -> Int64 {
    try connection.scalarInt("PRAGMA data_version")
  }

  @Test func readsDoNotWriteUntilFlushed() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let observer = try StoreTest.connection(cache.path, readOnly: true)
    let before = try Self.dataVersion(observer)

    for _ in 0..<100 {
      clock.advance(by: .minute)
      _ = cache.access(to: "pro", for: Fixture.scopeA)
      _ = cache.activeEntitlementKeys(for: Fixture.scopeA)
    }
    _ = try cache.evaluatedCustomerInfo(for: Fixture.scopeA)
    #expect(try Self.dataVersion(observer) == before)
    #expect(try StoreTest.persistedHighWaterMark(cache.path, Fixture.scopeA) == Fixture.requestDate)
    // The cache's own answer holds what its reads saw, flushed or not.
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark == clock.now)

    try cache.flush()
    #expect(try Self.dataVersion(observer) != before)
    #expect(try StoreTest.persistedHighWaterMark(cache.path, Fixture.scopeA) == clock.now)
    let lastUsed = try CacheInspector(cache).scopeSummaries().first?.lastUsedAt
    #expect(lastUsed == clock.now)
  }

  @Test func highWaterMarkRaisedByReadsSurvivesCloseAndGuardsTheNextRun() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let halfDay = try StoreTest.snapshot(expiresAt: "2026-12-01T00:00:00Z")
    do {
      let cache = try Fixture.cache(in: directory, clock: clock)
      try cache.store(halfDay, for: Fixture.scopeA)
      clock.advance(by: .day)
      #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
      // No flush: closing the cache persists what reads saw.
    }
    // The device clock is set back to before the expiry; the file remembers a later time.
    clock.set(Fixture.requestDate)
    let reopened = try Fixture.cache(in: directory, clock: clock)
    let decision = reopened.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.clockRollbackSuspected)
    let evaluated = try #require(try reopened.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.customerInfo.entitlements["pro"]?.status == .known(.expired))
  }

  @Test func aDroppedResidentHandsItsUnpersistedReadTimeToTheNextRead() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(
      try StoreTest.snapshot(expiresAt: "2026-12-01T00:00:00Z"), for: Fixture.scopeA)
    clock.advance(by: .day)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))

    // The next read goes to the file, whose mark is still the write's; the clock is set back.
    cache.dropResidentState(for: Fixture.scopeA)
    clock.set(Fixture.requestDate)
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.clockRollbackSuspected)
    #expect(try StoreTest.persistedHighWaterMark(cache.path, Fixture.scopeA) == Fixture.requestDate)
    #expect(
      try cache.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark
        == Fixture.requestDate.addingTimeInterval(.day))
  }

  @Test func aWriteCarriesPendingReadBookkeepingOfOtherScopes() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    clock.advance(by: .minute * 10)
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    clock.advance(by: .seconds(1))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeB)
    let summaries = try CacheInspector(cache).scopeSummaries()
    let scopeA = try #require(summaries.first { $0.key == Fixture.scopeA.key })
    #expect(scopeA.lastUsedAt == Fixture.requestDate.addingTimeInterval(10 * .minute))
    #expect(
      scopeA.bookkeeping.deviceHighWaterMark == Fixture.requestDate.addingTimeInterval(10 * .minute)
    )
  }

  /// Last use only moves forward; the device mark belongs to one refresh, and a refresh at a
  /// clock set back resets it to the refresh's own time (<doc:TimeModel>), where its
  /// offset to the server's time takes over.
  @Test func clockSetBackMovesLastUseNeverBackAndARefreshResetsTheMark() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    clock.advance(by: .hour)
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    try cache.flush()
    clock.set(Fixture.requestDate.addingTimeInterval(-.day))
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let bookkeeping = try #require(try cache.load(Fixture.scopeA)?.bookkeeping)
    #expect(bookkeeping.deviceHighWaterMark == clock.now)
    #expect(bookkeeping.storedAt == clock.now)
    #expect(bookkeeping.serverOffset == .day)
    #expect(
      try CacheInspector(cache).scopeSummaries().first?.lastUsedAt
        == Fixture.requestDate.addingTimeInterval(.hour))
  }

  /// The file keeps times to the millisecond, so a read's marks are floored before they are
  /// held: a mark a fraction of a millisecond ahead of a clock then read 0.3 ms earlier made
  /// a rollback with no tolerance, and a later estimate of the server's time, until a flush
  /// or a reopen read the floored mark back (the stateful fuzz target found it, comparing
  /// loads after a flush with the reference cache's).
  @Test func aReadMarkIsKeptToTheMillisecondSoAFlushOrAReopenChangesNoDecision() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    var noTolerance = OfflinePolicy.conservative
    noTolerance.clockRollbackTolerance = 0
    let memory = InMemoryCustomerInfoCache(policy: noTolerance, clock: clock.cacheClock)
    let decisions: [AccessDecision]
    do {
      let cache = try Fixture.cache(in: directory, clock: clock) { $0.policy = noTolerance }
      for target in [cache, memory] as [any CustomerInfoCache] {
        try target.store(try Fixture.snapshot(), for: Fixture.scopeA)
      }
      clock.advance(by: .seconds(60.000_5))
      _ = cache.access(to: "pro", for: Fixture.scopeA)
      _ = memory.access(to: "pro", for: Fixture.scopeA)
      clock.advance(by: .seconds(-0.000_3))
      let held = cache.access(to: "pro", for: Fixture.scopeA)
      try cache.flush()
      let flushed = try #require(try cache.load(Fixture.scopeA)?.bookkeeping)
      #expect(flushed.deviceHighWaterMark == Fixture.requestDate.addingTimeInterval(.minute))
      #expect(try memory.load(Fixture.scopeA)?.bookkeeping == flushed)
      decisions = [held, memory.access(to: "pro", for: Fixture.scopeA)]
    }
    let reopened = try Fixture.cache(in: directory, clock: clock) { $0.policy = noTolerance }
    let afterReopen = reopened.access(to: "pro", for: Fixture.scopeA)
    #expect(decisions == [afterReopen, afterReopen])
    #expect(!afterReopen.evidence.clockRollbackSuspected)
  }
}

/// A read that learns nothing new leaves nothing to persist, so releasing or closing a cache
/// that only read writes nothing (a write transaction there cost a cold start several syncs).
@Suite("Read marks that move nothing")
struct UnmovedReadMarksTests {
  @Test func aReadAtTheFilesLastUseLeavesNothingToPersist() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let writer = try Fixture.cache(in: directory, clock: clock)
    try writer.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try writer.close()

    let reader = try Fixture.cache(in: directory, clock: clock)
    #expect(reader.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(reader.testingSeam.unpersistedMarks.isEmpty)
    clock.advance(by: .seconds(1))
    _ = reader.access(to: "pro", for: Fixture.scopeA)
    #expect(reader.testingSeam.unpersistedMarks[Fixture.scopeA.key]?.lastUsedAt == clock.now)
  }
}
