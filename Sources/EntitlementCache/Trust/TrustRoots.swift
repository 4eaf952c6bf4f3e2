/// The Ed25519 root public keys an app pins (DESIGN §12): a snapshot is `verified` only when
/// an intermediate key one of them certified signed it.
public struct TrustRoots: Sendable, Hashable, CustomStringConvertible {
  /// The pinned 32-byte public keys.
  public let publicKeys: [[UInt8]]

  /// Roots of `publicKeys`, each 32 raw bytes.
  ///
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` for none, or a key of the
  ///   wrong length; the message names the key's position, never its bytes.
  public init(publicKeys: [[UInt8]]) throws(CacheError) {
    guard !publicKeys.isEmpty else {
      throw .invalidConfiguration(field: "trustRoots", problem: "needs at least one key")
    }
    for (index, key) in publicKeys.enumerated() where key.count != Ed25519.publicKeyByteCount {
      throw .invalidConfiguration(
        field: "trustRoots[\(index)]",
        problem: "is \(key.count) bytes; an Ed25519 public key is 32")
    }
    self.publicKeys = publicKeys
  }

  /// How many keys are pinned: never the keys.
  public var description: String {
    "TrustRoots(\(publicKeys.count) \(publicKeys.count == 1 ? "key" : "keys"))"
  }
}
