import EntitlementCache
import EntitlementCacheImport
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@Suite("The adoption article's RevenueCat example")
struct RevenueCatAdoptionExampleTests {
  @Test("the article shows exactly the example this file compiles")
  func articleShowsTheExample() throws {
    #expect(
      try Documentation.article(
        "AdoptingOnAnInstalledBase",
        showsExampleIn: "Tests/EntitlementCacheImportTests/RevenueCatAdoptionExample.swift",
        marker: "AdoptingOnAnInstalledBase.md, RevenueCat"),
      "AdoptingOnAnInstalledBase.md's RevenueCat example drifted from this file")
  }

  /// Cached 10 days before an offline launch: a subscription that ended since is denied, and
  /// the import is labelled as RevenueCat's.
  @Test func theExampleImportsAsOfTheSave() throws {
    let now = RevenueCatFixture.date("2026-12-10T12:00:00Z")
    let cache = InMemoryCustomerInfoCache(clock: ManualClock(now).cacheClock)
    let scope = try CacheScope(
      sdkKey: "k", installationID: "i", environment: .production, appUserID: "alice")
    let body = RevenueCatFixture.body(
      entitlements: """
        {"pro": {"expires_date": "2026-12-05T12:00:00Z", "product_identifier": "monthly",
                 "purchase_date": "2026-11-05T12:00:00Z"}}
        """)
    let outcome = try importRevenueCatCache(
      body, savedAt: RevenueCatFixture.requestDate, into: cache, for: scope)
    #expect(outcome == .imported)
    let decision = cache.access(to: "pro", for: scope)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.origin?.importLabel == "revenuecat-v1")
  }
}
