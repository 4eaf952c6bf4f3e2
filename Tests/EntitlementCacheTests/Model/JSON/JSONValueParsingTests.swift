import EntitlementCache
import Foundation
import Testing

/// `JSONValue(parsing:)`, the public entry point to the library's own parser: what an adapter
/// reads another format's body with. Plain `import`, so only public API is reachable.
@Suite("JSONValue(parsing:): the snapshot's strict rules, public")
struct JSONValueParsingTests {
  @Test func parsesAsTheSnapshotIsRead() throws {
    // A byte order mark, then what RevenueCat's `request_date_ms` is, written two ways.
    let text = "\u{FEFF}" + #"{"ms": 1796040000000, "e": 1.7e12, "f": 1.5, "s": "1"}"#
    let value = try JSONValue(parsing: Data(text.utf8))
    #expect(
      value
        == .object([
          "ms": .integer(1_796_040_000_000), "e": .integer(1_700_000_000_000), "f": .number(1.5),
          "s": .string("1"),
        ]))
  }

  /// The detail's shape is documented: adapters read the offset, and tell a repeated key.
  @Test func refusalNamesTheProblemAndTheByte() {
    let cases: [(text: String, detail: String)] = [
      (#"{"a": 1, "a": 2}"#, "duplicate key at byte 9"),
      // Two spellings of one key are one key.
      ("{\"caf\\u00e9\": 1, \"cafe\\u0301\": 2}", "duplicate key at byte 17"),
      (#"{"a": 1,}"#, "expected a key at byte 8"),
      (#"{"a": "#, "unexpected end of input at byte 6"),
      ("[1e400]", "number out of range at byte 1"),
      (String(repeating: "[", count: 600), "nested deeper than 512 levels at byte 512"),
    ]
    for (text, detail) in cases {
      let expected = SnapshotError(path: "", problem: .malformedJSON(detail: detail))
      #expect(throws: expected, "\(text)") { try JSONValue(parsing: Data(text.utf8)) }
    }
    #expect(
      throws: SnapshotError(path: "", problem: .malformedJSON(detail: "invalid UTF-8 at byte 2"))
    ) {
      try JSONValue(parsing: Data([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]))
    }
  }

  /// One mapping from the parser's error: a snapshot that is not JSON is refused with the
  /// error `JSONValue(parsing:)` throws.
  @Test func snapshotRefusesNonJSONWithTheSameError() throws {
    for text in [#"{"requestDate": 1, "requestDate": 2}"#, "{", "nul"] {
      let data = Data(text.utf8)
      var parsing: SnapshotError?
      do { _ = try JSONValue(parsing: data) } catch { parsing = error }
      let error = try #require(parsing, "\(text)")
      #expect(throws: error, "\(text)") { try CustomerInfoSnapshot(jsonData: data) }
    }
  }
}
