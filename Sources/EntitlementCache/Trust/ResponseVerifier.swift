#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Why a signed response is not `verified` (<doc:TrustedSnapshots>).
public enum VerificationFailure: String, Sendable, Hashable, CaseIterable {
  /// Trust roots are configured and the response came with no signature.
  case missingSignature = "missing_signature"
  /// A part of the signed material has the wrong length.
  case malformedSignature = "malformed_signature"
  /// No pinned root certified the intermediate key.
  case untrustedIntermediate = "untrusted_intermediate"
  /// The intermediate key's `notAfter` had passed when it signed, or when the response arrived
  /// by the trusted server time.
  case intermediateExpired = "intermediate_expired"
  /// The signature does not check over the body, its `requestDate` and what was signed with it.
  case signatureMismatch = "signature_mismatch"
  /// The server signed another nonce than the request sent.
  case nonceMismatch = "nonce_mismatch"
  /// The server signed for another scope (user, installation, environment or SDK key).
  case scopeMismatch = "scope_mismatch"
  /// What was read from disk differs from what was verified when it was stored.
  case tampered
}

/// The checks of trusted snapshots (<doc:TrustedSnapshots>) as pure functions: what is signed, and
/// whether a response verifies.
public enum ResponseVerifier {
  /// `"entitlement-cache/response/v1\0"`.
  static let responseTag = Array("entitlement-cache/response/v1".utf8) + [0]
  /// `"entitlement-cache/intermediate/v1\0"`.
  static let intermediateTag = Array("entitlement-cache/intermediate/v1".utf8) + [0]

  /// The bytes a response signature covers: the domain tag, the nonce (16 bytes, or none),
  /// `requestDate` as Int64 milliseconds big-endian, the 32-byte scope hash, and SHA-256 of
  /// the body.
  package static func message(
    nonce: [UInt8], requestDate: Date, scopeHash: [UInt8], body: Data
  ) -> [UInt8] {
    message(
      nonce: nonce, requestDate: requestDate, scopeHash: scopeHash,
      bodyDigest: SHA256.hash(Array(body)))
  }

  /// ``message(nonce:requestDate:scopeHash:body:)`` from the body's SHA-256, which a store
  /// has already taken for its own column.
  static func message(
    nonce: [UInt8], requestDate: Date, scopeHash: [UInt8], bodyDigest: [UInt8]
  ) -> [UInt8] {
    responseTag + nonce + bigEndian(requestDate.unixMilliseconds) + scopeHash + bodyDigest
  }

  /// The bytes a root signs to certify an intermediate key: the domain tag, the key and
  /// `notAfter` as Int64 milliseconds big-endian.
  package static func intermediateMessage(key: [UInt8], notAfter: Int64) -> [UInt8] {
    intermediateTag + key + bigEndian(notAfter)
  }

  /// Nil when the response verifies: `signature` is present and well formed, a pinned root
  /// certified its intermediate, the intermediate was valid when it signed (`notAfter` after
  /// the signed `requestDate`) and, when `serverNow` is given (a response arriving), is still
  /// valid by the trusted server time, the signature checks over the body and `requestDate`
  /// with the nonce and scope hash it carries, the nonce is `expectedNonce` when one is
  /// given, and the scope hash is `scope`'s. Otherwise the first check that failed, in that
  /// order.
  ///
  /// - Parameters:
  ///   - body: The response body exactly as received.
  ///   - requestDate: The body's `requestDate`: the one the server must have signed.
  ///   - signature: The signed material that came with the body; nil when none did.
  ///   - expectedNonce: The nonce the request sent; nil when checking a stored snapshot,
  ///     whose nonce was checked when it arrived.
  ///   - scope: The scope the snapshot is stored under.
  ///   - roots: The pinned roots.
  ///   - serverNow: The trusted server time (<doc:TimeModel>) when a response arrives; nil when a
  ///     stored snapshot is checked again, which its key's later expiry does not undo.
  public static func failure(
    body: Data, requestDate: Date, signature: ResponseSignature?, expectedNonce: [UInt8]?,
    scope: CacheScope, serverNow: Date?, roots: TrustRoots
  ) -> VerificationFailure? {
    failure(
      bodyDigest: SHA256.hash(Array(body)), requestDate: requestDate, signature: signature,
      expectedNonce: expectedNonce, scope: scope, serverNow: serverNow, roots: roots)
  }

  /// ``failure(body:requestDate:signature:expectedNonce:scope:serverNow:roots:)`` from the
  /// body's SHA-256.
  static func failure(
    bodyDigest: [UInt8], requestDate: Date, signature: ResponseSignature?,
    expectedNonce: [UInt8]?, scope: CacheScope, serverNow: Date?, roots: TrustRoots
  ) -> VerificationFailure? {
    guard let signature else { return .missingSignature }
    guard signature.signature.count == Ed25519.signatureByteCount,
      signature.nonce.isEmpty || signature.nonce.count == 16,
      signature.scopeHash.count == 32,
      let intermediate = IntermediateCertificate(signature.intermediate)
    else { return .malformedSignature }
    guard roots.certifies(intermediate) else { return .untrustedIntermediate }
    guard intermediate.notAfter > requestDate.unixMilliseconds,
      serverNow.map({ intermediate.notAfter > $0.unixMilliseconds }) ?? true
    else { return .intermediateExpired }
    let signed = message(
      nonce: signature.nonce, requestDate: requestDate, scopeHash: signature.scopeHash,
      bodyDigest: bodyDigest)
    guard Ed25519.isValidSignature(signature.signature, of: signed, publicKey: intermediate.key)
    else { return .signatureMismatch }
    if let expectedNonce, expectedNonce != signature.nonce { return .nonceMismatch }
    guard signature.scopeHash == scope.key.bytes else { return .scopeMismatch }
    return nil
  }

  /// `value` as 8 big-endian bytes, as the signed messages and the certificate hold integers.
  static func bigEndian(_ value: Int64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
  }
}
