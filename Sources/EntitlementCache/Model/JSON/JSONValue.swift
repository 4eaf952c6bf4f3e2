#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Any JSON value. Holds the fields of a snapshot this build does not know, so they are kept
/// and written back unchanged (forward compatibility).
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible,
  CustomReflectable
{
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number written without a fraction or exponent that fits in 64 bits.
  case integer(Int64)
  /// Any other number.
  case number(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object. Key order is not significant in JSON and is not kept.
  case object([String: JSONValue])

  /// The value's shape, never a string's text: a field this build does not know may carry a
  /// token (`string(23 bytes)`, `object(2 keys: a, b)`, `array(3)`, numbers and booleans as
  /// they are).
  public var description: String {
    switch self {
    case .null: "null"
    case .bool(let value): "\(value)"
    case .integer(let value): "\(value)"
    case .number(let value): "\(value)"
    case .string(let text): "string(\(text.utf8.count) bytes)"
    case .array(let items): "array(\(items.count))"
    case .object(let fields):
      "object(\(fields.count) keys: \(fields.keys.sorted().joined(separator: ", ")))"
    }
  }

  /// ``description`` alone, so `dump` and debuggers show no string's text either.
  public var customMirror: Mirror { Mirror(self, children: ["shape": description]) }

  /// Parses `data` as one JSON value with the rules a snapshot is read with.
  ///
  /// The rules are strict where leniency would let two readers of the same bytes see different
  /// values, so an adapter that reads another format's body with them refuses what the cache
  /// would: `JSONSerialization` and `JSONDecoder` keep one of two values for a repeated key.
  /// - The text is JSON (RFC 8259) in UTF-8: no trailing comma, control character in a string,
  ///   lone surrogate, number beyond `Double`'s range or text after the value. A leading byte
  ///   order mark is skipped.
  /// - No object repeats a key. Keys compare as Swift compares strings, so two spellings of one
  ///   key (a composed `é` and `e` with a combining accent) are a repeat.
  /// - Arrays and objects nest at most 512 deep, so hostile input cannot exhaust the stack.
  ///
  /// An integral number that fits in 64 bits is ``integer(_:)`` however it is written (`1.0`,
  /// `1e2`), as `JSONDecoder` reads it; any other is ``number(_:)``. No size limit applies:
  /// check the size first where one matters.
  ///
  /// - Parameter data: The JSON text.
  /// - Throws: ``SnapshotError`` with an empty path (the whole input) and the problem
  ///   ``SnapshotError/Problem/malformedJSON(detail:)``, whose detail is what is wrong, then
  ///   ` at byte ` and the offset where it was found, never the input's text: `unexpected end
  ///   of input at byte 55`, or `duplicate key at byte 120` at a repeated key's second
  ///   occurrence. It is the error ``CustomerInfoSnapshot`` throws for a body that is not JSON:
  ///   both come from this one mapping.
  public init(parsing data: Data) throws(SnapshotError) {
    do {
      self = try JSONParser.parse(data)
    } catch {
      throw SnapshotError(path: "", problem: .malformedJSON(detail: error.description))
    }
  }

  /// Decodes any JSON value.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .integer(value)
    } else if let value = try? container.decode(Double.self) {
      self = .number(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  /// Encodes the value as JSON.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .integer(let value): try container.encode(value)
    case .number(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    }
  }

  /// The name of the value's JSON type, for error messages that must not echo the value.
  var typeName: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .integer, .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}
