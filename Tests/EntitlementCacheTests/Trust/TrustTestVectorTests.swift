import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The test vector for server teams (<doc:TrustedSnapshots>): every byte it shows is what this
/// code computes, and the signature it shows verifies.
@Suite("Trusted snapshots: the documented test vector")
struct TrustTestVectorTests {
  static let scope = Fixture.scope(
    sdkKey: "sdk_test_key", installation: "install-1", environment: .production, user: "alice")
  static let requestDate = Fixture.requestDate
  static let body = Data(
    #"{"requestDate":"2026-11-30T12:00:00Z","verification":"verified","entitlements":{"pro":{"status":"active","expiresAt":"2026-12-30T12:00:00Z"}}}"#
      .utf8)

  /// The vector as the article shows it, from the keys up.
  static func vectorText() throws -> String {
    let hex = SHA256Tests.hex
    let rootPublic = try #require(Ed25519.publicKey(ofPrivateKey: TestSigner.rootPrivate))
    let intermediatePublic = try #require(
      Ed25519.publicKey(ofPrivateKey: TestSigner.intermediatePrivate))
    let certificate = try TestSigner.certificate()
    let signed = try TestSigner.sign(Self.body, requestDate: Self.requestDate, scope: Self.scope)
    let message = ResponseVerifier.message(
      nonce: TestSigner.nonce, requestDate: Self.requestDate, scopeHash: Self.scope.key.bytes,
      body: Self.body)
    let intermediateMessage = ResponseVerifier.intermediateMessage(
      key: intermediatePublic, notAfter: TestSigner.notAfter.unixMilliseconds)
    return """
      root private key (seed)   \(hex(TestSigner.rootPrivate))
      root public key           \(hex(rootPublic))
      intermediate private key  \(hex(TestSigner.intermediatePrivate))
      intermediate public key   \(hex(intermediatePublic))
      notAfter                  2027-01-01T00:00:00Z = \(TestSigner.notAfter.unixMilliseconds) ms
      root signs                \(hex(intermediateMessage))
      intermediate (104 B)      \(hex(certificate))
      scope                     sdk_test_key / install-1 / production / alice
      scope hash                \(hex(Self.scope.key.bytes))
      nonce                     \(hex(TestSigner.nonce))
      requestDate               2026-11-30T12:00:00Z = \(Self.requestDate.unixMilliseconds) ms
      body                      \(String(decoding: Self.body, as: UTF8.self))
      SHA-256(body)             \(hex(SHA256.hash(Array(Self.body))))
      signed message            \(hex(message))
      signature                 \(hex(signed.signature))

      """
  }

  @Test("the article shows the vector this code computes, and it verifies")
  func articleShowsTheVector() throws {
    let text = try Self.vectorText()
    let article = try Documentation.article("TrustedSnapshots")
    #expect(
      article.contains("```text\n" + text + "```\n"), "TrustedSnapshots.md should show:\n\(text)")
    let signed = try TestSigner.sign(Self.body, requestDate: Self.requestDate, scope: Self.scope)
    #expect(
      ResponseVerifier.failure(
        body: Self.body, requestDate: Self.requestDate, signature: signed,
        expectedNonce: TestSigner.nonce, scope: Self.scope, serverNow: Self.requestDate,
        roots: try TestSigner.roots()) == nil)
  }
}
