/// The Ed25519 root public keys an app pins (<doc:TrustedSnapshots>): a snapshot is `verified` only
/// when an intermediate key one of them certified signed it.
public struct TrustRoots: Sendable, CustomStringConvertible {
  /// The pinned 32-byte public keys.
  package let publicKeys: [[UInt8]]
  /// Certificates already found certified by these roots. A server signs with one
  /// intermediate for months, so every read from disk would otherwise check the same root
  /// signature again, one of the two signatures it checks.
  private let certified = CertifiedIntermediates()

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

  /// Equal when the same keys are pinned; what was remembered is not part of the value.
  package static func samePins(_ lhs: TrustRoots, _ rhs: TrustRoots) -> Bool {
    lhs.publicKeys == rhs.publicKeys
  }

  /// Whether a pinned root signed `certificate`, remembered once true.
  func certifies(_ certificate: IntermediateCertificate) -> Bool {
    if certified.contains(certificate.bytes) { return true }
    let signed = certificate.signedMessage
    let valid = publicKeys.contains { root in
      Ed25519.isValidSignature(certificate.rootSignature, of: signed, publicKey: root)
    }
    if valid { certified.insert(certificate.bytes) }
    return valid
  }
}

/// The certificates a set of roots was found to have signed. Only a successful check is
/// remembered, computed here from the pinned keys: nothing read from a file or a response can
/// add to it. Bounded, since a hostile server could send a new certificate each time.
private final class CertifiedIntermediates: Sendable {
  private static let capacity = 16
  private let known = Locked<[[UInt8]]>([])

  func contains(_ certificate: [UInt8]) -> Bool {
    known.withLock { $0.contains(certificate) }
  }

  func insert(_ certificate: [UInt8]) {
    known.withLock { known in
      if known.count >= Self.capacity { known.removeFirst() }
      known.append(certificate)
    }
  }
}
