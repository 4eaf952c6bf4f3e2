#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Reads the fields of one JSON object while tracking the path, so every error names the field.
///
/// Whatever the reader was not asked for is left in ``unknownFields``, which the model keeps and
/// writes back.
struct JSONObjectReader {
  let path: String
  private var remaining: [String: JSONValue]

  init(_ value: JSONValue, path: String) throws(SnapshotError) {
    guard case .object(let fields) = value else {
      throw SnapshotError(
        path: path, problem: .wrongType(expected: "an object", found: value.typeName))
    }
    self.path = path
    self.remaining = fields
  }

  /// The fields no `read` call took.
  var unknownFields: [String: JSONValue] { remaining }

  /// The path of `key` inside this object.
  func path(of key: String) -> String {
    path.isEmpty ? key : "\(path).\(key)"
  }

  /// Takes `key`, treating `null` like an absent field.
  mutating func take(_ key: String) -> JSONValue? {
    switch remaining.removeValue(forKey: key) {
    case .none, .null?: nil
    case let value?: value
    }
  }

  mutating func required<T>(
    _ key: String, _ convert: (JSONValue, String) throws(SnapshotError) -> T
  ) throws(SnapshotError) -> T {
    guard let value = take(key) else {
      throw SnapshotError(path: path(of: key), problem: .missing)
    }
    return try convert(value, path(of: key))
  }

  mutating func optional<T>(
    _ key: String, _ convert: (JSONValue, String) throws(SnapshotError) -> T
  ) throws(SnapshotError) -> T? {
    guard let value = take(key) else { return nil }
    return try convert(value, path(of: key))
  }
}

/// Conversions from a JSON value at a path to a model field, each failing with a typed error.
enum JSONField {
  static func string(_ value: JSONValue, _ path: String) throws(SnapshotError) -> String {
    guard case .string(let text) = value else { throw wrongType("a string", value, path) }
    return text
  }

  static func bool(_ value: JSONValue, _ path: String) throws(SnapshotError) -> Bool {
    guard case .bool(let flag) = value else { throw wrongType("a boolean", value, path) }
    return flag
  }

  static func count(_ value: JSONValue, _ path: String) throws(SnapshotError) -> Int {
    guard case .integer(let number) = value, let count = Int(exactly: number) else {
      throw wrongType("an integer", value, path)
    }
    guard count >= 0 else {
      throw SnapshotError(path: path, problem: .invalidValue("must not be negative"))
    }
    return count
  }

  static func date(_ value: JSONValue, _ path: String) throws(SnapshotError) -> Date {
    guard case .string(let text) = value else { throw wrongType("a string", value, path) }
    guard let date = ISO8601.parse(text) else {
      if ISO8601.isOutOfRange(text) {
        throw SnapshotError(
          path: path,
          problem: .invalidValue("out of range: dates are years 0000 through 9999 in UTC"))
      }
      throw SnapshotError(path: path, problem: .invalidDate)
    }
    return date
  }

  static func openEnum<Known>(
    _ value: JSONValue, _ path: String
  ) throws(SnapshotError) -> OpenEnum<Known> {
    OpenEnum(rawValue: try string(value, path))
  }

  static func array<T>(
    _ value: JSONValue, _ path: String,
    _ element: (JSONValue, String) throws(SnapshotError) -> T
  ) throws(SnapshotError) -> [T] {
    guard case .array(let items) = value else { throw wrongType("an array", value, path) }
    var result: [T] = []
    result.reserveCapacity(items.count)
    for (index, item) in items.enumerated() {
      result.append(try element(item, "\(path)[\(index)]"))
    }
    return result
  }

  static func object<T>(
    _ value: JSONValue, _ path: String,
    _ member: (JSONValue, String) throws(SnapshotError) -> T
  ) throws(SnapshotError) -> [String: T] {
    guard case .object(let fields) = value else { throw wrongType("an object", value, path) }
    var result: [String: T] = [:]
    result.reserveCapacity(fields.count)
    for (key, item) in fields {
      result[key] = try member(item, "\(path).\(key)")
    }
    return result
  }

  private static func wrongType(
    _ expected: String, _ value: JSONValue, _ path: String
  ) -> SnapshotError {
    SnapshotError(path: path, problem: .wrongType(expected: expected, found: value.typeName))
  }
}

/// Builds JSON objects for encoding, leaving out absent optionals and keeping unknown fields.
struct JSONObjectWriter {
  private(set) var fields: [String: JSONValue]

  init(unknownFields: [String: JSONValue]) {
    fields = unknownFields
  }

  mutating func set(_ key: String, _ value: JSONValue?) {
    if let value { fields[key] = value }
  }

  var value: JSONValue { .object(fields) }
}

extension JSONValue {
  init(_ date: Date) { self = .string(ISO8601.format(date)) }
  init<Known>(_ value: OpenEnum<Known>) { self = .string(value.rawValue) }
}
