import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Trusted snapshots through a cache (<doc:TrustedSnapshots>).
@Suite("Trusted snapshots: verified on store, checked again from disk")
struct TrustedSnapshotTests {
  let clock = ManualClock(Fixture.requestDate.addingTimeInterval(1), bootSession: "boot-1")

  @Test("a signed snapshot is verified on store, from memory and by a new instance")
  func verifiedOnStoreAndFromDisk() throws {
    let directory = try TemporaryDirectory()
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.isGranted && decision.isHighTrust)
    #expect(TrustFixture.verdict(decision) == .verified)
    let reopened = try TrustFixture.cache(in: directory, clock: clock)
    #expect(TrustFixture.verdict(reopened.access(to: "pro", for: Fixture.scopeA)) == .verified)
    #expect(try reopened.verifySnapshot(for: Fixture.scopeA) == .verified)
    let evaluated = try #require(try reopened.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.customerInfo.verification == .known(.verified))
    #expect(evaluated.verificationFailure == nil)
    #expect(evaluated.decisions["pro"]?.isHighTrust == true)
    // What load returns carries the signed material, so it can be stored elsewhere verified.
    let loaded = try #require(try reopened.load(Fixture.scopeA)?.snapshot)
    #expect(loaded.signature == (try TrustFixture.signed()).signature)
    #expect(loaded.requestNonce == TestSigner.nonce)
    #expect(try reopened.verifySnapshot(for: Fixture.scopeB) == nil)
  }

  @Test("with trust roots the body's own verification field is ignored")
  func bodyClaimIgnored() throws {
    let directory = try TemporaryDirectory()
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    // Unsigned, though the body says verified.
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let unsigned = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(TrustFixture.verdict(unsigned) == .failed(.missingSignature))
    #expect(unsigned.isGranted && !unsigned.isHighTrust)
    let evaluated = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.customerInfo.verification == .known(.failed))
    #expect(evaluated.verificationFailure == .missingSignature)
    // Signed, though the body says failed.
    let failedClaim = Data(
      SampleSnapshot.json.replacingOccurrences(
        of: #""verification": "verified""#, with: #""verification": "failed""#
      ).utf8)
    try cache.store(try TrustFixture.signed(failedClaim), for: Fixture.scopeA)
    #expect(TrustFixture.verdict(cache.access(to: "pro", for: Fixture.scopeA)) == .verified)
    let reopened = try TrustFixture.cache(in: directory, clock: clock)
    #expect(TrustFixture.verdict(reopened.access(to: "pro", for: Fixture.scopeA)) == .verified)
  }

  @Test(
    "a snapshot signed for another scope fails scopeMismatch",
    arguments: [
      ("another user", Fixture.scopeB),
      ("sandbox stored under production", Fixture.scope(environment: .sandbox)),
      ("another installation", Fixture.scope(installation: "install-2")),
      ("another SDK key", Fixture.scope(sdkKey: "sdk_live_other")),
    ])
  func scopeMismatch(_ label: String, signedFor: CacheScope) throws {
    let directory = try TemporaryDirectory()
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    try cache.store(try TrustFixture.signed(for: signedFor), for: Fixture.scopeA)
    #expect(
      TrustFixture.verdict(cache.access(to: "pro", for: Fixture.scopeA))
        == .failed(.scopeMismatch), "\(label)")
    let reopened = try TrustFixture.cache(in: directory, clock: clock)
    #expect(try reopened.verifySnapshot(for: Fixture.scopeA) == .failed(.scopeMismatch))
  }

  @Test("a nonce other than the request's fails nonceMismatch, and still does from disk")
  func nonceMismatch() throws {
    let directory = try TemporaryDirectory()
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    let other = Array(repeating: UInt8(7), count: 16)
    try cache.store(try TrustFixture.signed(requestNonce: other), for: Fixture.scopeA)
    #expect(
      TrustFixture.verdict(cache.access(to: "pro", for: Fixture.scopeA))
        == .failed(.nonceMismatch))
    let reopened = try TrustFixture.cache(in: directory, clock: clock)
    #expect(try reopened.verifySnapshot(for: Fixture.scopeA) == .failed(.nonceMismatch))
    // A snapshot whose request sent no nonce has nothing to compare.
    try cache.store(try TrustFixture.signed(requestNonce: nil), for: Fixture.scopeB.self)
    #expect(try cache.verifySnapshot(for: Fixture.scopeB) == .failed(.scopeMismatch))
    try cache.store(
      try TrustFixture.signed(for: Fixture.scopeB, requestNonce: nil), for: Fixture.scopeB)
    #expect(try cache.verifySnapshot(for: Fixture.scopeB) == .verified)
  }

  @Test("an intermediate expired by the trusted server time fails, with the clock set back")
  func expiredIntermediateWithClockSetBack() throws {
    let directory = try TemporaryDirectory()
    // The key may sign until 2026-12-10; the first answer is signed in time.
    let certificate = try TestSigner.certificate(notAfter: Fixture.date("2026-12-10T00:00:00Z"))
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    try cache.store(try TrustFixture.signed(certificate: certificate), for: Fixture.scopeA)
    #expect(try cache.verifySnapshot(for: Fixture.scopeA) == .verified)
    // Twenty days pass on the device (its boot clock measures them), then the clock is set
    // back to the day of the first answer.
    clock.advance(by: .day * 20)
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    clock.set(Fixture.requestDate.addingTimeInterval(.hour))
    // An answer from that key, dated before it expired, arriving now: by the trusted server
    // time the key had expired, so it cannot vouch for what arrives now.
    let replayed = try TrustFixture.signed(
      TrustFixture.body(requestDate: "2026-12-05T12:00:00Z"), certificate: certificate)
    #expect(throws: CacheError.unverifiedSnapshot(.intermediateExpired)) {
      try cache.store(replayed, for: Fixture.scopeA)
    }
    // The snapshot it signed in time is kept and still verified: the key's expiry since does
    // not undo it, from memory or from disk.
    #expect(TrustFixture.verdict(cache.access(to: "pro", for: Fixture.scopeA)) == .verified)
    #expect(try cache.verifySnapshot(for: Fixture.scopeA) == .verified)
    let reopened = try TrustFixture.cache(in: directory, clock: clock)
    #expect(try reopened.verifySnapshot(for: Fixture.scopeA) == .verified)
  }

  @Test("an intermediate expired when it signed fails, and a key the roots did not certify")
  func expiredAtSigningAndUntrusted() throws {
    let directory = try TemporaryDirectory()
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    let expired = try TestSigner.certificate(notAfter: Fixture.date("2026-11-30T11:59:59Z"))
    try cache.store(try TrustFixture.signed(certificate: expired), for: Fixture.scopeA)
    #expect(try cache.verifySnapshot(for: Fixture.scopeA) == .failed(.intermediateExpired))
    let stranger = try TestSigner.certificate(root: TestSigner.strangerPrivate)
    try cache.store(try TrustFixture.signed(certificate: stranger), for: Fixture.scopeB)
    #expect(try cache.verifySnapshot(for: Fixture.scopeB) == .failed(.untrustedIntermediate))
  }

  @Test("a failed verification never replaces a verified snapshot; it may replace a failed one")
  func failedNeverReplacesVerified() throws {
    let directory = try TemporaryDirectory()
    let cache = try TrustFixture.cache(in: directory, clock: clock)
    try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
    clock.advance(by: .minute)
    let newer = TrustFixture.body(requestDate: "2026-11-30T12:01:00Z")
    var forged = try TrustFixture.signed(newer)
    forged = try CustomerInfoSnapshot(
      jsonData: newer, signature: (try TrustFixture.signed()).signature,
      requestNonce: TestSigner.nonce)
    #expect(throws: CacheError.unverifiedSnapshot(.signatureMismatch)) {
      try cache.store(forged, for: Fixture.scopeA)
    }
    #expect(throws: CacheError.unverifiedSnapshot(.missingSignature)) {
      try cache.store(try CustomerInfoSnapshot(jsonData: newer), for: Fixture.scopeA)
    }
    let kept = try #require(try cache.load(Fixture.scopeA)?.snapshot)
    #expect(kept.customerInfo.requestDate == Fixture.requestDate)
    #expect(TrustFixture.verdict(cache.access(to: "pro", for: Fixture.scopeA)) == .verified)
    // Over a failed snapshot, a failed one is stored: it is what the server last said.
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeB)
    try cache.store(forged, for: Fixture.scopeB)
    #expect(try cache.verifySnapshot(for: Fixture.scopeB) == .failed(.signatureMismatch))
  }

  @Test("requireVerified: unavailable(unverified) through every failed state, granted verified")
  func requireVerified() throws {
    let directory = try TemporaryDirectory()
    let strict = try TrustFixture.cache(in: directory, clock: clock, requireVerified: true)
    var informational = OfflinePolicy.conservative
    informational.requireVerified = false
    #expect(strict.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    let other = Array(repeating: UInt8(7), count: 16)
    let states: [(CustomerInfoSnapshot, TrustVerdict)] = [
      (try Fixture.snapshot(), .failed(.missingSignature)),
      (try TrustFixture.signed(for: Fixture.scopeB), .failed(.scopeMismatch)),
      (try TrustFixture.signed(requestNonce: other), .failed(.nonceMismatch)),
      (
        try TrustFixture.signed(
          certificate: try TestSigner.certificate(root: TestSigner.strangerPrivate)),
        .failed(.untrustedIntermediate)
      ),
      (try TrustFixture.signed(), .verified),
    ]
    for (snapshot, verdict) in states {
      try strict.store(snapshot, for: Fixture.scopeA)
      let decision = strict.access(to: "pro", for: Fixture.scopeA)
      let relaxed = strict.access(to: "pro", for: Fixture.scopeA, policy: informational)
      #expect(TrustFixture.verdict(decision) == verdict)
      #expect(relaxed.isGranted, "off: informational, \(verdict)")
      if verdict == .verified {
        #expect(decision.isGranted)
      } else {
        #expect(decision.state == .offlineUnavailable(.unverified), "\(verdict)")
        #expect(decision.evidence.verificationFailure == verdict.failure)
        #expect(strict.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
      }
    }
  }

  @Test("requireVerified without trust roots is refused, in the configuration and per read")
  func requireVerifiedNeedsRoots() throws {
    let directory = try TemporaryDirectory()
    #expect(
      throws: CacheError.invalidConfiguration(
        field: "policy.requireVerified",
        problem: "needs trustRoots: without them `verified` is only the body's claim")
    ) {
      _ = try Fixture.cache(in: directory, clock: clock) { $0.policy.requireVerified = true }
    }
    let plain = try Fixture.cache(in: directory, clock: clock)
    try plain.store(try Fixture.snapshot(), for: Fixture.scopeA)
    var strict = OfflinePolicy.conservative
    strict.requireVerified = true
    #expect(
      plain.access(to: "pro", for: Fixture.scopeA, policy: strict).state
        == .offlineUnavailable(.unreadable))
    let memory = InMemoryCustomerInfoCache(clock: clock.cacheClock)
    try memory.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(
      memory.access(to: "pro", for: Fixture.scopeA, policy: strict).state
        == .offlineUnavailable(.unreadable))
  }

  @Test("the in-memory reference cache decides as the SQLite cache does")
  func inMemoryAgrees() throws {
    let directory = try TemporaryDirectory()
    let file = try TrustFixture.cache(in: directory, clock: clock)
    let memory = InMemoryCustomerInfoCache(
      clock: clock.cacheClock, trustRoots: try TestSigner.roots())
    let other = Array(repeating: UInt8(7), count: 16)
    let inputs: [CustomerInfoSnapshot] = [
      try Fixture.snapshot(), try TrustFixture.signed(for: Fixture.scopeB),
      try TrustFixture.signed(requestNonce: other), try TrustFixture.signed(),
    ]
    for snapshot in inputs {
      let fileResult = Result { () throws(CacheError) in
        try file.store(snapshot, for: Fixture.scopeA)
      }
      let memoryResult = Result { () throws(CacheError) in
        try memory.store(snapshot, for: Fixture.scopeA)
      }
      #expect((try? fileResult.get()) != nil)
      #expect((try? memoryResult.get()) != nil)
      #expect(
        file.access(to: "pro", for: Fixture.scopeA) == memory.access(to: "pro", for: Fixture.scopeA)
      )
      let fileView = try #require(try file.evaluatedCustomerInfo(for: Fixture.scopeA))
      let memoryView = try #require(try memory.evaluatedCustomerInfo(for: Fixture.scopeA))
      #expect(fileView.customerInfo == memoryView.customerInfo)
      #expect(fileView.decisions == memoryView.decisions)
      #expect(fileView.bookkeeping == memoryView.bookkeeping)
      #expect(fileView.verificationFailure == memoryView.verificationFailure)
      #expect(fileView == memoryView)
    }
    // Both refuse a failed snapshot over the verified one.
    #expect(throws: CacheError.unverifiedSnapshot(.missingSignature)) {
      try memory.store(try Fixture.snapshot(), for: Fixture.scopeA)
    }
    #expect(throws: CacheError.unverifiedSnapshot(.missingSignature)) {
      try file.store(try Fixture.snapshot(), for: Fixture.scopeA)
    }
  }
}
