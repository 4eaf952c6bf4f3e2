/// The 32-byte SHA-256 that identifies a scope in the file, held as four words so that the
/// in-memory lookup on every read compares and hashes integers, not arrays.
package struct ScopeKey: Sendable, Hashable, CustomStringConvertible {
  private let words: (UInt64, UInt64, UInt64, UInt64)

  /// Reads a 32-byte digest; nil for any other length.
  package init?(bytes: some Collection<UInt8>) {
    guard bytes.count == 32 else { return nil }
    self.init(digest: Array(bytes))
  }

  init(digest: [UInt8]) {
    precondition(digest.count == 32, "a scope key is a SHA-256 digest")
    func word(_ index: Int) -> UInt64 {
      digest[index * 8..<index * 8 + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }
    words = (word(0), word(1), word(2), word(3))
  }

  /// The 32 bytes, most significant first.
  package var bytes: [UInt8] {
    withUnsafeBytes { Array($0) }
  }

  /// The first 64 bits: as evenly spread as the whole digest, enough to place the key in a
  /// table (see `ResidentTable`).
  var leadingWord: UInt64 { words.0 }

  /// Calls `body` with the 32 bytes, most significant first, without allocating.
  func withUnsafeBytes<Result, Failure>(
    _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    let bigEndian = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
    return try Swift.withUnsafeBytes(of: bigEndian, body)
  }

  /// The whole hash in lowercase hexadecimal.
  package var hex: String {
    bytes.map { String($0 >> 4, radix: 16) + String($0 & 0xF, radix: 16) }.joined()
  }

  /// The first 12 hexadecimal digits, enough to tell scopes apart on screen.
  package var hexPrefix: String { String(hex.prefix(12)) }

  /// The full hexadecimal hash.
  package var description: String { hex }

  /// Compares all four words.
  package static func == (lhs: ScopeKey, rhs: ScopeKey) -> Bool {
    lhs.words == rhs.words
  }

  /// A digest is already uniformly distributed: one word is as good a hash as four.
  package func hash(into hasher: inout Hasher) {
    hasher.combine(words.0)
  }
}
