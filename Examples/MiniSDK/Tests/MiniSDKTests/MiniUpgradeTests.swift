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

  /// The app gains a widget, and its cache moves into the shared container: the snapshot keeps
  /// its age, the purchase queued offline before the move is posted once, and the next launch
  /// finds nothing to move.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func aMoveIntoTheSharedContainerKeepsTheStateAndPostsTheQueuedPurchaseOnce() async throws {
    let device = try MiniDevice()
    let sdk = try device.open()
    sdk.start()
    device.runtime.runUntilIdle()
    device.backend.failPosts(with: .offline)
    let queued = await device.run {
      try? await sdk.purchaseCompleted(
        transactionID: "t1", productID: "pro_monthly", token: Data("token".utf8))
    }
    #expect(queued?.pending.map(\.transactionID) == ["t1"])
    try sdk.close()

    // The next version opens the shared container's file, offline at first.
    device.backend.failFetches(with: .offline)
    device.backend.failPosts(with: .offline)
    let shared = device.directory.appendingPathComponent("group.sqlite").path
    let moved = try device.open(cacheFile: shared, previousCacheFile: device.cacheFile)
    defer { try? moved.close() }
    guard case .moved(let summary) = moved.relocation else {
      Issue.record("not moved: \(String(describing: moved.relocation))")
      return
    }
    #expect(summary.snapshotsMoved == 1)
    #expect(summary.purchasesMoved == 1)
    #expect(!FileManager.default.fileExists(atPath: device.cacheFile))
    moved.start()
    device.runtime.runUntilIdle()
    let pro = moved.access(to: "pro")
    #expect(pro.isGranted)
    #expect(pro.evidence.storedAt == device.launch)
    #expect(pro.evidence.pendingPurchase)

    // Online again: the purchase is posted once, as the buyer.
    let postsBefore = device.backend.calls.posts.count
    device.backend.failFetches(with: nil)
    device.backend.failPosts(with: nil)
    moved.networkBecameReachable()
    device.runtime.advance(by: .seconds(3_600))
    let posts = device.backend.calls.posts.dropFirst(postsBefore)
    #expect(posts.map(\.transactionID) == ["t1"])
    try moved.close()

    let next = try device.open(cacheFile: shared, previousCacheFile: device.cacheFile)
    defer { try? next.close() }
    #expect(next.relocation == .nothingToMove)
  }
}
