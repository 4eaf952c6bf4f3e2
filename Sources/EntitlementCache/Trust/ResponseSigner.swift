#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The server's side of trusted snapshots (<doc:TrustedSnapshots>), for the package's own tools and
/// tests: the command-line tool's `sign` and `simulate`, the benchmarks' signed workloads, the test
/// suites. Apps never sign, so none of it is public.
package struct ResponseSigner: Sendable {
  /// RFC 8032's first, second and third test keys: the test vector of <doc:TrustedSnapshots> signs with the
  /// first as the root and the second as the intermediate; the third is certified by no root.
  package static let testRootKey = hexBytes(
    "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
  package static let testIntermediateKey = hexBytes(
    "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
  package static let testStrangerKey = hexBytes(
    "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7")

  /// The key that certifies the intermediate: a root's, or any other for a test of an
  /// untrusted one.
  package var rootPrivateKey: [UInt8]
  package var intermediatePrivateKey: [UInt8]
  /// Until when the intermediate may sign, in milliseconds since the Unix epoch.
  package var notAfter: Int64

  package init(rootPrivateKey: [UInt8], intermediatePrivateKey: [UInt8], notAfter: Int64) {
    self.rootPrivateKey = rootPrivateKey
    self.intermediatePrivateKey = intermediatePrivateKey
    self.notAfter = notAfter
  }

  /// The root's public key, to pin; nil for a key of the wrong length.
  package var rootPublicKey: [UInt8]? { Ed25519.publicKey(ofPrivateKey: rootPrivateKey) }

  /// The intermediate's certificate, `key ‖ notAfter ‖ root signature`; nil for a key of the
  /// wrong length.
  package func certificate() -> [UInt8]? {
    guard let key = Ed25519.publicKey(ofPrivateKey: intermediatePrivateKey),
      let rootSignature = Ed25519.signature(
        of: ResponseVerifier.intermediateMessage(key: key, notAfter: notAfter),
        privateKey: rootPrivateKey)
    else { return nil }
    return key + ResponseVerifier.bigEndian(notAfter) + rootSignature
  }

  /// The signed material for `body`, dated `requestDate`, as the server sends it for the scope
  /// hash `scopeHash` over `nonce`, with `certificate` (by default this signer's own).
  package func sign(
    _ body: Data, requestDate: Date, scopeHash: [UInt8], nonce: [UInt8],
    certificate: [UInt8]? = nil
  ) -> ResponseSignature? {
    guard let certificate = certificate ?? self.certificate(),
      let signature = Ed25519.signature(
        of: ResponseVerifier.message(
          nonce: nonce, requestDate: requestDate, scopeHash: scopeHash, body: body),
        privateKey: intermediatePrivateKey)
    else { return nil }
    return ResponseSignature(
      signature: signature, intermediate: certificate, nonce: nonce, scopeHash: scopeHash)
  }

  /// The bytes of a hexadecimal literal; digits that are not hexadecimal are skipped.
  private static func hexBytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
      UInt8(String(decoding: digits[$0...($0 + 1)], as: UTF8.self), radix: 16)
    }
  }
}
