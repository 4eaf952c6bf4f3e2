import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A test signer: RFC 8032's first key as the root, its second as the intermediate
/// (``ResponseSigner``'s test keys).
enum TestSigner {
  static let rootPrivate = ResponseSigner.testRootKey
  static let intermediatePrivate = ResponseSigner.testIntermediateKey
  static let strangerPrivate = ResponseSigner.testStrangerKey
  /// 2027-01-01T00:00:00Z.
  static let notAfter = Date(timeIntervalSince1970: 1_798_761_600)
  static let nonce = Array(0..<16).map(UInt8.init)

  static func roots() throws -> TrustRoots {
    try TrustRoots(publicKeys: [try #require(Ed25519.publicKey(ofPrivateKey: rootPrivate))])
  }

  /// The intermediate's certificate, signed by `root`.
  static func certificate(
    notAfter: Date = notAfter, root: [UInt8] = rootPrivate
  ) throws -> [UInt8] {
    try #require(
      ResponseSigner(
        rootPrivateKey: root, intermediatePrivateKey: intermediatePrivate,
        notAfter: notAfter.unixMilliseconds
      ).certificate())
  }

  /// The signed material for `body` as the server would send it for `scope`.
  static func sign(
    _ body: Data, requestDate: Date, scope: CacheScope, nonce: [UInt8] = nonce,
    certificate: [UInt8]? = nil
  ) throws -> ResponseSignature {
    try #require(
      ResponseSigner(
        rootPrivateKey: rootPrivate, intermediatePrivateKey: intermediatePrivate,
        notAfter: notAfter.unixMilliseconds
      ).sign(
        body, requestDate: requestDate, scopeHash: scope.key.bytes, nonce: nonce,
        certificate: try certificate ?? self.certificate()))
  }
}
