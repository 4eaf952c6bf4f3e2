import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// ``ResponseVerifier``: every reason a response is not verified (<doc:TrustedSnapshots>).
@Suite("Response verification")
struct ResponseVerifierTests {
  static let requestDate = Fixture.requestDate
  static let body = Data(Fixture.notEntitledJSON().utf8)

  func check(
    _ signature: ResponseSignature?, body: Data = body, requestDate: Date = requestDate,
    expectedNonce: [UInt8]? = TestSigner.nonce, scope: CacheScope = Fixture.scopeA,
    serverNow: Date? = requestDate.addingTimeInterval(1)
  ) throws -> VerificationFailure? {
    ResponseVerifier.failure(
      body: body, requestDate: requestDate, signature: signature, expectedNonce: expectedNonce,
      scope: scope, serverNow: serverNow, roots: try TestSigner.roots())
  }

  @Test("a response signed for its scope, with its nonce, by a certified key, verifies")
  func verifies() throws {
    let signed = try TestSigner.sign(
      Self.body, requestDate: Self.requestDate, scope: Fixture.scopeA)
    #expect(try check(signed) == nil)
    // Checked again from disk: no nonce to compare, no arrival time.
    #expect(try check(signed, expectedNonce: nil, serverNow: nil) == nil)
  }

  @Test("every failure reason from a constructed input")
  func everyReason() throws {
    let good = try TestSigner.sign(Self.body, requestDate: Self.requestDate, scope: Fixture.scopeA)
    #expect(try check(nil) == .missingSignature)

    for broken in [
      ResponseSignature(
        signature: Array(good.signature.dropLast()), intermediate: good.intermediate,
        nonce: good.nonce, scopeHash: good.scopeHash),
      ResponseSignature(
        signature: good.signature, intermediate: good.intermediate + [0], nonce: good.nonce,
        scopeHash: good.scopeHash),
      ResponseSignature(
        signature: good.signature, intermediate: good.intermediate, nonce: [1, 2, 3],
        scopeHash: good.scopeHash),
      ResponseSignature(
        signature: good.signature, intermediate: good.intermediate, nonce: good.nonce,
        scopeHash: Array(good.scopeHash.prefix(31))),
    ] {
      #expect(try check(broken) == .malformedSignature)
    }

    let stranger = try TestSigner.sign(
      Self.body, requestDate: Self.requestDate, scope: Fixture.scopeA,
      certificate: try TestSigner.certificate(root: TestSigner.strangerPrivate))
    #expect(try check(stranger) == .untrustedIntermediate)
    var forgedExpiry = good
    forgedExpiry.intermediate[39] ^= 1  // notAfter moved: the root's signature no longer holds
    #expect(try check(forgedExpiry) == .untrustedIntermediate)

    // Expired before it signed: a clock set back revives nothing, the signed date is the test.
    let expired = try TestSigner.sign(
      Self.body, requestDate: Self.requestDate, scope: Fixture.scopeA,
      certificate: try TestSigner.certificate(notAfter: Self.requestDate))
    #expect(try check(expired) == .intermediateExpired)
    #expect(try check(expired, serverNow: nil) == .intermediateExpired)
    // Valid when it signed, expired by the trusted time it arrives at: refused on arrival; a
    // snapshot it signed in time and stored stays verified after.
    let lapsing = try TestSigner.sign(
      Self.body, requestDate: Self.requestDate, scope: Fixture.scopeA,
      certificate: try TestSigner.certificate(
        notAfter: Self.requestDate.addingTimeInterval(.minute)))
    #expect(
      try check(lapsing, serverNow: Self.requestDate.addingTimeInterval(.minute))
        == .intermediateExpired
    )
    #expect(try check(lapsing, serverNow: nil) == nil)

    var edited = Array(Self.body)
    edited[edited.count - 3] = UInt8(ascii: " ")
    #expect(try check(good, body: Data(edited)) == .signatureMismatch)
    #expect(
      try check(good, requestDate: Self.requestDate.addingTimeInterval(1)) == .signatureMismatch)
    var flipped = good
    flipped.signature[10] ^= 0x40
    #expect(try check(flipped) == .signatureMismatch)

    let otherNonce = try TestSigner.sign(
      Self.body, requestDate: Self.requestDate, scope: Fixture.scopeA,
      nonce: Array(repeating: 7, count: 16))
    #expect(try check(otherNonce) == .nonceMismatch)
    let noNonce = try TestSigner.sign(
      Self.body, requestDate: Self.requestDate, scope: Fixture.scopeA, nonce: [])
    #expect(try check(noNonce) == .nonceMismatch)
    #expect(try check(noNonce, expectedNonce: nil) == nil)
  }

  @Test(
    "signed for user A and stored under user B, for sandbox under production, for one installation under another: scopeMismatch",
    arguments: [
      (Fixture.scopeA, Fixture.scopeB),
      (Fixture.scope(environment: .sandbox), Fixture.scope(environment: .production)),
      (Fixture.scope(installation: "install-1"), Fixture.scope(installation: "install-2")),
      (Fixture.scope(sdkKey: "sdk_a"), Fixture.scope(sdkKey: "sdk_b")),
    ])
  func scopeMismatch(signedFor: CacheScope, storedUnder: CacheScope) throws {
    let signed = try TestSigner.sign(Self.body, requestDate: Self.requestDate, scope: signedFor)
    #expect(try check(signed, scope: signedFor) == nil)
    #expect(try check(signed, scope: storedUnder) == .scopeMismatch)
  }

  @Test("trust roots and signed material never show their bytes; a bad root is named by position")
  func redactionAndValidation() throws {
    let signed = try TestSigner.sign(
      Self.body, requestDate: Self.requestDate, scope: Fixture.scopeA)
    let hexSignature = SHA256Tests.hex(signed.signature)
    #expect(!"\(signed)".contains(hexSignature.prefix(16)))
    #expect("\(signed)" == "ResponseSignature(signature: 64 B, intermediate: 104 B, nonce: 16 B)")
    #expect("\(try TestSigner.roots())" == "TrustRoots(1 key)")
    #expect {
      _ = try TrustRoots(publicKeys: [TestSigner.nonce])
    } throws: { error in
      guard case .invalidConfiguration(let field, _) = error as? CacheError else { return false }
      return field == "trustRoots[0]"
    }
    #expect(throws: CacheError.self) { _ = try TrustRoots(publicKeys: []) }
  }
}
