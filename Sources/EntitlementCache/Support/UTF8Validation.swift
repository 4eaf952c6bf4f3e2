extension String {
  /// The text `bytes` spell when they are well-formed UTF-8; nil when they are not.
  ///
  /// The package's one UTF-8 check, for the JSON parser and the tool's arguments: invalid
  /// bytes are refused, never repaired. `String(validating:as:)` does the same, but only from
  /// iOS 18 and macOS 15. Decoding replaces each ill-formed sequence with U+FFFD and copies
  /// well-formed input byte for byte, so the input is valid exactly when the decoded bytes
  /// equal it: one decode and one comparison of two buffers, which measured as fast as the
  /// validating initializer on short non-ASCII strings.
  package init?(validatingUTF8Bytes bytes: UnsafeBufferPointer<UInt8>) {
    var text = String(decoding: bytes, as: UTF8.self)
    guard text.withUTF8({ $0.elementsEqual(bytes) }) else { return nil }
    self = text
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
