import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// `Schemas/customer-info-snapshot.schema.json` says what the decoder does: every documented
/// example validates, and for every field of a full snapshot, taking it away, giving it the
/// wrong type or `null` is refused by the schema exactly when the decoder refuses it.
@Suite("Snapshot format: the JSON Schema and the decoder agree")
struct SnapshotSchemaTests {
  static let root = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  static func schema() throws -> SchemaValidator {
    let data = try Data(
      contentsOf: root.appendingPathComponent("Schemas/customer-info-snapshot.schema.json"))
    return SchemaValidator(try JSONParser.parse(data))
  }

  static func decodes(_ value: JSONValue) -> Bool {
    (try? CustomerInfo(json: value, path: "")) != nil
  }

  /// The JSON blocks the tool's manual writes to files its examples read, by file name.
  static func manualFiles() throws -> [String: String] {
    let files = Documentation.namedFiles(in: try Documentation.article("CommandLineTool"))
    return Dictionary(files.map { ($0.name, $0.content) }) { _, last in last }
  }

  @Test("the sample snapshot and the documented ones validate; the manual's bad one does not")
  func documentedExamples() throws {
    let schema = try Self.schema()
    let sample = try JSONParser.parse(Data(SampleSnapshot.json.utf8))
    #expect(schema.errors(sample).isEmpty, "\(schema.errors(sample))")
    #expect(Self.decodes(sample))
    let formatExamples = Documentation.fencedBlocks(
      "json", in: try Documentation.article("SnapshotFormat"))
    #expect(!formatExamples.isEmpty, "SnapshotFormat.md shows no example")
    for example in formatExamples {
      let value = try JSONParser.parse(Data(example.utf8))
      #expect(schema.errors(value).isEmpty, "\(schema.errors(value))")
      #expect(Self.decodes(value))
    }
    let files = try Self.manualFiles()
    let good = try JSONParser.parse(Data(try #require(files["snapshot.json"]).utf8))
    #expect(schema.errors(good).isEmpty, "\(schema.errors(good))")
    #expect(Self.decodes(good))
    let bad = try JSONParser.parse(Data(try #require(files["bad.json"]).utf8))
    #expect(!schema.errors(bad).isEmpty)
    #expect(!Self.decodes(bad))
  }

  @Test(
    "for every field: absent, of the wrong type, or null, the schema refuses what the decoder refuses"
  )
  func schemaAndDecoderAgree() throws {
    let schema = try Self.schema()
    let sample = try JSONParser.parse(Data(SampleSnapshot.json.utf8))
    let paths = Self.fieldPaths(in: sample)
    #expect(paths.count > 40, "walked \(paths.count) fields")
    var requiredSeen = 0
    for path in paths {
      let variants: [(String, JSONValue?)] = [
        ("absent", nil), ("null", .null),
        ("of the wrong type", Self.wrongType(for: path, in: sample)),
      ]
      for (name, replacement) in variants {
        let changed = Self.replacing(path, in: sample, with: replacement)
        let decoderAccepts = Self.decodes(changed)
        let schemaErrors = schema.errors(changed)
        #expect(
          decoderAccepts == schemaErrors.isEmpty,
          """
          \(path.joined(separator: ".")) \(name): the decoder \(decoderAccepts ? "accepts" : "refuses"), \
          the schema \(schemaErrors.isEmpty ? "accepts" : "refuses: \(schemaErrors)")
          """)
        if name == "absent", !decoderAccepts { requiredSeen += 1 }
      }
    }
    // requestDate, entitlements, each entitlement's status, and the required fields of every
    // nested object of the sample.
    #expect(requiredSeen >= 12, "\(requiredSeen) required fields found")
  }

  // MARK: Walking the sample

  /// Every field of `value`, as paths of keys (an array's first element as "0"), an object's
  /// fields before the fields inside them.
  static func fieldPaths(in value: JSONValue, under prefix: [String] = []) -> [[String]] {
    switch value {
    case .object(let fields):
      return fields.keys.sorted().flatMap { key -> [[String]] in
        let path = prefix + [key]
        return [path] + fieldPaths(in: fields[key] ?? .null, under: path)
      }
    case .array(let items):
      guard let first = items.first else { return [] }
      return fieldPaths(in: first, under: prefix + ["0"])
    default:
      return []
    }
  }

  /// `value` with the field at `path` set to `replacement`, or removed when it is nil.
  static func replacing(_ path: [String], in value: JSONValue, with replacement: JSONValue?)
    -> JSONValue
  {
    guard let key = path.first else { return replacement ?? .null }
    let rest = Array(path.dropFirst())
    switch value {
    case .object(var fields):
      if rest.isEmpty {
        fields[key] = replacement
      } else if let inner = fields[key] {
        fields[key] = replacing(rest, in: inner, with: replacement)
      }
      return .object(fields)
    case .array(var items):
      guard let index = Int(key), items.indices.contains(index) else { return value }
      if rest.isEmpty {
        if let replacement { items[index] = replacement } else { items.remove(at: index) }
      } else {
        items[index] = replacing(rest, in: items[index], with: replacement)
      }
      return .array(items)
    default:
      return value
    }
  }

  /// A value of a type the field at `path` does not hold: a number for text, text otherwise.
  static func wrongType(for path: [String], in value: JSONValue) -> JSONValue {
    var current = value
    for key in path {
      switch current {
      case .object(let fields): current = fields[key] ?? .null
      case .array(let items):
        current = Int(key).flatMap { items.indices.contains($0) ? items[$0] : nil } ?? .null
      default: current = .null
      }
    }
    if case .string = current { return .integer(7) }
    return .string("seven")
  }
}

/// The part of JSON Schema (2020-12) the snapshot's schema uses: `type` (one or a list),
/// `required`, `properties`, `additionalProperties` (a schema), `items`, `oneOf`, `$ref` within
/// the document, `minimum`, and `format: date-time`, checked by the library's own ISO-8601
/// parser. Every other keyword is an annotation.
struct SchemaValidator {
  let document: JSONValue

  init(_ document: JSONValue) {
    self.document = document
  }

  /// Why `value` does not validate, as `path: problem`; empty when it does.
  func errors(_ value: JSONValue) -> [String] {
    errors(value, against: document, at: "")
  }

  private func errors(_ value: JSONValue, against schema: JSONValue, at path: String) -> [String] {
    guard case .object(let rules) = schema else { return [] }
    var found: [String] = []
    if case .string(let reference)? = rules["$ref"] {
      guard let target = resolve(reference) else { return ["\(path): unresolved \(reference)"] }
      found += errors(value, against: target, at: path)
    }
    if case .array(let choices)? = rules["oneOf"] {
      let passing = choices.filter { errors(value, against: $0, at: path).isEmpty }.count
      if passing != 1 { found.append("\(path): matches \(passing) of oneOf, not 1") }
    }
    if let type = rules["type"] {
      let allowed: [String]
      switch type {
      case .string(let one): allowed = [one]
      case .array(let many):
        allowed = many.compactMap { if case .string(let t) = $0 { t } else { nil } }
      default: allowed = []
      }
      guard allowed.contains(where: { Self.has(value, type: $0) }) else {
        return found + ["\(path): \(value.typeName), not \(allowed.joined(separator: " or "))"]
      }
    }
    if case .string("date-time")? = rules["format"], case .string(let text) = value,
      ISO8601.parse(text) == nil
    {
      found.append("\(path): not a date-time")
    }
    if case .integer(let minimum)? = rules["minimum"], case .integer(let number) = value,
      number < minimum
    {
      found.append("\(path): below \(minimum)")
    }
    if case .object(let fields) = value {
      if case .array(let required)? = rules["required"] {
        for case .string(let key) in required where fields[key] == nil {
          found.append("\(path).\(key): missing")
        }
      }
      let properties: [String: JSONValue] =
        if case .object(let declared)? = rules["properties"] { declared } else { [:] }
      for (key, field) in fields {
        if let rule = properties[key] {
          found += errors(field, against: rule, at: "\(path).\(key)")
        } else if let additional = rules["additionalProperties"], case .object = additional {
          found += errors(field, against: additional, at: "\(path).\(key)")
        }
      }
    }
    if case .array(let items) = value, let rule = rules["items"] {
      for (index, item) in items.enumerated() {
        found += errors(item, against: rule, at: "\(path)[\(index)]")
      }
    }
    return found
  }

  private func resolve(_ reference: String) -> JSONValue? {
    guard reference.hasPrefix("#/") else { return nil }
    var current = document
    for key in reference.dropFirst(2).split(separator: "/") {
      guard case .object(let fields) = current, let next = fields[String(key)] else { return nil }
      current = next
    }
    return current
  }

  private static func has(_ value: JSONValue, type: String) -> Bool {
    switch (value, type) {
    case (.null, "null"), (.bool, "boolean"), (.string, "string"), (.array, "array"),
      (.object, "object"), (.integer, "integer"), (.integer, "number"), (.number, "number"):
      true
    default:
      false
    }
  }
}
