// The refresh client's article (<doc:RefreshClient>) shows the code between the two markers
// below, byte for byte (SDKIntegrationTests checks it), so the example always compiles and
// does what the article says.

// RefreshClient.md: begin
import EntitlementCache
import EntitlementCacheTesting
import Foundation
import Observation
import Testing

/// The SDK's transport: URLSession in an app; anything that can GET and POST a path.
protocol HTTPTransport: Sendable {
  func get(_ path: String, headers: [String: String]) async throws -> (status: Int, body: Data)
  func post(_ path: String, headers: [String: String], body: Data) async throws
    -> (status: Int, body: Data)
}

/// 1. The network is the SDK's: map its answers to what the client needs.
struct BackendFetcher: CustomerInfoFetcher {
  let transport: any HTTPTransport
  let apiKey: String

  func fetchCustomerInfo(_ request: FetchRequest) async throws(FetchFailure)
    -> FetchedCustomerInfo
  {
    let path =
      "/v1/subscribers/"
      + (request.appUserID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "")
    let headers = [
      "Authorization": "Bearer \(apiKey)",
      "X-Nonce": Data(request.nonce).base64EncodedString(),  // the server signs it
      "X-Flow": request.flow.rawValue,
    ]
    let answer: (status: Int, body: Data)
    do {
      answer = try await transport.get(path, headers: headers)
    } catch {
      throw .transient(status: nil)  // no network, timeout, cancelled
    }
    switch answer.status {
    case 200..<300: return FetchedCustomerInfo(body: answer.body)
    case 400..<500: throw .rejected(status: answer.status)
    default: throw .transient(status: answer.status)
    }
  }
}

/// 2. Purchases too. The client posts each queued purchase as the user who first observed it,
/// so `request.appUserID` is the buyer's, whoever is logged in now.
struct BackendPoster: PurchasePoster {
  let transport: any HTTPTransport
  let apiKey: String

  func post(_ request: PurchasePostRequest) async throws(FetchFailure) -> PurchasePostResult {
    let headers = [
      "Authorization": "Bearer \(apiKey)", "X-App-User-ID": request.appUserID,
      "X-Transaction-ID": request.transactionID,  // the server de-duplicates by it
    ]
    let answer: (status: Int, body: Data)
    do {
      answer = try await transport.post("/v1/receipts", headers: headers, body: request.token.bytes)
    } catch {
      throw .transient(status: nil)
    }
    switch answer.status {
    case 200..<300: return .synced(FetchedCustomerInfo(body: answer.body))
    case 409: return .conflict(resolution: .loginRequired)  // another app user owns it
    case 400..<500: throw .rejected(status: answer.status)
    default: throw .transient(status: answer.status)
    }
  }
}

/// 3. The SDK's entry point: one cache file, one client, the flows the app calls.
final class Purchases: Sendable {
  let client: EntitlementClient
  private let cache: SQLiteCustomerInfoCache

  init(
    apiKey: String, appUserID: String, installationID: String, cacheFile: String,
    transport: any HTTPTransport, clock: CacheClock = .system,
    runtime: any ClientRuntime = SystemClientRuntime()
  ) throws {
    // The client reads the time from its cache: the one clock of the whole stack.
    // Launched before the first unlock, it answers storage_unavailable until the file opens.
    cache = try SQLiteCustomerInfoCache(path: cacheFile, clock: clock)
    var configuration = ClientConfiguration()
    configuration.watchedEntitlements = ["pro"]
    client = try EntitlementClient(
      cache: cache, fetcher: BackendFetcher(transport: transport, apiKey: apiKey),
      identity: ClientIdentity(
        sdkKey: apiKey, installationID: installationID, environment: .production,
        appUserID: appUserID),
      configuration: configuration, runtime: runtime,
      poster: BackendPoster(transport: transport, apiKey: apiKey))
    client.start()  // publishes the cached state at once, then refreshes and drains the queue
  }

  // 4. The app's lifecycle, wired once (UIApplication / NSApplication notifications, and
  // NWPathMonitor for the network).
  func applicationDidBecomeActive() { client.didEnterForeground() }
  func applicationDidEnterBackground() { client.didEnterBackground() }
  func networkBecameReachable() { client.networkAvailable() }
  func protectedDataDidBecomeAvailable() { cache.protectedDataDidBecomeAvailable() }

  // 5. The flows an app calls. Each answers the state after its refresh.
  func logIn(_ appUserID: String) async throws -> ClientState { try await client.logIn(appUserID) }
  func logOut() async throws -> ClientState { try await client.logOut() }
  func restorePurchases() async -> PurchaseSyncResult { await client.restorePurchases() }

  /// Called from the store's transaction listener. The purchase is on disk before any network
  /// call; finish the store's transaction once the result lists it as synced.
  func purchaseCompleted(transactionID: String, productID: String, signedTransaction: Data)
    async throws -> PurchaseSyncResult
  {
    try await client.purchaseCompleted(
      ObservedPurchase(
        transactionID: transactionID, productID: productID,
        token: PurchaseToken(signedTransaction)))
  }
  func state(forceFetch: Bool = false) async -> ClientState {
    await client.state(
      fetchPolicy: forceFetch ? .fetchCurrent(timeout: .seconds(5)) : .cachedOrFetched)
  }
}

/// 6. A SwiftUI-style observer: `.task { await model.watch(purchases) }` on the paywall.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor @Observable final class ProAccessModel {
  private(set) var isUnlocked = false
  private(set) var message = "Checking your subscription…"

  func watch(_ purchases: Purchases) async {
    for await update in purchases.client.accessUpdates(to: "pro") {
      let decision = update.decision
      isUnlocked = decision.isGranted
      switch decision.state {
      case .granted:
        message = decision.evidence.isComputedOffline == true ? "Pro (offline)" : "Pro"
      case .denied(.expired): message = "Your subscription ended"
      case .denied where decision.evidence.pendingPurchase: message = "Purchase processing…"
      case .denied: message = decision.recovery == nil ? "Upgrade to Pro" : "Restore purchases"
      case .deviceBlocked: message = "Pro is in use on another device"
      case .offlineUnavailable: message = "Can't check your subscription: try again online"
      }
    }
  }
}
// RefreshClient.md: end
