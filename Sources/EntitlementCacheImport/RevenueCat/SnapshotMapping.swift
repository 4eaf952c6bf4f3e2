import EntitlementCache
import Foundation

/// The rules of the module page's mapping table, applied to a checked response: the snapshot's
/// JSON, as `JSONSerialization` takes it. Each rule's reason is in that table, not repeated here.
struct SnapshotMapping {
  let response: SubscriberResponse
  let environment: StoreEnvironment

  /// The purchase that backs an entitlement, which says where it comes from and whether it
  /// renews.
  enum Backing {
    case subscription(SubscriberResponse.Subscription)
    case transaction(SubscriberResponse.Transaction)

    var isSandbox: Bool {
      switch self {
      case .subscription(let subscription): subscription.isSandbox
      case .transaction(let transaction): transaction.isSandbox
      }
    }

    var store: String? {
      switch self {
      case .subscription(let subscription): subscription.store
      case .transaction(let transaction): transaction.store
      }
    }

    var subscription: SubscriberResponse.Subscription? {
      if case .subscription(let subscription) = self { subscription } else { nil }
    }
  }

  var json: [String: Any] {
    var entitlements: [String: Any] = [:]
    for (key, entitlement) in response.entitlements {
      entitlements[key] = map(entitlement)
    }
    return [
      "requestDate": response.requestDate.rfc3339,
      // An import is a previous cache's copy: no signature came with it that this cache could
      // check, whatever the previous SDK verified at the time.
      "verification": VerificationStatus.notRequested.rawValue,
      "entitlements": entitlements,
      "purchases": purchases,
    ]
  }

  /// A sandbox purchase in a production scope: the store's test environment, which grants
  /// nothing to a production build.
  func isForeignSandbox(_ backing: Backing?) -> Bool {
    environment == .production && backing?.isSandbox == true
  }

  /// The subscription of the entitlement's product; else, for a one-time purchase (lifetime
  /// access, a non-renewing pass), that product's latest transaction.
  func backing(of entitlement: SubscriberResponse.Entitlement) -> Backing? {
    guard let productID = entitlement.productIdentifier else { return nil }
    if let subscription = response.subscriptions.first(where: { $0.productID == productID }) {
      return .subscription(subscription.value)
    }
    let transactions =
      response.nonSubscriptions.first { $0.productID == productID }?.transactions ?? []
    // The latest by purchase date; among equal dates, the one listed last, as the server
    // appends them.
    let latest = transactions.enumerated().max { earlier, later in
      let earlierDate = earlier.element.purchaseDate?.milliseconds ?? .min
      let laterDate = later.element.purchaseDate?.milliseconds ?? .min
      return (earlierDate, earlier.offset) < (laterDate, later.offset)
    }
    return latest.map { .transaction($0.element) }
  }

  func map(_ entitlement: SubscriberResponse.Entitlement) -> [String: Any] {
    let backing = backing(of: entitlement)
    let subscription = backing?.subscription
    let foreignSandbox = isForeignSandbox(backing)
    let refunded = subscription?.refundedAt != nil
    let grace = entitlement.gracePeriodExpiresDate ?? subscription?.gracePeriodExpiresDate

    var fields: [String: Any] = [
      "verifiedAt": response.requestDate.rfc3339,
      "expiresAt": entitlement.expiresDate.map { $0.rfc3339 as Any } ?? NSNull(),
    ]
    let status: EntitlementStatus
    if foreignSandbox {
      status = .expired
    } else if refunded {
      status = .revoked
    } else if let expires = entitlement.expiresDate {
      if let grace, grace > expires {
        status = .grace
        fields["gracePeriodExpiresAt"] = grace.rfc3339
      } else if subscription?.billingIssuesDetectedAt != nil, expires <= response.requestDate {
        status = .billingRetry
      } else {
        // Past or not, the cache decides expiry from `expiresAt` on its own clock.
        status = .active
      }
    } else {
      // Lifetime: the cache bounds how long it is used offline, from `verifiedAt`.
      status = .active
    }
    fields["status"] = status.rawValue
    if let productID = entitlement.productIdentifier { fields["productId"] = productID }
    if let source = source(of: backing) { fields["source"] = source.rawValue }
    if let willRenew = willRenew(entitlement, backing: backing) { fields["willRenew"] = willRenew }
    return fields
  }

  /// Nil without a backing purchase: nothing says where the access comes from.
  func source(of backing: Backing?) -> EntitlementSource? {
    guard let backing else { return nil }
    if backing.subscription?.ownershipType == "FAMILY_SHARED" { return .familyShared }
    if backing.store == "promotional" { return .promotional }
    return .purchase
  }

  /// As RevenueCat's SDKs compute it, and false for anything that grants nothing here. Nil
  /// when no backing purchase says, unless the access is lifetime, which never renews.
  func willRenew(_ entitlement: SubscriberResponse.Entitlement, backing: Backing?) -> Bool? {
    let lifetime = entitlement.expiresDate == nil
    guard let backing else { return lifetime ? false : nil }
    guard case .subscription(let subscription) = backing else { return false }
    return
      !(lifetime || isForeignSandbox(backing) || subscription.store == "promotional"
      || subscription.refundedAt != nil || subscription.unsubscribeDetectedAt != nil
      || subscription.billingIssuesDetectedAt != nil)
  }

  /// Each subscription, then each one-time transaction, by product; a sandbox one left out of
  /// a production scope.
  var purchases: [[String: Any]] {
    var purchases: [[String: Any]] = []
    for (productID, subscription) in response.subscriptions
    where !isForeignSandbox(.subscription(subscription)) {
      // Renewals are one purchase: the subscription began at its original purchase date,
      // which the identifier carries so that it stays the same across renewals.
      let began = subscription.originalPurchaseDate ?? subscription.purchaseDate
      let familyShared = subscription.ownershipType == "FAMILY_SHARED"
      var purchase: [String: Any] = [
        "id": began.map { "\(productID)@\($0.rfc3339)" } ?? productID,
        "productId": productID,
        "ownership": familyShared ? "family_shared" : "owned",
        "ownershipType": familyShared ? "family_shared" : "purchased",
      ]
      if let store = subscription.store { purchase["store"] = store }
      if let began { purchase["purchasedAt"] = began.rfc3339 }
      purchases.append(purchase)
    }
    for (productID, transactions) in response.nonSubscriptions {
      for transaction in transactions where !isForeignSandbox(.transaction(transaction)) {
        var purchase: [String: Any] = [
          "id": transaction.id, "productId": productID, "ownership": "owned",
          "ownershipType": "purchased",
        ]
        if let store = transaction.store { purchase["store"] = store }
        if let date = transaction.purchaseDate { purchase["purchasedAt"] = date.rfc3339 }
        purchases.append(purchase)
      }
    }
    return purchases
  }
}
