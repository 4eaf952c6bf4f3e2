import EntitlementCache
import EntitlementCacheImport
import Foundation
import Testing

private typealias Fixture = RevenueCatFixture

/// The row of the mapping table for `purchases`.
@Suite("RevenueCat v1: purchases")
struct RevenueCatPurchaseTests {
  @Test func everySubscriptionAndTransactionIsAPurchase() throws {
    let body = Fixture.body(
      entitlements:
        #"{"pro": \#(Fixture.entitlement(product: "pro_monthly", expires: #""2026-12-30T12:00:00Z""#))}"#,
      subscriptions: """
        {"pro_monthly": \(Fixture.subscription(expires: #""2026-12-30T12:00:00Z""#)),
         "family_annual": \(Fixture.subscription(
            expires: #""2027-02-01T00:00:00Z""#, store: "play_store", ownership: "FAMILY_SHARED",
            originalPurchase: #""2025-02-01T00:00:00.500+01:00""#)),
         "old_weekly": \(Fixture.subscription(
            expires: #""2026-01-08T00:00:00Z""#, originalPurchase: "null"))}
        """,
      nonSubscriptions: """
        {"coins_100": [
           {"id": "txn_coins_1", "purchase_date": "2026-04-01T10:00:00Z", "store": "play_store",
            "is_sandbox": false},
           {"id": "txn_coins_2", "purchase_date": "2026-04-02T10:00:00Z", "store": "play_store",
            "is_sandbox": false}],
         "lifetime": [{"id": "txn_life_1", "purchase_date": "2026-03-01T10:00:00Z",
                       "store": "stripe", "is_sandbox": false}]}
        """)
    let snapshot = try Fixture.snapshot(body)
    let purchases = snapshot.customerInfo.purchases

    // Subscriptions by product, then each product's transactions in the body's order.
    #expect(
      purchases.map(\.id) == [
        "family_annual@2025-01-31T23:00:00.500Z", "old_weekly@2026-11-01T09:00:00Z",
        "pro_monthly@2026-06-01T09:00:00Z", "txn_coins_1", "txn_coins_2", "txn_life_1",
      ])
    #expect(
      purchases.map(\.productId) == [
        "family_annual", "old_weekly", "pro_monthly", "coins_100", "coins_100", "lifetime",
      ])
    #expect(
      purchases.map(\.store) == [
        "play_store", "app_store", "app_store", "play_store", "play_store", "stripe",
      ])
    #expect(
      purchases.map(\.purchasedAt) == [
        Fixture.date("2025-01-31T23:00:00Z").addingTimeInterval(0.5),
        // Without an original purchase date, the latest period's purchase date.
        Fixture.date("2026-11-01T09:00:00Z"), Fixture.date("2026-06-01T09:00:00Z"),
        Fixture.date("2026-04-01T10:00:00Z"), Fixture.date("2026-04-02T10:00:00Z"),
        Fixture.date("2026-03-01T10:00:00Z"),
      ])
    #expect(purchases[0].ownership == .known(.familyShared))
    #expect(purchases[0].ownershipType == .known(.familyShared))
    for purchase in purchases.dropFirst() {
      #expect(purchase.ownership == .known(.owned), "\(purchase.id)")
      #expect(purchase.ownershipType == .known(.purchased), "\(purchase.id)")
      #expect(purchase.canClaim == nil && purchase.conflict == nil, "\(purchase.id)")
    }
    #expect(snapshot.customerInfo.unclaimedPurchases.isEmpty)

    // The cache keeps them as mapped, and they decide nothing: `pro` grants from its
    // entitlement alone.
    let (cache, scope) = try Fixture.cache(storing: snapshot)
    let stored = try #require(try cache.load(scope)?.snapshot)
    #expect(stored.customerInfo.purchases == purchases)
    #expect(cache.access(to: "pro", for: scope).isGranted)
    #expect(cache.access(to: "lifetime", for: scope).state == .denied(.notEntitled))
  }
}
