import EntitlementCache
import EntitlementCacheImport
import Foundation
import TestSupport
import Testing

private typealias Fixture = RevenueCatFixture

/// The rows of the mapping table that decide an entitlement's status, one test each: the
/// snapshot's fields, then what a cache that stored it decides at a chosen time.
@Suite("RevenueCat v1: entitlement status")
struct RevenueCatStatusTests {
  @Test func nullExpiryIsLifetimeAndAbsentExpiryIsRefused() throws {
    let body = Fixture.body(
      entitlements: #"{"forever": \#(Fixture.entitlement(product: "lifetime", expires: "null"))}"#,
      nonSubscriptions: """
        {"lifetime": [{"id": "txn_life_1", "purchase_date": "2026-03-01T10:00:00Z",
                       "store": "app_store", "is_sandbox": false}]}
        """)
    let snapshot = try Fixture.snapshot(body)
    let forever = try #require(snapshot.customerInfo.entitlements["forever"])
    #expect(forever.status == .known(.active))
    #expect(forever.expiresAt == nil)
    #expect(forever.gracePeriodExpiresAt == nil)
    #expect(forever.willRenew == false)
    #expect(forever.verifiedAt == Fixture.requestDate)

    // The cache bounds lifetime access offline from `verifiedAt`: 30 days by default.
    let inWindow = try Fixture.decision(
      "forever", of: snapshot, at: Fixture.requestDate.addingTimeInterval(29 * .day))
    #expect(inWindow.isGranted)
    let pastWindow = try Fixture.decision(
      "forever", of: snapshot, at: Fixture.requestDate.addingTimeInterval(30 * .day))
    #expect(pastWindow.state == .denied(.offlineWindowElapsed))

    // Without the key the body says nothing about the end: refused, never read as lifetime.
    let silent = Fixture.body(
      entitlements: """
        {"forever": {"product_identifier": "lifetime", "purchase_date": "2026-03-01T10:00:00Z"}}
        """)
    let error = try #require(Fixture.error(silent))
    #expect(error.path == "subscriber.entitlements.forever.expires_date")
    #expect(error.problem == .missing)
  }

