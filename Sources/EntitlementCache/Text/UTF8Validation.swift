extension String {
  /// The text `bytes` spell when they are well-formed UTF-8; nil when they are not.
  ///
  /// The package's one UTF-8 check, for the JSON parser and the tool's arguments: invalid
  /// bytes are refused, never repaired. `String(validating:as:)` does the same, but only from
  /// iOS 18 and macOS 15. Decoding replaces each ill-formed sequence with U+FFFD and copies
  /// well-formed input byte for byte, so the input is valid exactly when the decoded bytes
  /// equal it: one decode and one comparison of two buffers.
  package init?(validatingUTF8Bytes bytes: UnsafeBufferPointer<UInt8>) {
    var text = String(decoding: bytes, as: UTF8.self)
    guard text.withUTF8({ Self.sameBytes($0, bytes) }) else { return nil }
    self = text
  }

  /// Whether `a` and `b` hold the same bytes, compared eight at a time.
  ///
  /// A loop of its own rather than `elementsEqual`, which compares one byte at a time.
  private static func sameBytes(
    _ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>
  ) -> Bool {
    guard a.count == b.count else { return false }
    let a = UnsafeRawBufferPointer(a)
    let b = UnsafeRawBufferPointer(b)
    var offset = 0
    while offset + 8 <= a.count {
      guard
        a.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
          == b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
      else { return false }
      offset += 8
    }
    while offset < a.count {
      guard a[offset] == b[offset] else { return false }
      offset += 1
    }
    return true
  }

  /// The text `bytes` spell when they are well-formed UTF-8; nil when they are not.
  package init?<Bytes: Collection<UInt8>>(validatingUTF8Bytes bytes: Bytes) {
    let contiguous = bytes.withContiguousStorageIfAvailable { String(validatingUTF8Bytes: $0) }
    guard
      let text = contiguous
        ?? Array(bytes).withUnsafeBufferPointer({ String(validatingUTF8Bytes: $0) })
    else { return nil }
    self = text
  }
}
