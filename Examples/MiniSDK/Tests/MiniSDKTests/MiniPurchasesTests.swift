import EntitlementCache
import EntitlementCacheTesting
import Foundation
import MiniSDK
import Testing

/// One device of the facade's tests: a real SQLite cache file in a temporary directory, a
/// scripted backend, and virtual time (`SimulatedRuntime`), so no test sleeps.
///
/// A class of its own, not the suite's stored properties: `SimulatedRuntime` needs task
/// executors (iOS 18, macOS 15), and Swift Testing takes `@available` on a test, not on a suite.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class MiniDevice {
  /// 2026-11-30T12:00:00Z.
  let launch = Date(timeIntervalSince1970: 1_796_040_000)
  let runtime: SimulatedRuntime
  let backend: FakeBackend
  let log = LogRecorder()
  let directory: URL
  let scope: CacheScope

  init() throws {
    runtime = SimulatedRuntime(start: launch, bootSession: "boot-1")
    backend = FakeBackend(clock: runtime.clock)
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("MiniSDKTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    scope = try CacheScope(
      sdkKey: "sdk_key", installationID: "install-1", environment: .production,
      appUserID: "alice")
  }

  deinit { try? FileManager.default.removeItem(at: directory) }

  var cacheFile: String { directory.appendingPathComponent("entitlements.sqlite").path }

  func open(
    trustRoots: TrustRoots? = nil, previousCache: MiniPreviousCache? = nil,
    cacheFile: String? = nil, previousCacheFile: String? = nil
  ) throws -> MiniPurchases {
    var configuration = MiniConfiguration(
      apiKey: "sdk_key", installationID: "install-1", appUserID: "alice",
      cacheFile: cacheFile ?? self.cacheFile)
    configuration.trustRoots = trustRoots
    configuration.previousCache = previousCache
    configuration.previousCacheFile = previousCacheFile
    configuration.log = log.handler
    return try MiniPurchases(
      configuration: configuration, transport: backend, clock: runtime.clock, runtime: runtime)
  }

  /// Runs `body` on the simulated runtime until it is idle, and returns what `body` returned.
  func run<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) async -> Value {
    let task = runtime.spawn(body)
    runtime.runUntilIdle()
    return await task.value
  }
}

/// The facade end to end, each test on a ``MiniDevice`` of its own.
@Suite struct MiniPurchasesTests {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func startPublishesTheCachedStateBeforeTheNetwork() throws {
    let device = try MiniDevice()
    // An earlier launch stored pro; this one starts offline.
    let earlier = try SQLiteCustomerInfoCache(path: device.cacheFile, clock: device.runtime.clock)
    try earlier.store(try CustomerInfoSnapshot(jsonData: device.backend.body()), for: device.scope)
    try earlier.close()
    device.backend.failFetches(with: .offline)
    let sdk = try device.open()
    defer { try? sdk.close() }

    sdk.start()
    #expect(device.backend.calls.fetches.isEmpty)
    #expect(sdk.currentState?.access(to: "pro")?.isGranted == true)

    device.runtime.runUntilIdle()
    #expect(device.backend.calls.fetches == ["alice"])
    #expect(sdk.access(to: "pro").isGranted)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func aFetchStoresAndGrantsPro() async throws {
    let device = try MiniDevice()
    let sdk = try device.open()
    defer { try? sdk.close() }
    let states = Collected<ClientState>()
    _ = device.runtime.spawn { for await state in sdk.updates { states.append(state) } }

    sdk.start()
    #expect(sdk.currentState?.access(to: "pro")?.state == .offlineUnavailable(.noSnapshot))
    device.runtime.runUntilIdle()

