import EntitlementCache
import EntitlementCacheTesting
import Foundation
import MiniSDK
import Testing

/// The facade end to end: a real SQLite cache file in a temporary directory, a scripted
/// backend, and virtual time (`SimulatedRuntime`), so no test sleeps.
@Suite final class MiniPurchasesTests {
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

  func open(trustRoots: TrustRoots? = nil) throws -> MiniPurchases {
    var configuration = MiniConfiguration(
      apiKey: "sdk_key", installationID: "install-1", appUserID: "alice", cacheFile: cacheFile)
    configuration.trustRoots = trustRoots
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

  @Test func startPublishesTheCachedStateBeforeTheNetwork() throws {
    // An earlier launch stored pro; this one starts offline.
    let earlier = try SQLiteCustomerInfoCache(path: cacheFile, clock: runtime.clock)
    try earlier.store(try CustomerInfoSnapshot(jsonData: backend.body()), for: scope)
    try earlier.close()
    backend.failFetches(with: .offline)
    let sdk = try open()
    defer { try? sdk.close() }

    sdk.start()
    #expect(backend.calls.fetches.isEmpty)
    #expect(sdk.currentState?.access(to: "pro")?.isGranted == true)

    runtime.runUntilIdle()
    #expect(backend.calls.fetches == ["alice"])
    #expect(sdk.access(to: "pro").isGranted)
  }

  @Test func aFetchStoresAndGrantsPro() async throws {
    let sdk = try open()
    defer { try? sdk.close() }
    let states = Collected<ClientState>()
    _ = runtime.spawn { for await state in sdk.updates { states.append(state) } }

    sdk.start()
    #expect(sdk.currentState?.access(to: "pro")?.state == .offlineUnavailable(.noSnapshot))
    runtime.runUntilIdle()

    let decision = sdk.access(to: "pro")
    #expect(decision.isGranted)
    #expect(decision.evidence.freshness == .fresh)
    #expect(states.all.map { $0.access(to: "pro")?.isGranted } == [false, true])
    // It is on disk: another instance on the file reads it.
    let other = try SQLiteCustomerInfoCache(path: cacheFile, clock: runtime.clock)
    #expect(other.hasActiveEntitlement("pro", for: scope))
    try other.close()
  }

  @Test func aFailedRefreshKeepsAccessOffline() throws {
    let sdk = try open()
    defer { try? sdk.close() }
    sdk.start()
    runtime.runUntilIdle()

    sdk.didEnterBackground()
    runtime.advance(by: .seconds(600))  // stale after 5 minutes
    backend.failFetches(with: .serverError(status: 503))
    sdk.didBecomeActive()
    runtime.runUntilIdle()

    #expect(backend.calls.fetches.count == 2)
    let decision = sdk.access(to: "pro")
    #expect(decision.isGranted)
    #expect(decision.evidence.freshness == .offline)
    let failures = log.lines("refresh_failed")
    #expect(failures.count == 1)
    #expect(failures.first?.level == .warning)
    #expect(failures.first?.message.contains("503") == true)
    #expect(!log.lines("retry_scheduled").isEmpty)
  }

  @Test func aPurchaseIsQueuedThenPosted() async throws {
    let sdk = try open()
    defer { try? sdk.close() }
    let token = Data("signed-transaction".utf8)
    sdk.start()
    runtime.runUntilIdle()

    // Offline: the purchase is queued on disk, and says "processing".
    backend.failPosts(with: .offline)
    let first = await run {
      try? await sdk.purchaseCompleted(transactionID: "t1", productID: "pro_monthly", token: token)
    }
    #expect(first?.pending.map(\.transactionID) == ["t1"])
    #expect(first?.synced.isEmpty == true)
    #expect(sdk.access(to: "pro").evidence.pendingPurchase)

    // Back online: the backed-off post goes out on its own timer, as the buyer.
    backend.failPosts(with: nil)
    runtime.advance(by: .seconds(3))
    let posts = backend.calls.posts
    #expect(posts.count == 2)
    #expect(posts.last?.appUserID == "alice")
    #expect(posts.last?.transactionID == "t1")
    #expect(posts.last?.token == token)
    #expect(!sdk.access(to: "pro").evidence.pendingPurchase)

    let restored = await run { await sdk.restorePurchases() }
    #expect(restored.isSettled)
    #expect(restored.state.access(to: "pro")?.isGranted == true)
  }

  @Test func diagnosticsOfTheCacheAndTheClientReachTheLog() throws {
    // With trust roots, an unsigned answer is stored as failed verification: the cache tells.
    let roots = try TrustRoots(publicKeys: [hex(readmeVector.rootPublicKey)])
    let sdk = try open(trustRoots: roots)
    defer { try? sdk.close() }
    sdk.start()
    runtime.runUntilIdle()

    let unverified = log.lines("snapshot_unverified")
    #expect(unverified.count == 1)
    #expect(unverified.first?.message.contains("missing_signature") == true)
    let decision = sdk.access(to: "pro")
    #expect(decision.isGranted)  // verification is informational unless required
    #expect(decision.evidence.verificationFailure == .missingSignature)
    #expect(!decision.isHighTrust)

    // The client tells a failed refresh.
    backend.failFetches(with: .offline)
    sdk.didEnterBackground()
    runtime.advance(by: .seconds(600))
    sdk.didBecomeActive()
    runtime.runUntilIdle()
    #expect(log.lines("refresh_failed").count == 1)
    // No line carries the app-user ID or the SDK key.
    #expect(log.all.allSatisfy { !$0.message.contains("alice") && !$0.message.contains("sdk_key") })
  }

  @Test func logInAndLogOutSwitchUsers() async throws {
    let sdk = try open()
    defer { try? sdk.close() }
    sdk.start()
    runtime.runUntilIdle()

    let bob = await run { try? await sdk.logIn("bob") }
    #expect(bob?.appUserID == "bob")
    #expect(bob?.access(to: "pro")?.isGranted == true)
    #expect(backend.calls.fetches == ["alice", "bob"])

    let anonymous = await run { try? await sdk.logOut() }
    #expect(anonymous?.appUserID.hasPrefix("$anonymous:") == true)
    #expect(backend.calls.fetches.count == 3)
  }

  @Test func trustRootsVerifyTheDocumentedTestVector() throws {
    let clock = ManualClock(launch)  // the vector's requestDate
    let roots = try TrustRoots(publicKeys: [hex(readmeVector.rootPublicKey)])
    var configuration = CacheConfiguration()
    configuration.trustRoots = roots
    configuration.policy.requireVerified = true
    let cache = try SQLiteCustomerInfoCache(
      path: cacheFile, configuration: configuration, clock: clock.cacheClock)
    defer { try? cache.close() }
    let vectorScope = try CacheScope(
      sdkKey: "sdk_test_key", installationID: "install-1", environment: .production,
      appUserID: "alice")
    #expect(vectorScope.key.hex == readmeVector.scopeHash)

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
