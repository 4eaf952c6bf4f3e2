import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

@Suite("JSONParser: RFC 8259 text to JSONValue")
struct JSONParserTests {
  static let valid: [(String, JSONValue)] = [
    ("null", .null), ("true", .bool(true)), (" false ", .bool(false)),
    ("0", .integer(0)), ("-0", .integer(0)), ("42", .integer(42)),
    ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
    ("9223372036854775808", .number(9_223_372_036_854_775_808)),
    ("1.5", .number(1.5)), ("1.0", .integer(1)), ("1e2", .integer(100)),
    ("-2.5E-3", .number(-0.0025)),
    ("1e-400", .integer(0)),
    (#""""#, .string("")), (#""héllo""#, .string("héllo")),
    (#""a\"b\\c\/d\b\f\n\r\t""#, .string("a\"b\\c/d\u{8}\u{c}\n\r\t")),
    (#""\u00e9\uD83D\uDE00""#, .string("é😀")),
    ("[]", .array([])),
    ("[1, [2, {}]]", .array([.integer(1), .array([.integer(2), .object([:])])])),
    (
      #"{"a": {"b": [null]}, "c": "d"}"#,
      .object(["a": .object(["b": .array([.null])]), "c": .string("d")])
    ),
    ("\u{FEFF}{}", .object([:])),
  ]

  @Test("valid text parses to its value", arguments: 0..<valid.count)
  func validText(_ index: Int) throws {
    let (text, expected) = Self.valid[index]
    #expect(try JSONParser.parse(Data(text.utf8)) == expected, "\(text)")
  }

  static let invalid: [(String, String)] = [
    ("", "unexpected end of input at byte 0"), ("[1,]", "unexpected character at byte 3"),
    (#"{"a":1,}"#, "expected a key at byte 7"), (#"{"a":1,"a":2}"#, "duplicate key at byte 7"),
    ("01", "leading zero in a number at byte 1"), ("1.", "bad number at byte 2"),
    (".5", "unexpected character at byte 0"),
    ("-", "bad number at byte 1"), ("1E400", "number out of range at byte 0"),
    ("{} x", "unexpected text after the value at byte 3"),
    ("\"a\tb\"", "control character in a string at byte 2"),
    (#""\ud800""#, "lone surrogate in \\u escape at byte 1"),
    (#""\udc00x""#, "lone surrogate in \\u escape at byte 1"), (#""\q""#, "bad escape at byte 1"),
    (#""\u12g4""#, "bad \\u escape at byte 1"),
    ("tru", "unexpected end of input at byte 0"), ("nul1", "unexpected character at byte 0"),
    (#"{"a" 1}"#, "expected ':' at byte 5"),
    ("[1 2]", "expected ',' or ']' at byte 3"), (#""abc"#, "unterminated string at byte 4"),
  ]

  @Test("invalid text is an error naming the problem and the byte", arguments: 0..<invalid.count)
  func invalidText(_ index: Int) {
    let (text, expected) = Self.invalid[index]
    #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(Data(text.utf8)) }
    do {
      _ = try JSONParser.parse(Data(text.utf8))
    } catch {
      #expect(error.description == expected, "\(text)")
    }
  }

  @Test("invalid UTF-8 is an error, inside a string and out")
  func invalidUTF8() {
    #expect(throws: JSONParser.SyntaxError(problem: "invalid UTF-8", offset: 1)) {
      try JSONParser.parse(Data([0x22, 0xFF, 0x22]))
    }
    #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(Data([0x7B, 0xFF, 0x7D])) }
  }

  @Test("nesting deeper than 512 levels is an error, not a crash")
  func depthLimit() throws {
    let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    #expect(throws: Never.self) { try JSONParser.parse(Data(deepest.utf8)) }
    let tooDeep = String(repeating: "[", count: 100_000)
    #expect(throws: JSONParser.SyntaxError(problem: "nested deeper than 512 levels", offset: 512)) {
      try JSONParser.parse(Data(tooDeep.utf8))
    }
  }

  @Test("errors never quote the input")
  func noInputInErrors() {
    let secret = "SECRET-ACCESS-TOKEN"
    for text in [#"{"token": SECRET-ACCESS-TOKEN}"#, #"{"token": "SECRET-ACCESS-TOKEN\q"}"#] {
      do {
        _ = try JSONParser.parse(Data(text.utf8))
        Issue.record("parsed \(text)")
      } catch {
        #expect(!error.description.contains(secret))
      }
    }
  }

  /// Random JSON values, encoded by `JSONEncoder`, read by both parsers.
  @Test("agrees with JSONDecoder on 2,000 generated documents")
  func agreesWithJSONDecoder() throws {
    var generator = SplitMix64(seed: 11)
    for _ in 0..<2_000 {
      let value = Self.randomValue(depth: 0, using: &generator)
      let data = try JSONEncoder().encode(value)
      let ours = try JSONParser.parse(data)
      let theirs = try JSONDecoder().decode(JSONValue.self, from: data)
      #expect(ours == theirs, "\(String(decoding: data, as: UTF8.self))")
    }
  }

  static func randomValue(depth: Int, using generator: inout SplitMix64) -> JSONValue {
    switch generator.next() % (depth > 3 ? 5 : 7) {
    case 0: return .null
    case 1: return .bool(generator.next() % 2 == 0)
    case 2: return .integer(Int64(bitPattern: generator.next()) >> (generator.next() % 64))
    case 3:
      let value = Double(Int64(bitPattern: generator.next()) >> 20) / 1024
      return value == value.rounded() ? .integer(Int64(value)) : .number(value)
    case 4:
      let alphabet = Array("aé\"\\/\n\t😀z \u{1}\u{7f}")
      return .string(
        String(
          (0..<(generator.next() % 8)).map { _ in
            alphabet[Int(generator.next() % UInt64(alphabet.count))]
          }))
    case 5:
      return .array(
        (0..<(generator.next() % 4)).map { _ in randomValue(depth: depth + 1, using: &generator) })
    default:
      var object: [String: JSONValue] = [:]
      for index in 0..<(generator.next() % 4) {
        object["k\(index)\(generator.next() % 3)"] = randomValue(
          depth: depth + 1, using: &generator)
      }
      return .object(object)
    }
  }
}
