import EntitlementCache
import EntitlementCacheTesting
import Foundation
import MiniSDK
import Testing

/// The first launch after the upgrade from the SDK's previous version, offline: what the
/// previous cache held is imported as of its save, on the public products alone.
@Suite struct MiniUpgradeTests {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func anOfflineFirstLaunchGrantsWhatWasValidAndDeniesWhatLapsedSinceTheSave() throws {
    let device = try MiniDevice()
    // Saved 10 days before this launch: pro ended 3 days ago, team ends in 20 days.
    let saved = device.launch.addingTimeInterval(-10 * 86_400)
    let body = Data(
      """
      {"requestDate":"\(saved.formatted(.iso8601))","verification":"verified","entitlements":{
      "pro":{"status":"active","expiresAt":"\(saved.addingTimeInterval(7 * 86_400).formatted(.iso8601))"},
      "team":{"status":"active","expiresAt":"\(saved.addingTimeInterval(30 * 86_400).formatted(.iso8601))"}}}
      """.utf8)
    device.backend.failFetches(with: .offline)
    let sdk = try device.open(previousCache: MiniPreviousCache(body: body, savedAt: saved))
    defer { try? sdk.close() }
    #expect(sdk.adoption == .imported)

    sdk.start()
    device.runtime.runUntilIdle()
    #expect(sdk.access(to: "pro").state == .denied(.expired))
    let team = sdk.access(to: "team")
    #expect(team.isGranted)
    #expect(!team.isHighTrust)
    #expect(team.evidence.origin?.importLabel == "minisdk-v1")
    try sdk.close()

    // The next launch, back online: the import is not made again, and the answer replaces it.
    device.backend.failFetches(with: nil)
    let next = try device.open(previousCache: MiniPreviousCache(body: body, savedAt: saved))
    defer { try? next.close() }
    #expect(next.adoption == .scopeAlreadyFilled)
    next.start()
    device.runtime.runUntilIdle()
    #expect(next.access(to: "pro").isGranted)
    #expect(next.access(to: "pro").evidence.origin == .refresh)
  }
}