    let decision = sdk.access(to: "pro")
    #expect(decision.isGranted)
    #expect(decision.evidence.freshness == .fresh)
    #expect(states.all.map { $0.access(to: "pro")?.isGranted } == [false, true])
    // It is on disk: another instance on the file reads it.
    let other = try SQLiteCustomerInfoCache(path: device.cacheFile, clock: device.runtime.clock)
    #expect(other.hasActiveEntitlement("pro", for: device.scope))
    try other.close()
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func aFailedRefreshKeepsAccessOffline() throws {
    let device = try MiniDevice()
    let sdk = try device.open()
    defer { try? sdk.close() }
    sdk.start()
    device.runtime.runUntilIdle()

    sdk.didEnterBackground()
    device.runtime.advance(by: .seconds(600))  // stale after 5 minutes
    device.backend.failFetches(with: .serverError(status: 503))
    sdk.didBecomeActive()
    device.runtime.runUntilIdle()

    #expect(device.backend.calls.fetches.count == 2)
    let decision = sdk.access(to: "pro")
    #expect(decision.isGranted)
    #expect(decision.evidence.freshness == .offline)
    let failures = device.log.lines("refresh_failed")
    #expect(failures.count == 1)
    #expect(failures.first?.level == .warning)
    #expect(failures.first?.message.contains("503") == true)
    #expect(!device.log.lines("retry_scheduled").isEmpty)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func aPurchaseIsQueuedThenPosted() async throws {
    let device = try MiniDevice()
    let sdk = try device.open()
    defer { try? sdk.close() }
    let token = Data("signed-transaction".utf8)
    sdk.start()
    device.runtime.runUntilIdle()

    // Offline: the purchase is queued on disk, and says "processing".
    device.backend.failPosts(with: .offline)
    let first = await device.run {
      try? await sdk.purchaseCompleted(transactionID: "t1", productID: "pro_monthly", token: token)
    }
    #expect(first?.pending.map(\.transactionID) == ["t1"])
    #expect(first?.synced.isEmpty == true)
    #expect(sdk.access(to: "pro").evidence.pendingPurchase)

    // Back online: the backed-off post goes out on its own timer, as the buyer.
    device.backend.failPosts(with: nil)
    device.runtime.advance(by: .seconds(3))
    let posts = device.backend.calls.posts
    #expect(posts.count == 2)
    #expect(posts.last?.appUserID == "alice")
    #expect(posts.last?.transactionID == "t1")
    #expect(posts.last?.token == token)
    #expect(!sdk.access(to: "pro").evidence.pendingPurchase)

    let restored = await device.run { await sdk.restorePurchases() }
    #expect(restored.isSettled)
    #expect(restored.state.access(to: "pro")?.isGranted == true)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func diagnosticsOfTheCacheAndTheClientReachTheLog() throws {
    let device = try MiniDevice()
    // With trust roots, an unsigned answer is stored as failed verification: the cache tells.
    let roots = try TrustRoots(publicKeys: [hex(readmeVector.rootPublicKey)])
    let sdk = try device.open(trustRoots: roots)
    defer { try? sdk.close() }
    sdk.start()
    device.runtime.runUntilIdle()

    let unverified = device.log.lines("snapshot_unverified")
    #expect(unverified.count == 1)
    #expect(unverified.first?.message.contains("missing_signature") == true)
    let decision = sdk.access(to: "pro")
    #expect(decision.isGranted)  // verification is informational unless required
    #expect(decision.evidence.verificationFailure == .missingSignature)
    #expect(!decision.isHighTrust)

    // The client tells a failed refresh.
    device.backend.failFetches(with: .offline)
    sdk.didEnterBackground()
    device.runtime.advance(by: .seconds(600))
    sdk.didBecomeActive()
    device.runtime.runUntilIdle()
    #expect(device.log.lines("refresh_failed").count == 1)
    // No line carries the app-user ID or the SDK key.
    #expect(
      device.log.all.allSatisfy { !$0.message.contains("alice") && !$0.message.contains("sdk_key") }
    )
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func logInAndLogOutSwitchUsers() async throws {
    let device = try MiniDevice()
    let sdk = try device.open()
    defer { try? sdk.close() }
    sdk.start()
    device.runtime.runUntilIdle()

    let bob = await device.run { try? await sdk.logIn("bob") }
    #expect(bob?.appUserID == "bob")
    #expect(bob?.access(to: "pro")?.isGranted == true)
    #expect(device.backend.calls.fetches == ["alice", "bob"])

    let anonymous = await device.run { try? await sdk.logOut() }
    #expect(anonymous?.appUserID.hasPrefix("$anonymous:") == true)
    #expect(device.backend.calls.fetches.count == 3)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test func trustRootsVerifyTheDocumentedTestVector() throws {
    let device = try MiniDevice()
    let clock = ManualClock(device.launch)  // the vector's requestDate
    let roots = try TrustRoots(publicKeys: [hex(readmeVector.rootPublicKey)])
    var configuration = CacheConfiguration()
    configuration.trustRoots = roots
    configuration.policy.requireVerified = true
    let cache = try SQLiteCustomerInfoCache(
      path: device.cacheFile, configuration: configuration, clock: clock.cacheClock)
    defer { try? cache.close() }
    let vectorScope = try CacheScope(
      sdkKey: "sdk_test_key", installationID: "install-1", environment: .production,
      appUserID: "alice")
    #expect(vectorScope.id == readmeVector.scopeHash)

    let signature = ResponseSignature(
      signature: hex(readmeVector.signature), intermediate: hex(readmeVector.intermediate),
      nonce: hex(readmeVector.nonce), scopeHash: hex(readmeVector.scopeHash))
    let snapshot = try CustomerInfoSnapshot(
      jsonData: Data(readmeVector.body.utf8), signature: signature,
      requestNonce: hex(readmeVector.nonce))
    try cache.store(snapshot, for: vectorScope)

    let decision = cache.access(to: "pro", for: vectorScope)
    #expect(decision.isGranted)
    #expect(decision.evidence.verification == .known(.verified))
    #expect(decision.isHighTrust)
  }
}

/// The documented test vector (the trusted-snapshots article, "The format, for server teams").
let readmeVector = (
  rootPublicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
  intermediate:
    "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c000001a2ce8bd40055baf568"
    + "13078602b2e2a8182b325ad8cd5374e35158239b5f047e364e2c11cc5547c77ccbacb5a90b9f8e8ac2d74a9f"
    + "c463554c7471e311d1c54cc69a43790b",
  scopeHash: "ba912ab9b46bd164a5688fae0577426e59c9bb6ee6f95a6c93bc31516e8d0ef1",
  nonce: "000102030405060708090a0b0c0d0e0f",
  body:
    #"{"requestDate":"2026-11-30T12:00:00Z","verification":"verified","entitlements":{"pro":"#
    + #"{"status":"active","expiresAt":"2026-12-30T12:00:00Z"}}}"#,
  signature:
    "50388317acc5dc3567f4901de933e3b0f192f8074b57b5737f976ff75f927669b5c92ce6e1518decf587097e"
    + "f6ad82041ee2d7c678d68e98d846c6fe37eb2103"
)

/// The bytes of a hexadecimal string.
func hex(_ text: String) -> [UInt8] {
  let digits = Array(text.utf8)
  return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
    UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)
  }
}
