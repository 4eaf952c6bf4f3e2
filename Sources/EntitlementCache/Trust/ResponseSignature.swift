#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The signed material that comes with a server's response (<doc:TrustedSnapshots>): the signature,
/// the intermediate key's certificate, and what the server signed besides the body.
///
/// Its description says only how long each part is: no signature or key is ever printed.
public struct ResponseSignature: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The intermediate key's 64-byte Ed25519 signature over the
  /// signed message (see <doc:TrustedSnapshots>).
  public var signature: [UInt8]
  /// The intermediate key's certificate: `key (32 B) ‖ notAfter (Int64 ms, big-endian) ‖ root
  /// signature (64 B)`, 104 bytes.
  public var intermediate: [UInt8]
  /// The nonce the server signed: the request's 16 bytes, or empty when it sent none.
  public var nonce: [UInt8]
  /// The scope hash the server signed: the 32 bytes of the scope it answered for, whose
  /// hexadecimal form is the scope's ``CacheScope/id`` (<doc:TrustedSnapshots> says how a
  /// server computes it).
  public var scopeHash: [UInt8]

  /// Signed material as the server sent it.
  public init(signature: [UInt8], intermediate: [UInt8], nonce: [UInt8], scopeHash: [UInt8]) {
    self.signature = signature
    self.intermediate = intermediate
    self.nonce = nonce
    self.scopeHash = scopeHash
  }

  /// The lengths of the parts only.
  public var description: String {
    "ResponseSignature(signature: \(signature.count) B, intermediate: \(intermediate.count) B, nonce: \(nonce.count) B)"
  }

  /// The lengths only, so `dump` and debuggers show no signature, key or nonce either.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "signature": "\(signature.count) B", "intermediate": "\(intermediate.count) B",
        "nonce": "\(nonce.count) B", "scopeHash": "\(scopeHash.count) B",
      ])
  }
}

/// An intermediate key's certificate, parsed: the key, until when it may sign, and the root's
/// signature over both.
struct IntermediateCertificate: Sendable, Hashable {
  static let byteCount = 32 + 8 + 64

  /// The certificate as sent.
  let bytes: [UInt8]
  let key: [UInt8]
  /// Milliseconds since the Unix epoch.
  let notAfter: Int64
  let rootSignature: [UInt8]

  /// Nil unless `bytes` is exactly key, notAfter and root signature.
  init?(_ bytes: [UInt8]) {
    guard bytes.count == Self.byteCount else { return nil }
    self.bytes = bytes
    key = Array(bytes[0..<32])
    notAfter = bytes[32..<40].reduce(0) { $0 << 8 | Int64($1) }
    rootSignature = Array(bytes[40..<104])
  }

  /// What the root signed: the domain tag, the key and notAfter.
  var signedMessage: [UInt8] {
    ResponseVerifier.intermediateMessage(key: key, notAfter: notAfter)
  }
}
