import EntitlementCache
import EntitlementCacheImport
import EntitlementCacheTesting
import Foundation

/// Subscriber responses written for these tests from RevenueCat's v1 API reference, and the
/// cache every test stores its snapshot in to see the decision the rule leads to.
enum RevenueCatFixture {
  /// `2026-11-30T12:00:00Z`: every body's `request_date`, and the time the tests store at.
  static let requestDate = date("2026-11-30T12:00:00Z")

  static func date(_ text: String) -> Date {
    guard let date = ISO8601DateFormatter().date(from: text) else {
      preconditionFailure("bad fixture date \(text)")
    }
    return date
  }

  /// A subscriber response: `request_date` and `request_date_ms` at ``requestDate`` unless
  /// `header` says otherwise, and the three maps as JSON text.
  static func body(
    header: String = #""request_date": "2026-11-30T12:00:00Z", "request_date_ms": 1796040000000,"#,
    entitlements: String, subscriptions: String = "{}", nonSubscriptions: String = "{}"
  ) -> Data {
    Data(
      """
      {
        \(header)
        "subscriber": {
          "original_app_user_id": "user-1",
          "first_seen": "2026-01-02T08:00:00Z",
          "entitlements": \(entitlements),
          "subscriptions": \(subscriptions),
          "non_subscriptions": \(nonSubscriptions)
        }
      }
      """.utf8)
  }

  /// An entitlement object: `expires` and `grace` are JSON (a quoted date, or `null`).
  static func entitlement(
    product: String, expires: String, grace: String = "null",
    purchased: String = #""2026-11-01T09:00:00Z""#
  ) -> String {
    """
    {
      "expires_date": \(expires),
      "grace_period_expires_date": \(grace),
      "product_identifier": "\(product)",
      "purchase_date": \(purchased)
    }
    """
  }

  /// A subscription object; each date is JSON (a quoted date, or `null`).
  static func subscription(
    expires: String, store: String = "app_store", sandbox: Bool = false,
    ownership: String = "PURCHASED", billingIssue: String = "null",
    unsubscribed: String = "null", grace: String = "null", refunded: String = "null",
    periodType: String = "normal", originalPurchase: String = #""2026-06-01T09:00:00Z""#
  ) -> String {
    """
    {
      "expires_date": \(expires),
      "purchase_date": "2026-11-01T09:00:00Z",
      "original_purchase_date": \(originalPurchase),
      "store": "\(store)",
      "is_sandbox": \(sandbox),
      "ownership_type": "\(ownership)",
      "billing_issues_detected_at": \(billingIssue),
      "unsubscribe_detected_at": \(unsubscribed),
      "period_type": "\(periodType)",
      "grace_period_expires_date": \(grace),
      "refunded_at": \(refunded)
    }
    """
  }

  /// `{"pro": ...}` backed by `{"pro_monthly": ...}`: the common case, one subscription.
  static func monthly(
    expires: String = #""2026-12-30T12:00:00Z""#, grace: String = "null",
    subscription: String? = nil
  ) -> Data {
    body(
      entitlements:
        #"{"pro": \#(entitlement(product: "pro_monthly", expires: expires, grace: grace))}"#,
      subscriptions: #"{"pro_monthly": \#(subscription ?? Self.subscription(expires: expires))}"#)
  }

  static func snapshot(_ body: Data, _ environment: StoreEnvironment = .production) throws
    -> CustomerInfoSnapshot
  {
    try RevenueCatV1.snapshot(fromSubscriberResponse: body, environment: environment)
  }

  /// The error mapping `body` throws; nil when it maps.
  static func error(_ body: Data, _ environment: StoreEnvironment = .production)
    -> RevenueCatImportError?
  {
    do {
      _ = try RevenueCatV1.snapshot(fromSubscriberResponse: body, environment: environment)
      return nil
    } catch {
      return error
    }
  }

  static func scope(_ environment: StoreEnvironment) throws -> CacheScope {
    try CacheScope(
      sdkKey: "sdk_test_key", installationID: "install-1", environment: environment,
      appUserID: "user-1")
  }

  /// A cache on a manual clock with `snapshot` stored at ``requestDate`` in a scope of
  /// `environment`, the clock then moved to `date`.
  static func cache(
    storing snapshot: CustomerInfoSnapshot, in environment: StoreEnvironment = .production,
    at date: Date = requestDate
  ) throws -> (cache: InMemoryCustomerInfoCache, scope: CacheScope) {
    let clock = ManualClock(requestDate)
    let cache = InMemoryCustomerInfoCache(clock: clock.cacheClock)
    let scope = try scope(environment)
    try cache.store(snapshot, for: scope)
    clock.advance(by: .seconds(date.timeIntervalSince(requestDate)))
    return (cache, scope)
  }

  /// The decision for `key` at `date` of a cache that stored `snapshot` at ``requestDate``.
  static func decision(
    _ key: String, of snapshot: CustomerInfoSnapshot,
    in environment: StoreEnvironment = .production, at date: Date = requestDate,
    policy: OfflinePolicy? = nil
  ) throws -> AccessDecision {
    let (cache, scope) = try cache(storing: snapshot, in: environment, at: date)
    return cache.access(to: key, for: scope, policy: policy)
  }
}
