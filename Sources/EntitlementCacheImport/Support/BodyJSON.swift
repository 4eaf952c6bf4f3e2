import Foundation

/// A JSON value of the body being imported, parsed strictly.
///
/// Not `JSONSerialization` or `JSONDecoder`: both keep one of two values for a repeated key
/// (and Swift merges two keys that differ only in Unicode normalization), and the first cannot
/// tell `true` from `1` on every platform. The cache's own parser refuses a repeated key, so
/// this one does: an import must not believe one of two `expires_date`s.
indirect enum BodyJSON {
  case null
  case bool(Bool)
  /// A number, as written: only `request_date_ms` reads one, and reads it exactly.
  case number(String)
  case string(String)
  case array([BodyJSON])
  case object([String: BodyJSON])

  /// What the value is, for an error: `a string`, `an object`.
  var kind: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }

  /// Parses `data` as one JSON value. A repeated key is reported at its path, anything else
  /// that is not JSON at its byte offset.
  static func parse(_ data: Data) throws(RevenueCatImportError) -> BodyJSON {
    var parser = Parser(bytes: Array(data))
    return try parser.parseDocument()
  }
}

/// `parent.key`, or `key` at the top level: the path errors name.
func fieldPath(_ parent: String, _ key: String) -> String {
  parent.isEmpty ? key : parent + "." + key
}

private struct Parser {
  /// Deeper nesting is refused, as `JSONDecoder` and the cache refuse it, so a hostile body
  /// cannot exhaust the stack.
  static let maximumDepth = 512

  let bytes: [UInt8]
  var index = 0
  var depth = 0

  init(bytes: [UInt8]) {
    self.bytes = bytes
  }

  mutating func parseDocument() throws(RevenueCatImportError) -> BodyJSON {
    // Invalid UTF-8 anywhere is refused before any string is read: decoding replaces it, so the
    // bytes decoded and re-encoded differ exactly where it is.
    let decoded = Array(String(decoding: bytes, as: UTF8.self).utf8)
    if decoded != bytes {
      let fault = zip(decoded, bytes).prefix { $0 == $1 }.count
      throw malformed(at: fault)
    }
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    let value = try parseValue(path: "")
    skipWhitespace()
    guard index == bytes.count else { throw malformed(at: index) }
    return value
  }

  func malformed(at offset: Int) -> RevenueCatImportError {
    RevenueCatImportError("", .malformedJSON(byteOffset: offset))
  }

  mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0A, 0x0D: index += 1
      default: return
      }
    }
  }

  mutating func parseValue(path: String) throws(RevenueCatImportError) -> BodyJSON {
    skipWhitespace()
    guard index < bytes.count else { throw malformed(at: index) }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject(path: path)
    case UInt8(ascii: "["): return try parseArray(path: path)
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
    case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
    case UInt8(ascii: "n"): return try parseLiteral("null", .null)
    default: return .number(try parseNumber())
    }
  }

  mutating func parseLiteral(_ word: String, _ value: BodyJSON) throws(RevenueCatImportError)
    -> BodyJSON
  {
    let expected = Array(word.utf8)
    guard bytes[index...].starts(with: expected) else { throw malformed(at: index) }
    index += expected.count
    return value
  }

  mutating func enter() throws(RevenueCatImportError) {
    depth += 1
    guard depth <= Self.maximumDepth else { throw malformed(at: index) }
    index += 1
  }

  mutating func parseObject(path: String) throws(RevenueCatImportError) -> BodyJSON {
    try enter()
    defer { depth -= 1 }
    var object: [String: BodyJSON] = [:]
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      return .object(object)
    }
    while true {
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
        throw malformed(at: index)
      }
      let key = try parseString()
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
        throw malformed(at: index)
      }
      index += 1
      let child = fieldPath(path, key)
      let value = try parseValue(path: child)
      // Swift's `==` on the keys, so two spellings of one key (composed and decomposed
      // accents) are a repeat too, as the cache reads entitlement keys.
      guard object.updateValue(value, forKey: key) == nil else {
        throw RevenueCatImportError(child, .duplicateKey)
      }
      skipWhitespace()
      guard index < bytes.count else { throw malformed(at: index) }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
      } else if bytes[index] == UInt8(ascii: "}") {
        index += 1
        return .object(object)
      } else {
        throw malformed(at: index)
      }
    }
  }

  mutating func parseArray(path: String) throws(RevenueCatImportError) -> BodyJSON {
    try enter()
    defer { depth -= 1 }
    var items: [BodyJSON] = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return .array(items)
    }
    while true {
      items.append(try parseValue(path: "\(path)[\(items.count)]"))
      skipWhitespace()
      guard index < bytes.count else { throw malformed(at: index) }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
      } else if bytes[index] == UInt8(ascii: "]") {
        index += 1
        return .array(items)
      } else {
        throw malformed(at: index)
      }
    }
  }

  mutating func parseString() throws(RevenueCatImportError) -> String {
    let start = index
    index += 1
    var text: [UInt8] = []
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return String(decoding: text, as: UTF8.self)
      case UInt8(ascii: "\\"):
        try appendEscape(to: &text)
      case 0..<0x20:
        throw malformed(at: index)
      default:
        text.append(byte)
        index += 1
      }
    }
    throw malformed(at: start)
  }

  mutating func appendEscape(to text: inout [UInt8]) throws(RevenueCatImportError) {
    let at = index
    guard index + 1 < bytes.count else { throw malformed(at: at) }
    let escaped = bytes[index + 1]
    index += 2
    let simple: [UInt8: UInt8] = [
      UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F,
      UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A,
      UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
    ]
    if let byte = simple[escaped] {
      text.append(byte)
      return
    }
    guard escaped == UInt8(ascii: "u"), var scalar = hexQuad() else { throw malformed(at: at) }
    if (0xD800...0xDBFF).contains(scalar) {
      // A high surrogate must be followed by an escaped low one; a lone half is no character.
      guard bytes[index...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
        throw malformed(at: at)
      }
      index += 2
      guard let low = hexQuad(), (0xDC00...0xDFFF).contains(low) else { throw malformed(at: at) }
      scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
    }
    guard let character = Unicode.Scalar(scalar) else { throw malformed(at: at) }
    text.append(contentsOf: Array(String(Character(character)).utf8))
  }

  /// Four hexadecimal digits at `index`, which moves past them.
  mutating func hexQuad() -> UInt32? {
    guard index + 4 <= bytes.count else { return nil }
    var value: UInt32 = 0
    for byte in bytes[index..<index + 4] {
      guard let digit = Character(Unicode.Scalar(byte)).hexDigitValue else { return nil }
      value = value << 4 | UInt32(digit)
    }
    index += 4
    return value
  }

  /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, returned as written.
  mutating func parseNumber() throws(RevenueCatImportError) -> String {
    let start = index
    func digits(_ parser: inout Parser) -> Int {
      let first = parser.index
      while parser.index < parser.bytes.count,
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index])
      {
        parser.index += 1
      }
      return parser.index - first
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
    let integerStart = index
    let integerDigits = digits(&self)
    guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
      throw malformed(at: start)
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard digits(&self) > 0 else { throw malformed(at: start) }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
      {
        index += 1
      }
      guard digits(&self) > 0 else { throw malformed(at: start) }
    }
    return String(decoding: bytes[start..<index], as: UTF8.self)
  }
}
