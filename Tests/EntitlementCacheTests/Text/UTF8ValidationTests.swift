import Testing

@testable import EntitlementCache

@Suite("String(validatingUTF8Bytes:): the package's UTF-8 check")
struct UTF8ValidationTests {
  @Test("well-formed text is returned unchanged")
  func valid() {
    for text in ["", "plain", "héllo", "プロ・年間プラン", "😀 and \u{10FFFF}", "\u{0}"] {
      #expect(String(validatingUTF8Bytes: Array(text.utf8)) == text)
    }
  }

  /// The cases a decode-and-compare check could get wrong: a repair as long as what it
  /// replaced (a truncated four-byte sequence is one U+FFFD, three bytes for three), input that
  /// already holds U+FFFD, and the forms the decoder must refuse.
  @Test("ill-formed bytes are refused, even where the repair is as long as the input")
  func invalid() {
    let cases: [[UInt8]] = [
      [0x61, 0xF0, 0x9F, 0x98, 0x62],  // a four-byte sequence cut short: one U+FFFD
      [0xEF, 0xBF, 0xBD, 0xFF],  // a real U+FFFD, then a byte never valid
      [0xFF], [0x80], [0xC0, 0xAF], [0xE0, 0x80, 0x80],  // stray, overlong
      [0xED, 0xA0, 0x80],  // a surrogate
      [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
      [0xE2, 0x82],  // cut short at the end
    ]
    for bytes in cases {
      #expect(String(validatingUTF8Bytes: bytes) == nil, "\(bytes)")
      #expect(bytes.withUnsafeBufferPointer { String(validatingUTF8Bytes: $0) } == nil)
    }
    #expect(String(validatingUTF8Bytes: [0xEF, 0xBF, 0xBD]) == "\u{FFFD}")
  }

  /// Where the standard library's validating initializer exists, the two agree on every one-
  /// and two-byte input and on a fixed sample of longer ones.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("agrees with String(validating:as:)")
  func agreesWithStandardLibrary() {
    var inputs: [[UInt8]] = (0...0xFF).map { [UInt8($0)] }
    for first in 0...0xFF {
      for second in 0...0xFF { inputs.append([UInt8(first), UInt8(second)]) }
    }
    // Longer inputs from a fixed generator, their bytes mostly at or above 0x80, where the
    // multi-byte rules are.
    var state: UInt64 = 0x5EED
    for _ in 0..<100_000 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let count = Int(state >> 61) + 3
      inputs.append(
        (0..<count).map { index in
          let byte = UInt8(truncatingIfNeeded: state >> (8 * UInt64(index % 7)))
          return byte < 0x40 ? byte | 0x80 : byte
        })
    }
    let disagreements = inputs.filter {
      String(validatingUTF8Bytes: $0) != String(validating: $0, as: UTF8.self)
    }
    #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
  }
}
