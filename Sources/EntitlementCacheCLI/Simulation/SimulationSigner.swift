import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How a scripted answer is signed, when the script says `"signed": true` (`Sources/EntitlementCache/EntitlementCache.docc/Articles/TrustedSnapshots.md`).
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

/// The simulation's server keys: the test-vector keys of `Sources/EntitlementCache/EntitlementCache.docc/Articles/TrustedSnapshots.md` (``ResponseSigner``), so a
/// script's output is the same on every run. For simulations only: these keys are public.
struct SimulationSigner: Sendable {
  /// 2100-01-01T00:00:00Z: a key that outlives any script.
  static let farFuture: Int64 = 4_102_444_800_000
  private static let server = ResponseSigner(
    rootPrivateKey: ResponseSigner.testRootKey,
    intermediatePrivateKey: ResponseSigner.testIntermediateKey, notAfter: farFuture)

  /// The roots the simulation's cache pins.
  let roots: TrustRoots

  init() throws(CLIError) {
    guard let root = Self.server.rootPublicKey else {
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
    var server = Self.server
    var signedScope = scope.key.bytes
    var signedNonce = nonce
    switch mode {
    case .none: return nil
    case .valid, .forged: break
    case .wrongNonce: signedNonce = Array(repeating: 0xA5, count: 16)
    case .otherUser: signedScope = otherUser.key.bytes
    case .expiredKey:
      // The script's times parsed, within the years the output writes: no overflow.
      server.notAfter = Int64((requestDate.timeIntervalSince1970 * 1000).rounded(.down)) - 1
    case .untrustedKey: server.rootPrivateKey = ResponseSigner.testStrangerKey
    }
    guard
      var signed = server.sign(
        body, requestDate: requestDate, scopeHash: signedScope, nonce: signedNonce)
    else { return nil }
    if mode == .forged { signed.signature[0] ^= 0x01 }
    return signed
  }
}
