#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One entitlement of a snapshot, as the server reported it.
///
/// These are the server's facts. Whether the entitlement grants access *now* is decided by the
/// evaluator on every read, from these fields and the clock.
public struct EntitlementInfo: Sendable, Hashable, JSONModel {
  /// The server's status. An unknown value grants nothing.
  public var status: OpenEnum<EntitlementStatus>
  /// When access ends; nil for lifetime access and some contracts.
  public var expiresAt: Date?
  /// When a `grace` status ends; falls back to ``expiresAt`` when absent.
  public var gracePeriodExpiresAt: Date?
  /// When the server last verified the entitlement; bounds offline use of non-expiring access.
  public var verifiedAt: Date?
  /// The store product that grants the entitlement.
  public var productId: String?
  /// Where the access comes from.
  public var source: OpenEnum<EntitlementSource>?
  /// Whether the subscription renews.
  public var willRenew: Bool?
  /// Fields this build does not know, kept as the server sent them.
  package var unknownFields: [String: JSONValue]

  /// Creates an entitlement.
  package init(
    status: OpenEnum<EntitlementStatus>, expiresAt: Date? = nil,
    gracePeriodExpiresAt: Date? = nil, verifiedAt: Date? = nil, productId: String? = nil,
    source: OpenEnum<EntitlementSource>? = nil, willRenew: Bool? = nil,
    unknownFields: [String: JSONValue] = [:]
  ) {
    self.status = status
    self.expiresAt = expiresAt
    self.gracePeriodExpiresAt = gracePeriodExpiresAt
    self.verifiedAt = verifiedAt
    self.productId = productId
    self.source = source
    self.willRenew = willRenew
    self.unknownFields = unknownFields
  }

  init(json: JSONValue, path: String) throws(SnapshotError) {
    var reader = try JSONObjectReader(json, path: path)
    status = try reader.required("status", JSONField.openEnum)
    expiresAt = try reader.optional("expiresAt", JSONField.date)
    gracePeriodExpiresAt = try reader.optional("gracePeriodExpiresAt", JSONField.date)
    verifiedAt = try reader.optional("verifiedAt", JSONField.date)
    productId = try reader.optional("productId", JSONField.string)
    source = try reader.optional("source", JSONField.openEnum)
    willRenew = try reader.optional("willRenew", JSONField.bool)
    unknownFields = reader.unknownFields
  }

  var json: JSONValue {
    var writer = JSONObjectWriter(unknownFields: unknownFields)
    writer.set("status", JSONValue(status))
    writer.set("expiresAt", expiresAt.map(JSONValue.init))
    writer.set("gracePeriodExpiresAt", gracePeriodExpiresAt.map(JSONValue.init))
    writer.set("verifiedAt", verifiedAt.map(JSONValue.init))
    writer.set("productId", productId.map(JSONValue.string))
    writer.set("source", source.map(JSONValue.init))
    writer.set("willRenew", willRenew.map(JSONValue.bool))
    return writer.value
  }
}
