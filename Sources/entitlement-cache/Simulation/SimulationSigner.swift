import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How a scripted answer is signed, when the script says `"signed": true` (DESIGN §12).
enum ScriptedSignature: String, Sendable, CaseIterable {
  /// Signed as a server would: the request's nonce and scope, by a certified key in time.
  case valid
  /// Sent with no signature.
  case none
  /// Signed over another nonce than the request sent: a replayed answer.
  case wrongNonce = "wrong_nonce"
  /// Signed for another user of the same app and installation.
  case otherUser = "other_user"
  /// Signed by an intermediate key whose `notAfter` had passed when it signed.
  case expiredKey = "expired_key"
  /// Signed by a key no pinned root certified.
  case untrustedKey = "untrusted_key"
  /// A signature that is not the key's over this body.
  case forged
}

/// The simulation's server keys: RFC 8032's first two test keys as the root and the
/// intermediate (the README's test vector), so a script's output is the same on every run.
/// For simulations only: these keys are public.
struct SimulationSigner: Sendable {
  static let rootSeed = bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
  static let intermediateSeed = bytes(
    "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")
  /// RFC 8032's third test key, which no root the simulation pins certifies.
  static let strangerSeed = bytes(
    "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7")
  /// 2100-01-01T00:00:00Z: a key that outlives any script.
  static let farFuture: Int64 = 4_102_444_800_000

  /// The roots the simulation's cache pins.
  let roots: TrustRoots

  init() throws(CLIError) {
    guard let root = Ed25519.publicKey(ofPrivateKey: Self.rootSeed) else {
      throw CLIError.storage("simulate: the crypto library could not derive the test root key")
    }
    do {
      roots = try TrustRoots(publicKeys: [root])
    } catch {
      throw CLIError.storage("simulate: \(error)")
    }
  }

  /// The signed material for `body`, answered to a request for `scope` that sent `nonce`;
  /// `otherUser` is the scope an `other_user` answer is signed for.
  func sign(
    _ body: Data, requestDate: Date, scope: CacheScope, nonce: [UInt8],
    as mode: ScriptedSignature, otherUser: CacheScope
  ) -> ResponseSignature? {
    let requestMilliseconds = Int64((requestDate.timeIntervalSince1970 * 1000).rounded(.down))
    var signedScope = scope.key.bytes
    var signedNonce = nonce
    var notAfter = Self.farFuture
    var certifier = Self.rootSeed
    switch mode {
    case .none: return nil
    case .valid, .forged: break
    case .wrongNonce: signedNonce = Array(repeating: 0xA5, count: 16)
    case .otherUser: signedScope = otherUser.key.bytes
    case .expiredKey: notAfter = requestMilliseconds - 1
    case .untrustedKey: certifier = Self.strangerSeed
    }
    guard let key = Ed25519.publicKey(ofPrivateKey: Self.intermediateSeed),
      let rootSignature = Ed25519.signature(
        of: ResponseVerifier.intermediateMessage(key: key, notAfter: notAfter),
        privateKey: certifier),
      var signature = Ed25519.signature(
        of: ResponseVerifier.message(
          nonce: signedNonce, requestDate: requestDate, scopeHash: signedScope, body: body),
        privateKey: Self.intermediateSeed)
    else { return nil }
    if mode == .forged { signature[0] ^= 0x01 }
    let bigEndian = (0..<8).map { UInt8(truncatingIfNeeded: notAfter >> (56 - 8 * $0)) }
    return ResponseSignature(
      signature: signature, intermediate: key + bigEndian + rootSignature, nonce: signedNonce,
      scopeHash: signedScope)
  }

  private static func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count, by: 2).compactMap {
      UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)
    }
  }
}
