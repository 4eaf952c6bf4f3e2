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
      // The low-level functions, not EVP: EVP's first use loads openssl.cnf and the default
      // provider, which costs a short-lived process (the CLI) more than all its SQLite work.
      // An empty array may have no base address; libcrypto reads nothing when the length is 0.
      var context = SHA256_CTX()
      let succeeded =
        SHA256_Init(&context) == 1
        && bytes.withUnsafeBytes { SHA256_Update(&context, $0.baseAddress, $0.count) } == 1
        && digest.withUnsafeMutableBufferPointer { SHA256_Final($0.baseAddress, &context) } == 1
      // These only fail when libcrypto itself is unusable; no input can make them fail, and a
      // cache that silently stored a wrong hash would leak one scope's data into another, so
      // stopping is the only safe answer.
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
