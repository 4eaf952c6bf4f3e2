#if canImport(CLibCrypto)
  import CLibCrypto
#elseif canImport(CryptoKit)
  import CryptoKit
#endif

/// The one place that computes SHA-256, so the rest of the library does not care which
/// platform library provides it: libcrypto on Linux, CryptoKit on Apple platforms.
enum SHA256 {
  /// The number of bytes in a digest.
  private static let digestByteCount = 32

  /// The 32-byte SHA-256 digest of `bytes`.
  ///
  /// - Parameter bytes: The message to hash; may be empty.
  /// - Returns: The digest, always 32 bytes long.
  static func hash(_ bytes: [UInt8]) -> [UInt8] {
    #if canImport(CLibCrypto)
      var digest = [UInt8](repeating: 0, count: digestByteCount)
      // An empty array may have no base address; libcrypto reads nothing when the length is 0,
      // so passing nil is fine. The name is module-qualified because this enum shadows it.
      let result = bytes.withUnsafeBufferPointer { input in
        digest.withUnsafeMutableBufferPointer { output in
          CLibCrypto.SHA256(input.baseAddress, input.count, output.baseAddress)
        }
      }
      // The one-shot call only fails when libcrypto itself is unusable (no default provider,
      // out of memory); no input can make it fail, and a cache that silently stored a wrong
      // hash would leak one scope's data into another, so stopping is the only safe answer.
      guard result != nil else {
        preconditionFailure("libcrypto SHA256() failed; the crypto library is unusable")
      }
      return digest
    #elseif canImport(CryptoKit)
      return Array(CryptoKit.SHA256.hash(data: bytes))
    #else
      #error("SHA-256 needs libcrypto (CLibCrypto) or CryptoKit")
    #endif
  }
}
