/// A model type read from and written to JSON through ``JSONValue``, so reading tracks the field
/// path for errors and unknown fields survive the round trip.
protocol JSONModel: Codable {
  init(json: JSONValue, path: String) throws(SnapshotError)
  var json: JSONValue { get }
}

extension JSONModel {
  /// Decodes the model, naming the failing field in a ``SnapshotError``.
  public init(from decoder: any Decoder) throws {
    let path = decoder.codingPath.map { key in
      key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)"
    }.joined()
    try self.init(json: try JSONValue(from: decoder), path: String(path.drop { $0 == "." }))
  }

  /// Encodes the model, unknown fields included.
  public func encode(to encoder: any Encoder) throws {
    try json.encode(to: encoder)
  }
}
