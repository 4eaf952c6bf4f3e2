import EntitlementCache
import Foundation

/// The fields of a v1 subscriber response (`GET /v1/subscribers/{app_user_id}`) the mapping
/// reads, each checked for its type before any is mapped.
///
/// Every field RevenueCat documents for these objects that the mapping could read is checked,
/// used or not (`period_type`, an entitlement's `purchase_date`): a body whose known fields do
/// not have their documented types is not one the mapping understands, and is refused whole
/// rather than mapped in part. Fields not listed here are ignored.
struct SubscriberResponse {
  /// When the server answered, by its clock.
  var requestDate: Timestamp
  var entitlements: [(key: String, value: Entitlement)]
  var subscriptions: [(productID: String, value: Subscription)]
  var nonSubscriptions: [(productID: String, transactions: [Transaction])]

  /// `subscriber.entitlements[id]`.
  struct Entitlement {
    /// nil for lifetime access: the server wrote `null`.
    var expiresDate: Timestamp?
    var gracePeriodExpiresDate: Timestamp?
    var productIdentifier: String?
  }

  /// `subscriber.subscriptions[product_id]`.
  struct Subscription {
    var expiresDate: Timestamp?
    var purchaseDate: Timestamp?
    var originalPurchaseDate: Timestamp?
    var store: String?
    var isSandbox: Bool
    var ownershipType: String?
    var billingIssuesDetectedAt: Timestamp?
    var unsubscribeDetectedAt: Timestamp?
    var gracePeriodExpiresDate: Timestamp?
    var refundedAt: Timestamp?
  }

  /// One element of `subscriber.non_subscriptions[product_id]`.
  struct Transaction {
    var id: String
    var purchaseDate: Timestamp?
    var store: String?
    var isSandbox: Bool
  }

  /// Parses `body` with the library's own strict rules, then reads it.
  init(parsing body: Data) throws(RevenueCatImportError) {
    let json: JSONValue
    do {
      json = try JSONValue(parsing: body)
    } catch {
      throw RevenueCatImportError(notJSON: error)
    }
    try self.init(json)
  }

  init(_ body: JSONValue) throws(RevenueCatImportError) {
    let root = try FieldReader(body, path: "")
    // The millisecond field first: `request_date` is written in whole seconds, up to 999 ms
    // before the answer, and a server time read early lengthens every expiry compared with it.
    let seconds = try root.date("request_date")
    let milliseconds = try root.milliseconds("request_date_ms")
    guard let requestDate = milliseconds ?? seconds else {
      throw RevenueCatImportError("request_date", .missing)
    }
    self.requestDate = requestDate

    let subscriber = try root.requiredObject("subscriber")
    // Required, where the purchase maps are not: a body without it would import as "entitled
    // to nothing", which shows a paying user the paywall until the first refresh.
    entitlements = []
    for (key, reader) in try subscriber.requiredObject("entitlements").objects() {
      entitlements.append((key, try Entitlement(reader)))
    }
    subscriptions = []
    for (productID, reader) in try subscriber.object("subscriptions")?.objects() ?? [] {
      subscriptions.append((productID, try Subscription(reader)))
    }
    nonSubscriptions = try Self.transactions(subscriber)
  }

  private static func transactions(_ subscriber: FieldReader) throws(RevenueCatImportError)
    -> [(productID: String, transactions: [Transaction])]
  {
    guard let products = try subscriber.object("non_subscriptions") else { return [] }
    var all: [(productID: String, transactions: [Transaction])] = []
    for productID in products.fields.keys.sorted() {
      let items = try products.array(productID) ?? []
      var transactions: [Transaction] = []
      for (index, item) in items.enumerated() {
        let reader = try FieldReader(item, path: "\(products.path(productID))[\(index)]")
        transactions.append(try Transaction(reader))
      }
      all.append((productID, transactions))
    }
    return all
  }
}

extension SubscriberResponse.Entitlement {
  init(_ reader: FieldReader) throws(RevenueCatImportError) {
    // `null` is lifetime access; an absent key is a body that says nothing about the end, and
    // reading it as lifetime would grant what the server never said.
    guard reader.isPresent("expires_date") else {
      throw RevenueCatImportError(reader.path("expires_date"), .missing)
    }
    expiresDate = try reader.date("expires_date")
    gracePeriodExpiresDate = try reader.date("grace_period_expires_date")
    productIdentifier = try reader.string("product_identifier")
    _ = try reader.date("purchase_date")
  }
}

extension SubscriberResponse.Subscription {
  init(_ reader: FieldReader) throws(RevenueCatImportError) {
    expiresDate = try reader.date("expires_date")
    purchaseDate = try reader.date("purchase_date")
    originalPurchaseDate = try reader.date("original_purchase_date")
    store = try reader.string("store")
    isSandbox = try reader.bool("is_sandbox") ?? false
    ownershipType = try reader.string("ownership_type")
    billingIssuesDetectedAt = try reader.date("billing_issues_detected_at")
    unsubscribeDetectedAt = try reader.date("unsubscribe_detected_at")
    _ = try reader.string("period_type")
    gracePeriodExpiresDate = try reader.date("grace_period_expires_date")
    refundedAt = try reader.date("refunded_at")
  }
}

extension SubscriberResponse.Transaction {
  init(_ reader: FieldReader) throws(RevenueCatImportError) {
    guard let id = try reader.string("id") else {
      throw RevenueCatImportError(reader.path("id"), .missing)
    }
    self.id = id
    purchaseDate = try reader.date("purchase_date")
    store = try reader.string("store")
    isSandbox = try reader.bool("is_sandbox") ?? false
  }
}
