// The README's library example is the body of `readmeExample` between the two markers,
// indented by four spaces here (ReadmeExampleTests checks it), so the front page's code always
// compiles. This file imports the library without @testable, but a test target also sees its
// `package` declarations: Examples/MiniSDK is what shows the public products alone suffice.

import EntitlementCache
import Foundation
import TestSupport
import Testing

/// What the README's example leaves to the SDK: its network, its IDs and its screens.
struct ReadmeExampleEnvironment {
  let cacheFile: String
  let backend: any CustomerInfoFetcher & PurchasePoster
  let apiKey: String
  let installationID: String
  let userID: String
  let id: String
  let product: String
  let receipt: Data
  var shown: [String] = []

  mutating func showPro() { shown.append("pro") }
  mutating func showPaywall(offering: ClaimHint?) { shown.append("paywall") }
  mutating func showDeviceManagement(_ reason: OpenEnum<DeviceBlockReason>?) {
    shown.append("devices")
  }
  mutating func keepLockedAndOfferRetry() { shown.append("retry") }
}

extension ReadmeExampleEnvironment {
  mutating func readmeExample() async throws {
    // README: begin
    // Once per process: the file (mode 0600), the offline policy, the clock.
    let cache = try SQLiteCustomerInfoCache(path: cacheFile)

    // The client keeps it right: start-up from cache, one fetch per scope, retries, identity.
    let client = try EntitlementClient(
      cache: cache, fetcher: backend,  // your network, as a CustomerInfoFetcher
      identity: ClientIdentity(
        sdkKey: apiKey, installationID: installationID, environment: .production,
        appUserID: userID),
      poster: backend)  // purchases, posted as the user who made them
    client.start()  // publishes the cached state at once, then refreshes

    // Every screen: re-evaluated against the clock, from memory.
    for await update in client.accessUpdates(to: "pro") {
      switch update.decision.state {
      case .granted: showPro()
      case .denied: showPaywall(offering: update.decision.recovery)  // restore, not "buy again"
      case .deviceBlocked(let reason): showDeviceManagement(reason)
      case .offlineUnavailable: keepLockedAndOfferRetry()  // unknown is never "not entitled"
      }
    }

    // A purchase is on disk before any network call; finish the store's transaction once synced.
    let result = try await client.purchaseCompleted(
      ObservedPurchase(transactionID: id, productID: product, token: PurchaseToken(receipt)))
    // README: end
    _ = result
  }
}

@Suite("README: the library example")
struct ReadmeExampleTests {
  @Test("the README shows exactly the example this file compiles")
  func readmeShowsTheExample() throws {
    let source = try String(
      contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
    let begin = try #require(source.range(of: "    // README: begin\n"))
    let end = try #require(source.range(of: "    // README: end\n"))
    let code = source[begin.upperBound..<end.lowerBound]
      .split(separator: "\n", omittingEmptySubsequences: false)
      .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }
      .joined(separator: "\n")
    let shown = try Documentation.readme()
      .contains("```swift\nimport EntitlementCache\n\n" + code + "```\n")
    #expect(shown, "README.md's library example drifted from ReadmeExample.swift")
  }
}
