#if canImport(CLibCrypto)
  import CLibCrypto
#elseif canImport(CryptoKit)
  import CryptoKit
#endif

// The library's one crypto facade: SHA-256 and Ed25519, from libcrypto on Linux and CryptoKit
// on Apple platforms, so nothing else in the library knows which provides them.

/// SHA-256.
enum SHA256 {
  /// The number of bytes in a digest.
  private static let digestByteCount = 32

  /// The 32-byte SHA-256 digest of `bytes`.
  ///
  /// - Parameter bytes: The message to hash; may be empty.
  /// - Returns: The digest, always 32 bytes long.
  static func hash(_ bytes: [UInt8]) -> [UInt8] {
    bytes.withUnsafeBytes { hash($0) }
  }

  /// The digest of bytes read in place, such as a blob SQLite holds: no copy first.
  static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
    #if canImport(CLibCrypto)
      var digest = [UInt8](repeating: 0, count: digestByteCount)
      var context = SHA256_CTX()
      // The low-level API (see shim.h for why not EVP) returns 1 on success. An empty buffer
      // may have no base address; libcrypto reads nothing when the length is 0.
      let succeeded = digest.withUnsafeMutableBufferPointer { output in
        SHA256_Init(&context) == 1
          && SHA256_Update(&context, bytes.baseAddress, bytes.count) == 1
          && SHA256_Final(output.baseAddress, &context) == 1
      }
      // These calls only fail on a null context or output, which cannot happen here; no input
      // can make them fail, and a cache that silently stored a wrong hash would leak one
      // scope's data into another, so stopping is the only safe answer.
      guard succeeded else {
        preconditionFailure("libcrypto SHA-256 failed; the crypto library is unusable")
      }
      return digest
    #elseif canImport(CryptoKit)
      return Array(CryptoKit.SHA256.hash(data: bytes))
    #else
      #error("SHA-256 needs libcrypto (CLibCrypto) or CryptoKit")
    #endif
  }

}

/// Ed25519 signatures (RFC 8032): what trusted snapshots are signed with (<doc:TrustedSnapshots>).
///
/// Keys and signatures are raw bytes: a 32-byte public key, a 32-byte private key (the RFC's
/// seed) and a 64-byte signature. Nothing here logs or describes a key.
///
/// `package` for the package's own executables (the command-line tool's test keys, the
/// benchmark's signed workloads and its one-verification baseline); apps see none of it.
package enum Ed25519 {
  static let publicKeyByteCount = 32
  static let privateKeyByteCount = 32
  static let signatureByteCount = 64

  /// Whether `signature` is `publicKey`'s signature of `message`. False for a key or a
  /// signature of the wrong length, or a key that is not a curve point: never a trap, since
  /// every byte here comes from outside.
  package static func isValidSignature(
    _ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]
  ) -> Bool {
    guard signature.count == signatureByteCount, publicKey.count == publicKeyByteCount else {
      return false
    }
    #if canImport(CLibCrypto)
      guard let key = EVPKey(publicKey: publicKey), let context = EVP_MD_CTX_new() else {
        return false
      }
      defer { EVP_MD_CTX_free(context) }
      guard EVP_DigestVerifyInit(context, nil, nil, nil, key.handle) == 1 else { return false }
      // 1 is a valid signature; 0 an invalid one; anything else an error, which is not valid.
      return signature.withUnsafeBufferPointer { signatureBytes in
        message.withUnsafeBufferPointer { messageBytes in
          EVP_DigestVerify(
            context, signatureBytes.baseAddress, signatureBytes.count, messageBytes.baseAddress,
            messageBytes.count) == 1
        }
      }
    #elseif canImport(CryptoKit)
      guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else {
        return false
      }
      return key.isValidSignature(signature, for: message)
    #endif
  }

  /// `privateKey`'s signature of `message`, or nil for a key of the wrong length. For the
  /// developers' test keys of the command-line tool and for tests: the library itself never
  /// signs.
  package static func signature(of message: [UInt8], privateKey: [UInt8]) -> [UInt8]? {
    guard privateKey.count == privateKeyByteCount else { return nil }
    #if canImport(CLibCrypto)
      guard let key = EVPKey(privateKey: privateKey), let context = EVP_MD_CTX_new() else {
        return nil
      }
      defer { EVP_MD_CTX_free(context) }
      guard EVP_DigestSignInit(context, nil, nil, nil, key.handle) == 1 else { return nil }
      var signature = [UInt8](repeating: 0, count: signatureByteCount)
      var length = signatureByteCount
      let signed = message.withUnsafeBufferPointer { messageBytes in
        signature.withUnsafeMutableBufferPointer { output in
          EVP_DigestSign(
            context, output.baseAddress, &length, messageBytes.baseAddress, messageBytes.count)
            == 1
        }
      }
      return signed && length == signatureByteCount ? signature : nil
    #elseif canImport(CryptoKit)
      guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: privateKey),
        let signature = try? key.signature(for: message)
      else { return nil }
      return Array(signature)
    #endif
  }

  /// The public key of `privateKey`, or nil for a key of the wrong length.
  package static func publicKey(ofPrivateKey privateKey: [UInt8]) -> [UInt8]? {
    guard privateKey.count == privateKeyByteCount else { return nil }
    #if canImport(CLibCrypto)
      guard let key = EVPKey(privateKey: privateKey) else { return nil }
      var publicKey = [UInt8](repeating: 0, count: publicKeyByteCount)
      var length = publicKeyByteCount
      let read = publicKey.withUnsafeMutableBufferPointer { output in
        EVP_PKEY_get_raw_public_key(key.handle, output.baseAddress, &length) == 1
      }
      return read && length == publicKeyByteCount ? publicKey : nil
    #elseif canImport(CryptoKit)
      guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: privateKey) else {
        return nil
      }
      return Array(key.publicKey.rawRepresentation)
    #endif
  }
}

#if canImport(CLibCrypto)
  /// An `EVP_PKEY` with its one owner: freed when this goes.
  private final class EVPKey {
    let handle: OpaquePointer

    init?(publicKey: [UInt8]) {
      let handle = publicKey.withUnsafeBufferPointer { bytes in
        EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, bytes.baseAddress, bytes.count)
      }
      guard let handle else { return nil }
      self.handle = handle
    }

    init?(privateKey: [UInt8]) {
      let handle = privateKey.withUnsafeBufferPointer { bytes in
        EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, bytes.baseAddress, bytes.count)
      }
      guard let handle else { return nil }
      self.handle = handle
    }

    deinit {
      EVP_PKEY_free(handle)
    }
  }
#endif
