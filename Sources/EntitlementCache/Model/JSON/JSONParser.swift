#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Parses JSON text (RFC 8259) into a ``JSONValue``, in one pass over the bytes.
///
/// Foundation's `JSONDecoder` reaches a `JSONValue` only by trying each type in turn, and every
/// miss throws a `DecodingError` that builds its coding path, which made decoding a stored
/// snapshot most of a client's start-up. This parser reads the bytes once, throws only for a
/// real error, and is stricter where strictness protects a cache:
/// - Trailing commas, control characters in strings, lone surrogates, invalid UTF-8, numbers out
///   of `Double`'s range and anything after the value are errors.
/// - A key repeated in one object is an error: two readers of the same bytes (the server that
///   signed them and this cache) must not be able to see different values.
/// - Nesting deeper than ``maximumDepth`` is an error, so hostile input cannot exhaust the stack.
///
/// Numbers follow ``JSONValue``: an integral value that fits in 64 bits is `.integer` (as
/// `JSONDecoder` reads `1.0` or `1e2` as an integer), any other `.number`. A leading UTF-8 byte
/// order mark is skipped. Error messages give a byte offset and never quote the input, which may
/// hold a token.
package struct JSONParser {
  /// Why the text is not JSON, and where.
  package struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    var problem: String
    /// The byte offset where it was found.
    var offset: Int

    package var description: String { "\(problem) at byte \(offset)" }
  }

  /// Deeper nesting is rejected; the same limit as `JSONDecoder`'s.
  static let maximumDepth = 512

  /// Parses `data` as one JSON value.
  package static func parse(_ data: Data) throws(SyntaxError) -> JSONValue {
    let result: Result<JSONValue, SyntaxError> = data.withUnsafeBytes { raw in
      var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self))
      do throws(SyntaxError) {
        return .success(try parser.parseDocument())
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  private var index = 0
  private var depth = 0

  private init(bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
  }

  private mutating func parseDocument() throws(SyntaxError) -> JSONValue {
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    skipWhitespace()
    let value = try parseValue()
    skipWhitespace()
    guard index == bytes.count else { throw error("unexpected text after the value") }
    return value
  }

  private func error(_ problem: String) -> SyntaxError {
    SyntaxError(problem: problem, offset: index)
  }

  private mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
        index += 1
      default:
        return
      }
    }
  }

  private mutating func parseValue() throws(SyntaxError) -> JSONValue {
    guard index < bytes.count else { throw error("unexpected end of input") }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"):
      try expectLiteral("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try expectLiteral("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try expectLiteral("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return try parseNumber()
    default:
      throw error("unexpected character")
    }
  }

  private mutating func expectLiteral(_ literal: StaticString) throws(SyntaxError) {
    let count = literal.utf8CodeUnitCount
    guard bytes.count - index >= count else { throw error("unexpected end of input") }
    for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
      throw error("unexpected character")
    }
    index += count
  }

  private mutating func enter() throws(SyntaxError) {
    depth += 1
    guard depth <= Self.maximumDepth else {
      throw error("nested deeper than \(Self.maximumDepth) levels")
    }
  }

  private mutating func parseObject() throws(SyntaxError) -> JSONValue {
    try enter()
    defer { depth -= 1 }
    index += 1
    var object: [String: JSONValue] = [:]
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      return .object(object)
    }
    while true {
      skipWhitespace()
      guard index < bytes.count else { throw error("unexpected end of input") }
      guard bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
      let keyOffset = index
      let key = try parseString()
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
        throw error("expected ':'")
      }
      index += 1
      skipWhitespace()
      let value = try parseValue()
      guard object.updateValue(value, forKey: key) == nil else {
        throw SyntaxError(problem: "duplicate key", offset: keyOffset)
      }
      skipWhitespace()
      guard index < bytes.count else { throw error("unexpected end of input") }
      switch bytes[index] {
      case UInt8(ascii: ","):
        index += 1
      case UInt8(ascii: "}"):
        index += 1
        return .object(object)
      default:
        throw error("expected ',' or '}'")
      }
    }
  }

  private mutating func parseArray() throws(SyntaxError) -> JSONValue {
    try enter()
    defer { depth -= 1 }
    index += 1
    var array: [JSONValue] = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return .array(array)
    }
    while true {
      skipWhitespace()
      array.append(try parseValue())
      skipWhitespace()
      guard index < bytes.count else { throw error("unexpected end of input") }
      switch bytes[index] {
      case UInt8(ascii: ","):
        index += 1
      case UInt8(ascii: "]"):
        index += 1
        return .array(array)
      default:
        throw error("expected ',' or ']'")
      }
    }
  }

  /// A string: the common case (no escapes) is one validated copy of its bytes, and one
  /// without validation when every byte is ASCII, which is always valid UTF-8, so the
  /// generic validating initializer runs only on strings that need it.
  private mutating func parseString() throws(SyntaxError) -> String {
    index += 1
    let start = index
    var escaped = false
    var ascii = true
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        break
      } else if byte == UInt8(ascii: "\\") {
        escaped = true
        index += 2
      } else if byte < 0x20 {
        throw error("control character in a string")
      } else {
        if byte >= 0x80 { ascii = false }
        index += 1
      }
    }
    guard index < bytes.count else { throw error("unterminated string") }
    let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
    index += 1
    if !escaped, ascii {
      return String(decoding: raw, as: UTF8.self)
    }
    if !escaped {
      guard let text = String(validatingUTF8Bytes: raw) else {
        throw SyntaxError(problem: "invalid UTF-8", offset: start)
      }
      return text
    }
    return try unescape(raw, at: start)
  }

  private func unescape(
    _ raw: UnsafeBufferPointer<UInt8>, at start: Int
  ) throws(SyntaxError) -> String {
    var utf8: [UInt8] = []
    utf8.reserveCapacity(raw.count)
    var position = 0
    func fail(_ problem: String) -> SyntaxError {
      SyntaxError(problem: problem, offset: start + position)
    }
    func hex4(at offset: Int) throws(SyntaxError) -> UInt32 {
      guard offset + 4 <= raw.count else { throw fail("bad \\u escape") }
      var value: UInt32 = 0
      for byte in raw[offset..<offset + 4] {
        let digit: UInt32
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
        default: throw fail("bad \\u escape")
        }
        value = value << 4 | digit
      }
      return value
    }
    while position < raw.count {
      let byte = raw[position]
      guard byte == UInt8(ascii: "\\") else {
        utf8.append(byte)
        position += 1
        continue
      }
      guard position + 1 < raw.count else { throw fail("bad escape") }
      let escape = raw[position + 1]
      switch escape {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
      case UInt8(ascii: "b"): utf8.append(0x08)
      case UInt8(ascii: "f"): utf8.append(0x0C)
      case UInt8(ascii: "n"): utf8.append(0x0A)
      case UInt8(ascii: "r"): utf8.append(0x0D)
      case UInt8(ascii: "t"): utf8.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = try hex4(at: position + 2)
        if (0xD800...0xDBFF).contains(scalar) {
          guard position + 7 < raw.count, raw[position + 6] == UInt8(ascii: "\\"),
            raw[position + 7] == UInt8(ascii: "u")
          else { throw fail("lone surrogate in \\u escape") }
          let low = try hex4(at: position + 8)
          guard (0xDC00...0xDFFF).contains(low) else { throw fail("lone surrogate in \\u escape") }
          scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          position += 6
        } else if (0xDC00...0xDFFF).contains(scalar) {
          throw fail("lone surrogate in \\u escape")
        }
        position += 4
        guard let unicode = Unicode.Scalar(scalar) else { throw fail("bad \\u escape") }
        utf8.append(contentsOf: UTF8.encode(unicode).map { Array($0) } ?? [])
      default:
        throw fail("bad escape")
      }
      position += 2
    }
    guard let text = String(validatingUTF8Bytes: utf8) else {
      throw SyntaxError(problem: "invalid UTF-8", offset: start)
    }
    return text
  }

  /// A number in RFC 8259's grammar.
  private mutating func parseNumber() throws(SyntaxError) -> JSONValue {
    let start = index
    func digits() -> Int {
      let first = index
      while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
        index += 1
      }
      return index - first
    }
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    guard index < bytes.count else { throw error("bad number") }
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
      if index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
        throw error("leading zero in a number")
      }
    } else if digits() == 0 {
      throw error("bad number")
    }
    var integral = true
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      integral = false
      index += 1
      guard digits() > 0 else { throw error("bad number") }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      integral = false
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
      {
        index += 1
      }
      guard digits() > 0 else { throw error("bad number") }
    }
    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    if integral, let integer = Int64(text) { return .integer(integer) }
    guard let number = Double(text), number.isFinite else {
      throw SyntaxError(problem: "number out of range", offset: start)
    }
    // As `JSONDecoder` does, an integral value that fits is an integer, however written.
    if number == number.rounded(), abs(number) < 9.2e18, let integer = Int64(exactly: number) {
      return .integer(integer)
    }
    return .number(number)
  }
}
