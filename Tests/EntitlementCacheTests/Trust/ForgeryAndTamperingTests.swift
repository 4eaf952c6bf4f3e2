import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Trusted snapshots against forged answers and edited files: a clock set forward, an answer
/// dated 2099, an edit of one column, a retired key, a body edited until it does not decode.
/// Each test failed before the fix it keeps. Two attacks are the threat model's limits, not
/// defects: an edit of several columns of one row at once (a replay made to read verified) and
/// the device's own bookkeeping beyond the invariants `WholeScopeRead` checks.
@Suite("Trusted snapshots: forged answers and edited files")
struct ForgeryAndTamperingTests {
  /// No boot session: the wall clock alone, as after a reboot.
  let clock = ManualClock(Fixture.requestDate.addingTimeInterval(1))

  @Test(
    "a device clock once set forward does not refuse a genuine answer signed in time, later"
  )
  func forwardClockGlitchRefusesGenuineAnswers() throws {
    let directory = try TemporaryDirectory()
    let file = try TrustFixture.cache(in: directory, clock: clock)
    let memory = InMemoryCustomerInfoCache(
      clock: clock.cacheClock, trustRoots: try TestSigner.roots())
    for cache in [file, memory] as [any CustomerInfoCache] {
      try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
    }
    // The clock jumps to 2030 for a moment (a bad RTC at boot, a user poking at settings) and
    // one read sees it; then it is right again.
    clock.set(Fixture.date("2030-01-01T00:00:00Z"))
    for cache in [file, memory] as [any CustomerInfoCache] {
      _ = cache.access(to: "pro", for: Fixture.scopeA)
    }
    clock.set(Fixture.date("2026-11-30T13:00:00Z"))
    // The server's next answer, signed an hour later by a key valid until 2027-01-01.
    let genuine = try TrustFixture.signed(
      TrustFixture.body(requestDate: "2026-11-30T13:00:00Z"))
    for cache in [file, memory] as [any CustomerInfoCache] {
      #expect(throws: Never.self) { try cache.store(genuine, for: Fixture.scopeA) }
      #expect(
        try cache.load(Fixture.scopeA)?.snapshot?.customerInfo.requestDate
          == Fixture.date("2026-11-30T13:00:00Z"))
    }
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a forged unsigned answer dated 2099 does not keep a genuine signed answer out",
    arguments: CacheKind.allCases)
  func forgedFutureAnswerBlocksGenuineOnes(_ kind: CacheKind) throws {
    let harness = try SignedAnswerTests.harness(kind)
    harness.client.start()
    harness.runtime.runUntilIdle()
    // A man in the middle answers the first fetch of a new scope: unsigned, so failed, and
    // stored, since nothing verified is there to protect.
    let forged = ClientFixture.json(
      requestDate: Fixture.date("2099-01-01T00:00:00Z"),
      proExpiresAt: Fixture.date("2099-12-31T00:00:00Z"))
    harness.fetcher.answer(.success(FetchedCustomerInfo(body: Data(forged.utf8))))
    harness.runtime.runUntilIdle()
    harness.runtime.advance(by: .minute * 10)
    _ = harness.run { client in await client.refresh() }
    let genuine = ClientFixture.json(
      requestDate: Fixture.requestDate.addingTimeInterval(10 * .minute))
    try SignedAnswerTests.answerSigned(harness, json: genuine)
    #expect(harness.outcomes.last == "alice: stored")
    let pro = harness.cache.access(to: "pro", for: ClientFixture.identity("alice").scope)
    #expect(pro.evidence.verification == .known(.verified))
  }

  @Test("an edit of stored_at alone, to freeze server time, is tampered")
  func storedAtEditFreezesServerTime() throws {
    let directory = try TemporaryDirectory()
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
    clock.advance(by: .day * 40)  // past pro's expiresAt (2026-12-30)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    try cache.close()
    let connection = try StoreTest.connection(directory.path("cache.sqlite"))
    try connection.execute("UPDATE scope SET stored_at = 4102444800000")  // 2100
    let strict = try TrustFixture.cache(in: directory, clock: clock, requireVerified: true)
    let pro = strict.access(to: "pro", for: Fixture.scopeA)
    #expect(!(pro.isGranted && TrustFixture.verdict(pro) == .verified))
  }

  @Test("a failed snapshot dated 2099 does not set the time a genuine answer is judged by")
  func unverifiedSnapshotPoisonsArrivalTime() throws {
    let directory = try TemporaryDirectory()
    let file = try TrustFixture.cache(in: directory, clock: clock)
    let memory = InMemoryCustomerInfoCache(
      clock: clock.cacheClock, trustRoots: try TestSigner.roots())
    let forged = try CustomerInfoSnapshot(
      jsonData: TrustFixture.body(requestDate: "2099-01-01T00:00:00Z"))
    for cache in [file, memory] as [any CustomerInfoCache] {
      try cache.store(forged, for: Fixture.scopeA)  // failed(missingSignature)
      try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
      #expect(TrustFixture.verdict(cache.access(to: "pro", for: Fixture.scopeA)) == .verified)
    }
  }

  @Test("on a scope with nothing stored, a retired key cannot backdate its way to verified")
  func expiredIntermediateVerifiesOnEmptyScope() throws {
    // 2027-06-01: five months after the test intermediate's notAfter (2027-01-01).
    let late = ManualClock(Fixture.date("2027-06-01T00:00:00Z"))
    let directory = try TemporaryDirectory()
    let file = try TrustFixture.cache(in: directory, clock: late)
    let memory = InMemoryCustomerInfoCache(
      clock: late.cacheClock, trustRoots: try TestSigner.roots())
    // Whoever holds the retired key signs the request's nonce with a requestDate before
    // notAfter: the only time the check is made against.
    let backdated = try TrustFixture.signed()
    for cache in [file, memory] as [any CustomerInfoCache] {
      try cache.store(backdated, for: Fixture.scopeA)
      #expect(
        TrustFixture.verdict(cache.access(to: "lifetime", for: Fixture.scopeA))
          == .failed(.intermediateExpired))
    }
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a stored body edited until it does not decode is replaced by the next answer")
  func undecodableBodyBlocksEveryRefresh() throws {
    let harness = try SignedAnswerTests.harness(.sqlite)
    harness.client.start()
    harness.runtime.runUntilIdle()
    try SignedAnswerTests.answerSigned(harness, json: ClientFixture.json())
    let connection = try StoreTest.connection(harness.directory.path("cache.sqlite"))
    try connection.execute("UPDATE scope SET snapshot = CAST('x' AS BLOB)")
    harness.runtime.advance(by: .minute * 10)
    _ = harness.run { client in await client.refresh() }
    try SignedAnswerTests.answerSigned(
      harness,
      json: ClientFixture.json(requestDate: Fixture.requestDate.addingTimeInterval(10 * .minute)))
    #expect(harness.outcomes.last == "alice: stored")
  }

  @Test("with trust roots, load returns the library's verdict beside the body's claim")
  func loadShowsBodyClaim() throws {
    let directory = try TemporaryDirectory()
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)  // unsigned, claims verified
    #expect(
      TrustFixture.verdict(cache.access(to: "pro", for: Fixture.scopeA))
        == .failed(.missingSignature))
    // The body's claim stays what the body says; the verdict beside it is the library's.
    let loaded = try #require(try cache.load(Fixture.scopeA))
    #expect(loaded.snapshot?.customerInfo.verification == .known(.verified))
    #expect(loaded.verdict == .failed(.missingSignature))
    let memory = InMemoryCustomerInfoCache(
      clock: clock.cacheClock, trustRoots: try TestSigner.roots())
    try memory.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(try memory.load(Fixture.scopeA)?.verdict == .failed(.missingSignature))
    // Without trust roots there is no verdict.
    let plain = try Fixture.cache(in: directory, name: "plain.sqlite", clock: clock)
    try plain.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(try plain.load(Fixture.scopeA)?.verdict == nil)
  }

  @Test("dump and descriptions show no signature bytes or nonce")
  func signedMaterialPrinted() throws {
    let snapshot = try TrustFixture.signed()
    var dumped = ""
    dump(try #require(snapshot.signature), to: &dumped)
    #expect(!dumped.contains("64 elements"))
    #expect(!String(describing: snapshot).contains("[0, 1, 2, 3, 4, 5"))
    // Nor a device token the server left in deviceAccess, in the snapshot or its CustomerInfo.
    var info = ""
    dump(snapshot.customerInfo, to: &info)
    for text in [info, String(describing: snapshot.customerInfo), String(describing: snapshot)] {
      #expect(!text.contains(SampleSnapshot.deviceToken))
      #expect(!text.contains(SampleSnapshot.token))
    }
  }
}
