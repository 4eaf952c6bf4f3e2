import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Every read answers from what memory holds for a scope: the facts that decide each key, and
/// the body, decoded once per stored snapshot. `evaluatedCustomerInfo` and `load` agree with
/// `access(to:)` because they read the same thing, not because two readers happen to agree.
@Suite("Every read from what memory holds, the body decoded once")
struct ReadFromMemoryTests {
  let clock = ManualClock(Fixture.requestDate.addingTimeInterval(1), bootSession: "boot-1")

  func cache(
    _ directory: TemporaryDirectory, trusted: Bool
  ) throws -> SQLiteCustomerInfoCache {
    trusted
      ? try TrustFixture.cache(in: directory, clock: clock, checkInterval: .hour)
      : try Fixture.cache(in: directory, clock: clock) { $0.changeCheckInterval = .hour }
  }

  @Test(
    "the write's own body answers every later read: nothing is decoded", arguments: [false, true])
  func writeInstallsTheBody(trusted: Bool) throws {
    let directory = try TemporaryDirectory()
    let cache = try cache(directory, trusted: trusted)
    let snapshot = try TrustFixture.signed()
    try cache.store(snapshot, for: Fixture.scopeA)
    for _ in 0..<50 {
      clock.advance(by: .minute)
      #expect(try cache.evaluatedCustomerInfo(for: Fixture.scopeA) != nil)
      #expect(try cache.load(Fixture.scopeA)?.snapshot == snapshot)
    }
    #expect(cache.testingSeam.bodyDecodes == 0)

    // What memory answers is what the file holds: a new instance reads the same.
    let reopened = try self.cache(directory, trusted: trusted)
    let fromMemory = try #require(try cache.load(Fixture.scopeA))
    let fromFile = try #require(try reopened.load(Fixture.scopeA))
    #expect(fromFile.snapshot == fromMemory.snapshot)
    #expect(fromFile.verdict == fromMemory.verdict)
    var memoryBookkeeping = fromMemory.bookkeeping
    // The only difference: the reads here raised the mark, which is not flushed yet.
    #expect(memoryBookkeeping.deviceHighWaterMark > fromFile.bookkeeping.deviceHighWaterMark)
    memoryBookkeeping.deviceHighWaterMark = fromFile.bookkeeping.deviceHighWaterMark
    #expect(memoryBookkeeping == fromFile.bookkeeping)
    let memoryEvaluation = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    let fileEvaluation = try #require(try reopened.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(fileEvaluation.customerInfo == memoryEvaluation.customerInfo)
    #expect(fileEvaluation.decisions == memoryEvaluation.decisions)
    #expect(reopened.testingSeam.bodyDecodes == 1)
  }

  @Test("a body read from the file is decoded once per stored snapshot", arguments: [false, true])
  func oneDecodePerStoredSnapshot(trusted: Bool) throws {
    let directory = try TemporaryDirectory()
    let writer = try cache(directory, trusted: trusted)
    try writer.store(try TrustFixture.signed(), for: Fixture.scopeA)
    let reader = try cache(directory, trusted: trusted)
    for _ in 0..<20 {
      clock.advance(by: .seconds(1))
      _ = reader.access(to: "pro", for: Fixture.scopeA)
      #expect(try reader.evaluatedCustomerInfo(for: Fixture.scopeA)?.freshness == .fresh)
      _ = try reader.load(Fixture.scopeA)
    }
    #expect(reader.testingSeam.bodyDecodes == 1)

    // A failed refresh moves the row's version, not its body: read again, not decoded again.
    try reader.recordRefreshFailure(for: Fixture.scopeA, reason: "timeout")
    #expect(try reader.evaluatedCustomerInfo(for: Fixture.scopeA)?.freshness == .offline)
    #expect(try reader.load(Fixture.scopeA)?.bookkeeping.lastRefreshFailureReason == "timeout")
    #expect(reader.testingSeam.bodyDecodes == 1)

    // Another instance stores a new snapshot: once the reader checks, it decodes that one.
    let later = TrustFixture.body(requestDate: "2026-11-30T12:05:00Z")
    try writer.store(try TrustFixture.signed(later), for: Fixture.scopeA)
    _ = reader.changeMark()
    for _ in 0..<5 {
      let evaluated = try #require(try reader.evaluatedCustomerInfo(for: Fixture.scopeA))
      #expect(
        evaluated.customerInfo.requestDate == Fixture.requestDate.addingTimeInterval(5 * .minute))
      #expect(evaluated.freshness == .fresh)
    }
    #expect(reader.testingSeam.bodyDecodes == 2)
  }

  @Test("every key of an evaluated CustomerInfo decides as access(to:) does", arguments: [0, 1, 2])
  func evaluatedDecisionsAreAccessDecisions(instant: Int) throws {
    let directory = try TemporaryDirectory()
    let cache = try cache(directory, trusted: false)
    try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
    // Fresh, stale, and past the sample's expiries.
    clock.advance(by: .seconds([.minute, 2 * .day, 400 * .day][instant]))
    let evaluated = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.decisions.count > 1)
    for (key, decision) in evaluated.decisions {
      #expect(cache.access(to: key, for: Fixture.scopeA) == decision, "\(key)")
    }
  }

  @Test("without trust roots the rows decide every read, evaluated ones included")
  func rowsDecideEveryRead() throws {
    let directory = try TemporaryDirectory()
    let writer = try cache(directory, trusted: false)
    try writer.store(try Fixture.snapshot(), for: Fixture.scopeA)
    // Another tool edits the row behind the body's back: the entitlement ended yesterday.
    let yesterday = Fixture.requestDate.addingTimeInterval(-.day)
    try StoreTest.connection(writer.path).execute(
      "UPDATE entitlement SET expires_at = \(yesterday.unixMilliseconds) WHERE key = 'pro'")
    let reader = try cache(directory, trusted: false)
    let decision = reader.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    let evaluated = try #require(try reader.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.decisions["pro"] == decision)
    #expect(evaluated.customerInfo.entitlements["pro"]?.status == .known(.expired))
  }
}
