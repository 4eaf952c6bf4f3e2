import EntitlementCache
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@Suite("The adoption article's example")
struct AdoptionExampleTests {
  @Test("the article shows exactly the example this file compiles")
  func articleShowsTheExample() throws {
    #expect(
      try Documentation.article(
        "AdoptingOnAnInstalledBase",
        showsExampleIn: "Tests/EntitlementCacheTests/Adoption/AdoptionExample.swift",
        marker: "AdoptingOnAnInstalledBase.md"),
      "AdoptingOnAnInstalledBase.md's example drifted from AdoptionExample.swift")
  }

  @Test("the article shows exactly MiniSDK's import, which its own tests run through the kit")
  func articleShowsMiniSDKsImport() throws {
    #expect(
      try Documentation.article(
        "AdoptingOnAnInstalledBase",
        showsExampleIn: "Examples/MiniSDK/Sources/MiniSDK/DictionaryCustomerInfoCache.swift",
        marker: "AdoptingOnAnInstalledBase.md, a cache of your own"),
      "AdoptingOnAnInstalledBase.md's cache of your own drifted from MiniSDK's")
  }

  /// An offline first launch after the upgrade: what was still valid grants (not high trust),
  /// what lapsed since the save is denied, and running it again changes nothing.
  @Test func theExampleImportsAsOfTheSave() throws {
    let directory = try TemporaryDirectory()
    let now = try #require(Date(iso8601: "2026-12-05T12:00:00Z"))
    let clock = ManualClock(now)
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    let cache = try SQLiteCustomerInfoCache(
      path: directory.path("cache.sqlite"), configuration: configuration,
      clock: clock.cacheClock)
    func body(proEnds: String) -> Data {
      Data(
        SampleSnapshot.single(requestDate: "2026-11-25T12:00:00Z", expiresAt: proEnds, source: nil)
          .utf8)
    }
    let savedAt = try #require(Date(iso8601: "2026-11-25T12:00:00Z"))
    let alice = try CacheScope(
      sdkKey: "k", installationID: "i", environment: .production, appUserID: "alice")
    let bob = try CacheScope(
      sdkKey: "k", installationID: "i", environment: .production, appUserID: "bob")

    var lapsed = PreviousCache(body: body(proEnds: "2026-12-02T12:00:00Z"), savedAt: savedAt)
    try adoptPreviousCache(&lapsed, into: cache, for: alice)
    #expect(lapsed.body == nil)
    #expect(cache.access(to: "pro", for: alice).state == .denied(.expired))

    var valid = PreviousCache(body: body(proEnds: "2026-12-25T12:00:00Z"), savedAt: savedAt)
    try adoptPreviousCache(&valid, into: cache, for: bob)
    let granted = cache.access(to: "pro", for: bob)
    #expect(granted.state == .granted)
    #expect(!granted.isHighTrust)
    #expect(granted.evidence.origin?.importLabel == "previous-json-cache")

    var again = PreviousCache(body: body(proEnds: "2027-12-25T12:00:00Z"), savedAt: savedAt)
    try adoptPreviousCache(&again, into: cache, for: bob)
    #expect(cache.access(to: "pro", for: bob) == granted)
  }
}
