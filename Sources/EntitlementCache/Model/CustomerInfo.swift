#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The server's CustomerInfo: the customer's entitlements, purchases, and the tokens and device
/// state that go with them, at `requestDate`.
///
/// Decode it from the server's JSON with ``CustomerInfoSnapshot/init(jsonData:signature:requestNonce:sizeLimit:)``,
/// which validates it and keeps the exact bytes for storage.
public struct CustomerInfo: Sendable, Hashable, JSONModel {
  /// The server's time when it produced this snapshot.
  public var requestDate: Date
  /// How the response was verified; `not_requested` when absent.
  public var verification: OpenEnum<VerificationStatus>
  /// The entitlements, by key (`pro`, `premium`).
  public var entitlements: [String: EntitlementInfo]
  /// The store purchases and their ownership.
  public var purchases: [PurchaseInfo]
  /// Store purchases not attributed to this app user.
  public var unclaimedPurchases: [UnclaimedPurchase]
  /// The short-lived token for a trusted backend.
  public var accessContext: AccessContext?
  /// Whether this installation may use the access.
  public var deviceAccess: DeviceAccessInfo?
  /// Fields this build does not know, kept as the server sent them.
  package var unknownFields: [String: JSONValue]

  /// Creates a CustomerInfo.
  package init(
    requestDate: Date, verification: OpenEnum<VerificationStatus> = .known(.notRequested),
    entitlements: [String: EntitlementInfo] = [:], purchases: [PurchaseInfo] = [],
    unclaimedPurchases: [UnclaimedPurchase] = [], accessContext: AccessContext? = nil,
    deviceAccess: DeviceAccessInfo? = nil, unknownFields: [String: JSONValue] = [:]
  ) {
    self.requestDate = requestDate
    self.verification = verification
    self.entitlements = entitlements
    self.purchases = purchases
    self.unclaimedPurchases = unclaimedPurchases
    self.accessContext = accessContext
    self.deviceAccess = deviceAccess
    self.unknownFields = unknownFields
  }

  init(json: JSONValue, path: String) throws(SnapshotError) {
    var reader = try JSONObjectReader(json, path: path)
    requestDate = try reader.required("requestDate", JSONField.date)
    verification = try reader.optional("verification", JSONField.openEnum) ?? .known(.notRequested)
    entitlements = try reader.required("entitlements") { value, path throws(SnapshotError) in
      try JSONField.object(value, path, EntitlementInfo.init(json:path:))
    }
    purchases =
      try reader.optional("purchases") { value, path throws(SnapshotError) in
        try JSONField.array(value, path, PurchaseInfo.init(json:path:))
      } ?? []
    unclaimedPurchases =
      try reader.optional("unclaimedPurchases") { value, path throws(SnapshotError) in
        try JSONField.array(value, path, UnclaimedPurchase.init(json:path:))
      } ?? []
    accessContext = try reader.optional("accessContext", AccessContext.init(json:path:))
    deviceAccess = try reader.optional("deviceAccess", DeviceAccessInfo.init(json:path:))
    unknownFields = reader.unknownFields
  }

  var json: JSONValue {
    var writer = JSONObjectWriter(unknownFields: unknownFields)
    writer.set("requestDate", JSONValue(requestDate))
    writer.set("verification", JSONValue(verification))
    writer.set("entitlements", .object(entitlements.mapValues(\.json)))
    writer.set("purchases", .array(purchases.map(\.json)))
    writer.set("unclaimedPurchases", .array(unclaimedPurchases.map(\.json)))
    writer.set("accessContext", accessContext?.json)
    writer.set("deviceAccess", deviceAccess?.json)
    return writer.value
  }
}
