#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A short-lived, signed, opaque token that a trusted backend can forward to the server.
///
/// It expires independently of entitlements; the evaluator removes it from the evaluated
/// CustomerInfo once `expiresAt` has passed.
public struct AccessContext: Sendable, Hashable, JSONModel, CustomStringConvertible {
  /// The opaque token. Redacted from every description.
  public var token: AccessToken
  /// When the token stops being valid.
  public var expiresAt: Date
  /// Fields this build does not know, kept as the server sent them.
  package var unknownFields: [String: JSONValue]

  /// Creates an access context.
  package init(token: AccessToken, expiresAt: Date, unknownFields: [String: JSONValue] = [:]) {
    self.token = token
    self.expiresAt = expiresAt
    self.unknownFields = unknownFields
  }

  /// `AccessContext(expires 2026-11-30T12:15:00Z)`: never the token.
  public var description: String { "AccessContext(expires \(ISO8601.format(expiresAt)))" }

  init(json: JSONValue, path: String) throws(SnapshotError) {
    var reader = try JSONObjectReader(json, path: path)
    token = AccessToken(rawValue: try reader.required("token", JSONField.string))
    expiresAt = try reader.required("expiresAt", JSONField.date)
    unknownFields = reader.unknownFields
  }

  var json: JSONValue {
    var writer = JSONObjectWriter(unknownFields: unknownFields)
    writer.set("token", .string(token.rawValue))
    writer.set("expiresAt", JSONValue(expiresAt))
    return writer.value
  }
}
