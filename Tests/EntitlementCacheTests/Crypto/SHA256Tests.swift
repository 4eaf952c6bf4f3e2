import Testing

@testable import EntitlementCache

/// The SHA-256 facade, checked against the NIST FIPS 180-2 example vectors on every platform.
@Suite("SHA256")
struct SHA256Tests {
  /// Renders `bytes` as lowercase hexadecimal.
  ///
  /// - Parameter bytes: The bytes to render.
  /// - Returns: Two hex digits per byte.
  static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// The digests of the empty message, "abc" and the 448-bit two-block message.
  @Test(
    "NIST vectors",
    arguments: [
      ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
      ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
      (
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
      ),
    ])
  func nistVectors(message: String, expected: String) {
    let digest = SHA256.hash(Array(message.utf8))
    #expect(digest.count == 32)
    #expect(Self.hex(digest) == expected)
  }

  /// Bytes that are not UTF-8, including zeros, are hashed as given (domain separators use NUL).
  @Test("Arbitrary bytes")
  func arbitraryBytes() {
    let withSeparator = SHA256.hash(Array("a\0b".utf8))
    let withoutSeparator = SHA256.hash(Array("ab".utf8))
    #expect(withSeparator != withoutSeparator)
    #expect(SHA256.hash([0x00, 0xFF, 0x80]) == SHA256.hash([0x00, 0xFF, 0x80]))
    #expect(SHA256.hash([0x00]) != SHA256.hash([]))
  }

  /// A million `a`s: the long-message NIST vector, which spans many blocks.
  @Test("One million a")
  func millionA() {
    let digest = SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
    #expect(
      Self.hex(digest) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }
}
