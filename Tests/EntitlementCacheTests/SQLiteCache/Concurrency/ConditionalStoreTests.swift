import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The rule book of `storeAnswer`, decided against what the file holds when the write begins,
/// not against what an instance read earlier.
@Suite("Conditional store: never backwards, decided inside the write")
struct ConditionalStoreTests {
  static func answer(at requestDate: Date) throws -> CustomerInfoSnapshot {
    try Fixture.snapshot(SampleSnapshot.single(requestDate: ISO8601.format(requestDate)))
  }

  /// Both instances read the first answer into memory; then one stores an answer and the
  /// other one of another age, in both orders. Whatever the second instance last read, the
  /// newer answer is what remains, and both instances read it.
  @Test(
    "two instances on one file store answers of interleaved ages: the newest remains",
    arguments: [true, false])
  func twoInstances(newerFirst: Bool) throws {
    let directory = try TemporaryDirectory()
    let start = Fixture.requestDate
    let clock = ManualClock(start)
    let path = directory.path("cache.sqlite")
    let first = try SQLiteCustomerInfoCache(path: path, clock: clock.cacheClock)
    let second = try SQLiteCustomerInfoCache(path: path, clock: clock.cacheClock)
    let scope = Fixture.scopeA
    #expect(try first.storeAnswer(Self.answer(at: start), for: scope) == .stored)
    #expect(second.access(to: "pro", for: scope).isGranted)
    #expect(first.access(to: "pro", for: scope).isGranted)
    clock.advance(by: .minute)

    let (older, newer) = (start.addingTimeInterval(10), start.addingTimeInterval(20))
    if newerFirst {
      #expect(try second.storeAnswer(Self.answer(at: newer), for: scope) == .stored)
      // `first` last read the answer at `start`: the file's newer one still wins.
      #expect(try first.storeAnswer(Self.answer(at: older), for: scope) == .discardedOlder)
    } else {
      #expect(try second.storeAnswer(Self.answer(at: older), for: scope) == .stored)
      #expect(try first.storeAnswer(Self.answer(at: newer), for: scope) == .stored)
    }
    for cache in [first, second] {
      // Each has checked for the other's write, as a change signal does.
      _ = cache.changeMark()
      #expect(try cache.load(scope)?.snapshot?.customerInfo.requestDate == newer)
    }
  }

  @Test("the rule book refuses older answers and failed claims over verified ones, nothing else")
  func ruleBook() throws {
    let start = Fixture.requestDate
    func refusal(
      of answer: CustomerInfoSnapshot, verdict: TrustVerdict?, over stored: StoredAnswer?,
      hasTrustRoots: Bool = false
    ) -> StoreOutcome? {
      ConditionalStore.refusal(
        of: answer, verdict: verdict, over: stored, hasTrustRoots: hasTrustRoots,
        conditional: true, now: start)
    }
    let stored = StoredAnswer(
      requestDate: start, claimed: .known(.verified), writerVerdict: nil, isImported: false)
    let older = try Self.answer(at: start.addingTimeInterval(-1))
    let same = try Self.answer(at: start)
    #expect(refusal(of: older, verdict: nil, over: stored) == .discardedOlder)
    #expect(refusal(of: same, verdict: nil, over: stored) == nil)
    #expect(refusal(of: older, verdict: nil, over: nil) == nil)
    // However old an answer is, a stored date the device's clock has reached holds it back.
    let yearOlder = try Self.answer(at: start.addingTimeInterval(-365 * .day))
    #expect(refusal(of: yearOlder, verdict: nil, over: stored) == .discardedOlder)
    // A stored date ahead of both the answer and the clock holds it back up to a day ahead;
    // a second more, and it is no date a server gave.
    let lead = ConditionalStore.implausibleLead
    for (ahead, outcome) in [(lead, StoreOutcome?.some(.discardedOlder)), (lead + 1, nil)] {
      let future = StoredAnswer(
        requestDate: start.addingTimeInterval(ahead), claimed: .known(.verified),
        writerVerdict: nil, isImported: false)
      #expect(refusal(of: same, verdict: nil, over: future) == outcome, "\(ahead) s ahead")
    }
    // A snapshot that does not hold back (failed with trust roots) keeps nothing out.
    #expect(refusal(of: older, verdict: nil, over: stored, hasTrustRoots: true) == nil)
    let verifiedByRoots = StoredAnswer(
      requestDate: start, claimed: .known(.verified), writerVerdict: .verified, isImported: false)
    let later = try Self.answer(at: start.addingTimeInterval(1))
    #expect(
      refusal(
        of: later, verdict: .failed(.signatureMismatch), over: verifiedByRoots,
        hasTrustRoots: true)
        == .refusedUnverified(.signatureMismatch))
    #expect(
      refusal(of: later, verdict: .verified, over: verifiedByRoots, hasTrustRoots: true) == nil)
  }

  /// A body dated in year 9999 (a server clock that jumped, or a forged date without trust
  /// roots) was stored; every genuine answer after it is "older". Each cache lets the next
  /// genuine answer replace it, rather than keep the scope frozen on the bad date for good.
  @Test("a snapshot dated in year 9999 does not hold back the next genuine answer")
  func farFutureDateDoesNotFreezeTheScope() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let caches: [any CustomerInfoCache] = [
      try SQLiteCustomerInfoCache(path: directory.path("cache.sqlite"), clock: clock.cacheClock),
      InMemoryCustomerInfoCache(clock: clock.cacheClock),
    ]
    let farFuture = try #require(ISO8601.parse("9999-12-31T00:00:00Z"))
    for cache in caches {
      #expect(try cache.storeAnswer(Self.answer(at: farFuture), for: Fixture.scopeA) == .stored)
      clock.advance(by: .minute)
      let genuine = clock.now
      #expect(try cache.storeAnswer(Self.answer(at: genuine), for: Fixture.scopeA) == .stored)
      #expect(try cache.load(Fixture.scopeA)?.snapshot?.customerInfo.requestDate == genuine)
      #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    }
  }
}
