import EntitlementCache
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@Suite("The adoption article's move")
struct RelocationExampleTests {
  @Test("the article shows exactly the move this file compiles")
  func articleShowsTheExample() throws {
    #expect(
      try Documentation.article(
        "AdoptingOnAnInstalledBase",
        showsExampleIn: "Tests/EntitlementCacheTests/Adoption/RelocationExample.swift",
        marker: "AdoptingOnAnInstalledBase.md, moving the file"),
      "AdoptingOnAnInstalledBase.md's move drifted from RelocationExample.swift")
  }

  /// The app's file, with a snapshot and a purchase still to post, moves into the container
  /// at the first launch; the next launch finds nothing to move.
  @Test func theExampleMovesTheFileOnce() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(try #require(Date(iso8601: "2026-12-05T12:00:00Z")))
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    let previousFile = URL(fileURLWithPath: directory.path("app.sqlite"))
    let container = URL(fileURLWithPath: directory.path("group"), isDirectory: true)
    try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    let alice = try CacheScope(
      sdkKey: "k", installationID: "i", environment: .production, appUserID: "alice")

    let old = try SQLiteCustomerInfoCache(
      path: previousFile.path, configuration: configuration, clock: clock.cacheClock)
    _ = try old.storeAnswer(
      try CustomerInfoSnapshot(
        jsonData: Data(
          """
          {"requestDate":"2026-12-05T11:00:00Z","entitlements":{"pro":
          {"status":"active","expiresAt":"2027-01-05T11:00:00Z"}}}
          """.utf8)),
      for: alice)
    _ = try old.enqueue(
      ObservedPurchase(transactionID: "t-1", productID: "pro", token: PurchaseToken(Data([1]))),
      observedBy: alice)
    try old.close()
    clock.advance(by: .hour)

    let cache = try openSharedCache(
      in: container, movingFrom: previousFile, configuration: configuration,
      clock: clock.cacheClock)
    #expect(!FileManager.default.fileExists(atPath: previousFile.path))
    let decision = cache.access(to: "pro", for: alice)
    #expect(decision.state == .granted)
    #expect(decision.evidence.storedAt == Date(iso8601: "2026-12-05T12:00:00Z"))
    #expect(decision.evidence.pendingPurchase)
    #expect(try cache.unsentPurchases(observedBy: alice).map(\.transactionID) == ["t-1"])
    #expect(try cache.relocate(from: previousFile.path) == .nothingToMove)
  }
}