  @Test func graceEndAfterExpiryIsGrace() throws {
    let body = Fixture.monthly(
      expires: #""2026-11-28T12:00:00Z""#, grace: #""2026-12-05T12:00:00Z""#,
      subscription: Fixture.subscription(
        expires: #""2026-11-28T12:00:00Z""#, billingIssue: #""2026-11-28T12:05:00Z""#))
    let snapshot = try Fixture.snapshot(body)
    let pro = try #require(snapshot.customerInfo.entitlements["pro"])
    #expect(pro.status == .known(.grace))
    #expect(pro.expiresAt == Fixture.date("2026-11-28T12:00:00Z"))
    #expect(pro.gracePeriodExpiresAt == Fixture.date("2026-12-05T12:00:00Z"))
    #expect(pro.willRenew == false)

    // Usable until the grace end, though `expiresAt` had already passed when the server
    // answered; then expired, by the cache's clock.
    let inGrace = try Fixture.decision(
      "pro", of: snapshot, at: Fixture.date("2026-12-05T11:59:59Z"))
    #expect(inGrace.isGranted)
    #expect(inGrace.evidence.validUntil == Fixture.date("2026-12-05T12:00:00Z"))
    let after = try Fixture.decision("pro", of: snapshot, at: Fixture.date("2026-12-05T12:00:00Z"))
    #expect(after.state == .denied(.expired))

    // A grace end not after the expiry is an old grace period the subscription recovered
    // from: active, and the old date is not carried.
    let recovered = try Fixture.snapshot(
      Fixture.monthly(expires: #""2026-12-30T12:00:00Z""#, grace: #""2026-10-05T12:00:00Z""#))
    let active = try #require(recovered.customerInfo.entitlements["pro"])
    #expect(active.status == .known(.active))
    #expect(active.gracePeriodExpiresAt == nil)

    // The subscription's grace end stands in for the entitlement's when that one is null.
    let fromSubscription = try Fixture.snapshot(
      Fixture.monthly(
        expires: #""2026-11-28T12:00:00Z""#,
        subscription: Fixture.subscription(
          expires: #""2026-11-28T12:00:00Z""#, grace: #""2026-12-05T12:00:00Z""#)))
    let graced = try #require(fromSubscription.customerInfo.entitlements["pro"])
    #expect(graced.status == .known(.grace))
    #expect(graced.gracePeriodExpiresAt == Fixture.date("2026-12-05T12:00:00Z"))
  }

  @Test func billingIssuePastExpiryIsBillingRetry() throws {
    let retrying = try Fixture.snapshot(
      Fixture.monthly(
        expires: #""2026-11-29T12:00:00Z""#,
        subscription: Fixture.subscription(
          expires: #""2026-11-29T12:00:00Z""#, billingIssue: #""2026-11-29T12:01:00Z""#)))
    let pro = try #require(retrying.customerInfo.entitlements["pro"])
    #expect(pro.status == .known(.billingRetry))
    #expect(pro.expiresAt == Fixture.date("2026-11-29T12:00:00Z"))
    #expect(pro.willRenew == false)
    let decision = try Fixture.decision("pro", of: retrying)
    #expect(decision.state == .denied(.billingRetry))

    // Not yet expired: still paid up, so active; the cache ends it at `expiresAt` itself.
    let early = try Fixture.snapshot(
      Fixture.monthly(
        expires: #""2026-12-10T12:00:00Z""#,
        subscription: Fixture.subscription(
          expires: #""2026-12-10T12:00:00Z""#, billingIssue: #""2026-11-29T12:01:00Z""#)))
    let paid = try #require(early.customerInfo.entitlements["pro"])
    #expect(paid.status == .known(.active))
    #expect(paid.willRenew == false)
    #expect(try Fixture.decision("pro", of: early).isGranted)
    let lapsed = try Fixture.decision(
      "pro", of: early, at: Fixture.date("2026-12-10T12:00:00Z"))
    #expect(lapsed.state == .denied(.expired))
  }

  @Test func refundIsRevoked() throws {
    let snapshot = try Fixture.snapshot(
      Fixture.monthly(
        subscription: Fixture.subscription(
          expires: #""2026-12-30T12:00:00Z""#, refunded: #""2026-11-15T08:00:00Z""#)))
    let pro = try #require(snapshot.customerInfo.entitlements["pro"])
    #expect(pro.status == .known(.revoked))
    #expect(pro.willRenew == false)
    // Denied at once, though `expiresAt` is a month ahead.
    let decision = try Fixture.decision("pro", of: snapshot)
    #expect(decision.state == .denied(.revoked))
    #expect(decision.evidence.validUntil == nil)
  }

  @Test func otherwiseActiveUntilExpiry() throws {
    let snapshot = try Fixture.snapshot(Fixture.monthly())
    let pro = try #require(snapshot.customerInfo.entitlements["pro"])
    #expect(pro.status == .known(.active))
    #expect(pro.expiresAt == Fixture.date("2026-12-30T12:00:00Z"))
    #expect(pro.gracePeriodExpiresAt == nil)
    #expect(pro.productId == "pro_monthly")
    #expect(pro.source == .known(.purchase))
    #expect(pro.willRenew == true)

    let before = try Fixture.decision(
      "pro", of: snapshot, at: Fixture.date("2026-12-30T11:59:59Z"))
    #expect(before.isGranted)
    let after = try Fixture.decision("pro", of: snapshot, at: Fixture.date("2026-12-30T12:00:00Z"))
    #expect(after.state == .denied(.expired))

    // Already past when the server answered: still `active` in the snapshot, and expired by
    // the cache's clock from the first read.
    let ended = try Fixture.snapshot(Fixture.monthly(expires: #""2026-11-20T12:00:00Z""#))
    #expect(ended.customerInfo.entitlements["pro"]?.status == .known(.active))
    #expect(try Fixture.decision("pro", of: ended).state == .denied(.expired))
  }

  @Test func sandboxPurchaseGrantsNothingInProduction() throws {
    let body = Fixture.body(
      entitlements: """
        {"pro": \(Fixture.entitlement(product: "pro_monthly", expires: #""2026-12-30T12:00:00Z""#)),
         "forever": \(Fixture.entitlement(product: "lifetime", expires: "null"))}
        """,
      subscriptions: """
        {"pro_monthly": \(Fixture.subscription(expires: #""2026-12-30T12:00:00Z""#, sandbox: true))}
        """,
      nonSubscriptions: """
        {"lifetime": [{"id": "txn_sbx_1", "purchase_date": "2026-03-01T10:00:00Z",
                       "store": "app_store", "is_sandbox": true}]}
        """)

    let production = try Fixture.snapshot(body, .production)
    for key in ["pro", "forever"] {
      let entitlement = try #require(production.customerInfo.entitlements[key])
      #expect(entitlement.status == .known(.expired), "\(key)")
      #expect(entitlement.willRenew == false, "\(key)")
      #expect(try Fixture.decision(key, of: production).state == .denied(.expired), "\(key)")
    }
    #expect(production.customerInfo.entitlements["pro"]?.expiresAt != nil)
    #expect(production.customerInfo.purchases.isEmpty)

    // In a sandbox or local scope the same body maps as a production one would.
    for environment in [StoreEnvironment.sandbox, .local] {
      let test = try Fixture.snapshot(body, environment)
      #expect(test.customerInfo.entitlements["pro"]?.status == .known(.active))
      #expect(test.customerInfo.entitlements["pro"]?.willRenew == true)
      #expect(test.customerInfo.entitlements["forever"]?.status == .known(.active))
      #expect(test.customerInfo.purchases.map(\.productId) == ["pro_monthly", "lifetime"])
      for key in ["pro", "forever"] {
        #expect(try Fixture.decision(key, of: test, in: environment).isGranted, "\(key)")
      }
    }

    // A production purchase in a sandbox scope grants as it does in production.
    let real = try Fixture.snapshot(Fixture.monthly(), .sandbox)
    #expect(real.customerInfo.entitlements["pro"]?.status == .known(.active))
    #expect(try Fixture.decision("pro", of: real, in: .sandbox).isGranted)
  }
}
