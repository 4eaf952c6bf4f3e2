#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A store purchase and who owns it relative to the current app user.
public struct PurchaseInfo: Sendable, Hashable, JSONModel {
  /// The store transaction identifier.
  public var id: String
  /// The store product.
  public var productId: String?
  /// The store, such as `app_store` or `play_store`.
  public var store: String?
  /// When the purchase was made.
  public var purchasedAt: Date?
  /// Who owns it relative to the current app user.
  public var ownership: OpenEnum<PurchaseOwnership>?
  /// How it came to the store account.
  public var ownershipType: OpenEnum<OwnershipType>?
  /// Whether the current user could claim it.
  public var canClaim: Bool?
  /// Whether it is bound to another app user.
  public var conflict: Bool?
  /// Fields this build does not know, kept as the server sent them.
  package var unknownFields: [String: JSONValue]

  /// Creates a purchase.
  package init(
    id: String, productId: String? = nil, store: String? = nil, purchasedAt: Date? = nil,
    ownership: OpenEnum<PurchaseOwnership>? = nil, ownershipType: OpenEnum<OwnershipType>? = nil,
    canClaim: Bool? = nil, conflict: Bool? = nil, unknownFields: [String: JSONValue] = [:]
  ) {
    self.id = id
    self.productId = productId
    self.store = store
    self.purchasedAt = purchasedAt
    self.ownership = ownership
    self.ownershipType = ownershipType
    self.canClaim = canClaim
    self.conflict = conflict
    self.unknownFields = unknownFields
  }

  init(json: JSONValue, path: String) throws(SnapshotError) {
    var reader = try JSONObjectReader(json, path: path)
    id = try reader.required("id", JSONField.string)
    productId = try reader.optional("productId", JSONField.string)
    store = try reader.optional("store", JSONField.string)
    purchasedAt = try reader.optional("purchasedAt", JSONField.date)
    ownership = try reader.optional("ownership", JSONField.openEnum)
    ownershipType = try reader.optional("ownershipType", JSONField.openEnum)
    canClaim = try reader.optional("canClaim", JSONField.bool)
    conflict = try reader.optional("conflict", JSONField.bool)
    unknownFields = reader.unknownFields
  }

  var json: JSONValue {
    var writer = JSONObjectWriter(unknownFields: unknownFields)
    writer.set("id", .string(id))
    writer.set("productId", productId.map(JSONValue.string))
    writer.set("store", store.map(JSONValue.string))
    writer.set("purchasedAt", purchasedAt.map(JSONValue.init))
    writer.set("ownership", ownership.map(JSONValue.init))
    writer.set("ownershipType", ownershipType.map(JSONValue.init))
    writer.set("canClaim", canClaim.map(JSONValue.bool))
    writer.set("conflict", conflict.map(JSONValue.bool))
    return writer.value
  }
}

/// A store purchase that exists but is not attributed to the current app user.
public struct UnclaimedPurchase: Sendable, Hashable, JSONModel {
  /// The store transaction identifier.
  public var purchaseId: String
  /// The store product.
  public var productId: String?
  /// The entitlement keys the purchase would grant once claimed.
  public var entitlements: [String]
  /// What the app should offer instead of "buy again". An unknown hint is kept, not offered.
  public var claimHint: OpenEnum<ClaimHint>
  /// Fields this build does not know, kept as the server sent them.
  package var unknownFields: [String: JSONValue]

  /// Creates an unclaimed purchase.
  package init(
    purchaseId: String, productId: String? = nil, entitlements: [String],
    claimHint: OpenEnum<ClaimHint>, unknownFields: [String: JSONValue] = [:]
  ) {
    self.purchaseId = purchaseId
    self.productId = productId
    self.entitlements = entitlements
    self.claimHint = claimHint
    self.unknownFields = unknownFields
  }

  init(json: JSONValue, path: String) throws(SnapshotError) {
    var reader = try JSONObjectReader(json, path: path)
    purchaseId = try reader.required("purchaseId", JSONField.string)
    productId = try reader.optional("productId", JSONField.string)
    entitlements =
      try reader.optional("entitlements") { value, path throws(SnapshotError) in
        try JSONField.array(value, path, JSONField.string)
      } ?? []
    claimHint = try reader.required("claimHint", JSONField.openEnum)
    unknownFields = reader.unknownFields
  }

  var json: JSONValue {
    var writer = JSONObjectWriter(unknownFields: unknownFields)
    writer.set("purchaseId", .string(purchaseId))
    writer.set("productId", productId.map(JSONValue.string))
    writer.set("entitlements", .array(entitlements.map(JSONValue.string)))
    writer.set("claimHint", JSONValue(claimHint))
    return writer.value
  }
}
