import EntitlementCache
import EntitlementCacheImport
import Foundation
import Testing

private typealias Fixture = RevenueCatFixture

/// The rows of the mapping table for the snapshot's other fields, one test each.
@Suite("RevenueCat v1: snapshot fields")
struct RevenueCatFieldTests {
  @Test func requestDateIsTheMillisecondFieldElseTheISOOne() throws {
    // 250 ms after the whole second `request_date` shows.
    let precise = try Fixture.snapshot(
      Fixture.body(
        header: #""request_date": "2026-11-30T12:00:00Z", "request_date_ms": 1796040000250,"#,
        entitlements: "{}"))
    let serverTime = Date(timeIntervalSince1970: 1_796_040_000.25)
    #expect(precise.customerInfo.requestDate == serverTime)
    // The cache counts the server's clock from it.
    let (cache, scope) = try Fixture.cache(storing: precise)
    #expect(cache.access(to: "pro", for: scope).evidence.estimatedServerTime == serverTime)

    let secondsOnly = try Fixture.snapshot(
      Fixture.body(header: #""request_date": "2026-11-30T12:00:00+01:00","#, entitlements: "{}"))
    #expect(secondsOnly.customerInfo.requestDate == Fixture.date("2026-11-30T11:00:00Z"))

    let millisecondsOnly = try Fixture.snapshot(
      Fixture.body(header: #""request_date_ms": 1796040000000,"#, entitlements: "{}"))
    #expect(millisecondsOnly.customerInfo.requestDate == Fixture.requestDate)

    let neither = try #require(Fixture.error(Fixture.body(header: "", entitlements: "{}")))
    #expect(neither.path == "request_date")
    #expect(neither.problem == .missing)
    #expect(neither.description == "request_date: missing")
  }

  @Test func importIsNeverVerified() throws {
    let body = Fixture.body(
      header: #""request_date": "2026-11-30T12:00:00Z", "verification": "verified","#,
      entitlements:
        #"{"pro": \#(Fixture.entitlement(product: "pro_monthly", expires: #""2026-12-30T12:00:00Z""#))}"#,
      subscriptions:
        #"{"pro_monthly": \#(Fixture.subscription(expires: #""2026-12-30T12:00:00Z""#))}"#)
    let snapshot = try Fixture.snapshot(body)
    #expect(snapshot.customerInfo.verification == .known(.notRequested))
    #expect(snapshot.customerInfo.entitlements["pro"]?.verifiedAt == Fixture.requestDate)
    #expect(snapshot.signature == nil)

    let decision = try Fixture.decision("pro", of: snapshot)
    #expect(decision.isGranted)
    #expect(decision.evidence.verification == .known(.notRequested))
    #expect(decision.evidence.verifiedAt == Fixture.requestDate)
    #expect(!decision.isHighTrust)
  }

  @Test func productIdentifierPicksTheBackingPurchase() throws {
    let body = Fixture.body(
      entitlements: """
        {"pro": \(Fixture.entitlement(product: "pro_annual", expires: #""2027-06-01T09:00:00Z""#)),
         "forever": \(Fixture.entitlement(product: "lifetime", expires: "null"))}
        """,
      subscriptions: """
        {"pro_monthly": \(Fixture.subscription(expires: #""2026-12-30T12:00:00Z""#, sandbox: true)),
         "pro_annual": \(Fixture.subscription(expires: #""2027-06-01T09:00:00Z""#, ownership: "FAMILY_SHARED"))}
        """,
      // The latest transaction is the production one, though it is listed first.
      nonSubscriptions: """
        {"lifetime": [
          {"id": "txn_life_2", "purchase_date": "2026-05-01T10:00:00Z", "store": "play_store",
           "is_sandbox": false},
          {"id": "txn_life_1", "purchase_date": "2026-03-01T10:00:00Z", "store": "app_store",
           "is_sandbox": true}
        ]}
        """)
    let snapshot = try Fixture.snapshot(body)
    let pro = try #require(snapshot.customerInfo.entitlements["pro"])
    #expect(pro.productId == "pro_annual")
    // From `pro_annual`, not the sandbox `pro_monthly` beside it.
    #expect(pro.source == .known(.familyShared))
    #expect(pro.status == .known(.active))
    let forever = try #require(snapshot.customerInfo.entitlements["forever"])
    #expect(forever.productId == "lifetime")
    #expect(forever.status == .known(.active))
    #expect(forever.source == .known(.purchase))

    for key in ["pro", "forever"] {
      #expect(try Fixture.decision(key, of: snapshot).isGranted, "\(key)")
    }

    // No purchase under the product: the entitlement's own fields alone.
    let orphan = try Fixture.snapshot(
      Fixture.body(
        entitlements:
          #"{"pro": \#(Fixture.entitlement(product: "gone", expires: #""2026-12-30T12:00:00Z""#))}"#
      ))
    let alone = try #require(orphan.customerInfo.entitlements["pro"])
    #expect(alone.status == .known(.active))
    #expect(alone.productId == "gone")
    #expect(alone.source == nil)
    #expect(alone.willRenew == nil)
    #expect(try Fixture.decision("pro", of: orphan).isGranted)
  }

  @Test func sourceComesFromOwnershipThenStore() throws {
    let expires = #""2026-12-30T12:00:00Z""#
    let body = Fixture.body(
      entitlements: """
        {"shared": \(Fixture.entitlement(product: "family", expires: expires)),
         "promo": \(Fixture.entitlement(product: "rc_promo_pro_monthly", expires: expires)),
         "bought": \(Fixture.entitlement(product: "pro_monthly", expires: expires))}
        """,
      subscriptions: """
        {"family": \(Fixture.subscription(expires: expires, ownership: "FAMILY_SHARED")),
         "rc_promo_pro_monthly": \(Fixture.subscription(expires: expires, store: "promotional")),
         "pro_monthly": \(Fixture.subscription(expires: expires, store: "play_store"))}
        """)
    let snapshot = try Fixture.snapshot(body)
    let entitlements = snapshot.customerInfo.entitlements
    #expect(entitlements["shared"]?.source == .known(.familyShared))
    #expect(entitlements["promo"]?.source == .known(.promotional))
    #expect(entitlements["bought"]?.source == .known(.purchase))

    // A policy that excludes family sharing denies the shared one alone.
    var policy = OfflinePolicy.conservative
    policy.excludeFamilyShared = true
    let shared = try Fixture.decision("shared", of: snapshot, policy: policy)
    #expect(shared.state == .denied(.familySharingExcluded))
    for key in ["promo", "bought"] {
      #expect(try Fixture.decision(key, of: snapshot, policy: policy).isGranted, "\(key)")
    }
    #expect(try Fixture.decision("shared", of: snapshot).isGranted)
  }

  @Test func willRenewAsTheStoreWould() throws {
    let expires = #""2026-12-30T12:00:00Z""#
    let cases: [(key: String, subscription: String, willRenew: Bool)] = [
      ("renewing", Fixture.subscription(expires: expires), true),
      (
        "cancelled",
        Fixture.subscription(expires: expires, unsubscribed: #""2026-11-20T08:00:00Z""#), false
      ),
      (
        "failing", Fixture.subscription(expires: expires, billingIssue: #""2026-11-29T08:00:00Z""#),
        false
      ),
      (
        "refunded", Fixture.subscription(expires: expires, refunded: #""2026-11-20T08:00:00Z""#),
        false
      ),
      ("promo", Fixture.subscription(expires: expires, store: "promotional"), false),
      ("shared", Fixture.subscription(expires: expires, ownership: "FAMILY_SHARED"), true),
    ]
    let entitlements = cases.map {
      "\"\($0.key)\": " + Fixture.entitlement(product: "p_" + $0.key, expires: expires)
    }
    let subscriptions = cases.map { #""p_\#($0.key)": \#($0.subscription)"# }
    let body = Fixture.body(
      entitlements: """
        {\(entitlements.joined(separator: ",")),
         "pass": \(Fixture.entitlement(product: "pass_30d", expires: expires))}
        """,
      subscriptions: "{\(subscriptions.joined(separator: ","))}",
      nonSubscriptions: """
        {"pass_30d": [{"id": "txn_pass_1", "purchase_date": "2026-11-30T09:00:00Z",
                       "store": "app_store", "is_sandbox": false}]}
        """)
    let snapshot = try Fixture.snapshot(body)
    for (key, _, willRenew) in cases {
      #expect(snapshot.customerInfo.entitlements[key]?.willRenew == willRenew, "\(key)")
    }
    // A one-time purchase never renews, even one that grants for a while.
    #expect(snapshot.customerInfo.entitlements["pass"]?.willRenew == false)

    // Whether it renews is information: a cancelled subscription grants until its end.
    #expect(try Fixture.decision("cancelled", of: snapshot).isGranted)
    let (cache, scope) = try Fixture.cache(storing: snapshot)
    let evaluation = try cache.evaluatedCustomerInfo(for: scope)
    let evaluated = try #require(evaluation)
    #expect(evaluated.customerInfo.entitlements["renewing"]?.willRenew == true)
  }
}
