import EntitlementCache
import Foundation

/// How much a log line matters.
public enum MiniLogLevel: String, Sendable, Hashable {
  /// Something went right again, or a step was taken.
  case info
  /// Something the SDK handled on its own that support may want to see.
  case warning
  /// Something is wrong with what is stored.
  case error
}

/// Receives the SDK's log lines. Each line is safe to log as public: it carries no token, no
/// raw app-user ID, no SDK key and no file path. Called on the thread where the event
/// happened; keep it short and do not call back into ``MiniPurchases`` from it.
public typealias MiniLogHandler = @Sendable (MiniLogLevel, String) -> Void

/// What the app tells ``MiniPurchases`` once, at launch.
public struct MiniConfiguration: Sendable {
  /// The SDK key the app was given.
  public var apiKey: String
  /// This installation's ID, kept by the app across launches.
  public var installationID: String
  /// The app-user ID to start as.
  public var appUserID: String
  /// Where the cache file lives.
  public var cacheFile: String
  /// The store environment. Default production.
  public var environment: StoreEnvironment = .production
  /// The backend's pinned root keys; nil when answers are not checked for a signature.
  public var trustRoots: TrustRoots?
  /// The entitlements every published state carries decisions for. Default `pro`.
  public var watchedEntitlements: Set<String> = ["pro"]
  /// Where the cache's and the client's diagnostics go; nil for nowhere.
  public var log: MiniLogHandler?
  /// What the SDK's previous version cached for ``appUserID``, on the first launch after the
  /// upgrade: imported as of its save when the new cache holds nothing for the user, so an
  /// offline launch neither locks the user out nor re-grants what lapsed since. Nil: none.
  public var previousCache: MiniPreviousCache?
  /// Where the cache file was before it moved to ``cacheFile`` (into an App Group container,
  /// when the app gained a widget): merged into ``cacheFile`` and removed at every launch
  /// until it is gone, which then costs one `stat`. Nil: the file never moved.
  public var previousCacheFile: String?

  /// A configuration with every other setting at its default.
  public init(apiKey: String, installationID: String, appUserID: String, cacheFile: String) {
    self.apiKey = apiKey
    self.installationID = installationID
    self.appUserID = appUserID
    self.cacheFile = cacheFile
  }
}

/// The last CustomerInfo the SDK's previous version cached: its JSON, and when it was saved.
public struct MiniPreviousCache: Sendable {
  /// The CustomerInfo's JSON, in EntitlementCache's snapshot format.
  public var body: Data
  /// When the previous version saved it; nil when it did not keep the time.
  public var savedAt: Date?

  /// A previous cache's body, saved at `savedAt`.
  public init(body: Data, savedAt: Date?) {
    self.body = body
    self.savedAt = savedAt
  }
}

/// The SDK's entry point: one cache file, one refresh client, the flows an app calls.
///
/// ```swift
/// let purchases = try MiniPurchases(configuration: configuration, transport: backend)
/// purchases.start()  // the cached state at once, then a refresh
/// if purchases.access(to: "pro").isGranted { showPro() }
/// ```
public final class MiniPurchases: Sendable {
  private let cache: SQLiteCustomerInfoCache
  private let client: EntitlementClient
  /// What became of ``MiniConfiguration/previousCache``: nil when there was none, or it could
  /// not be read (logged as a warning; the first refresh brings the user's state anyway).
  public let adoption: ImportOutcome?
  /// What became of ``MiniConfiguration/previousCacheFile`` at this launch: nil when there is
  /// none, or it could not be moved yet (logged as a warning; the next launch tries again).
  public let relocation: RelocationOutcome?

  /// Opens the cache file and sets up the client; nothing touches the network until
  /// ``start()``.
  ///
  /// - Parameters:
  ///   - configuration: The app's keys, user, file, trust roots and log.
  ///   - transport: The app's network.
  ///   - clock: The clock every decision is made with; tests pass a virtual one.
  ///   - runtime: Where the client waits and runs its tasks; tests pass a simulated one.
  /// - Throws: `CacheError` for a file that cannot be opened or a bad setting, `ScopeError`
  ///   for an empty key, installation or user ID.
  public init(
    configuration: MiniConfiguration, transport: any MiniTransport,
    clock: CacheClock = .system, runtime: (any ClientRuntime)? = nil
  ) throws {
    let forward = configuration.log.map(Self.forwarding(to:))

    var cacheConfiguration = CacheConfiguration()
    cacheConfiguration.trustRoots = configuration.trustRoots
    cacheConfiguration.onDiagnostic = forward
    cache = try SQLiteCustomerInfoCache(
      path: configuration.cacheFile, configuration: cacheConfiguration, clock: clock)

    // Before anything reads the user's state: what the old file holds answers from here on.
    if let previousFile = configuration.previousCacheFile {
      relocation = MiniPurchases.move(previousFile, into: cache, log: configuration.log)
    } else {
      relocation = nil
    }

    let identity = try ClientIdentity(
      sdkKey: configuration.apiKey, installationID: configuration.installationID,
      environment: configuration.environment, appUserID: configuration.appUserID)
    if let previous = configuration.previousCache {
      adoption = MiniPurchases.adopt(
        previous, into: cache, for: identity.scope, log: configuration.log)
    } else {
      adoption = nil
    }

    var clientConfiguration = ClientConfiguration()
    clientConfiguration.watchedEntitlements = configuration.watchedEntitlements
    clientConfiguration.onDiagnostic = forward
    client = try EntitlementClient(
      cache: cache, fetcher: TransportFetcher(transport: transport),
      identity: identity, configuration: clientConfiguration, runtime: runtime,
      poster: TransportPoster(transport: transport))
  }

  /// Merges the file the cache had before it moved into the one it has now, then removes it.
  private static func move(
    _ previousFile: String, into cache: SQLiteCustomerInfoCache, log: MiniLogHandler?
  ) -> RelocationOutcome? {
    do {
      let outcome = try cache.relocate(from: previousFile)
      if outcome != .nothingToMove { log?(.info, "cache file moved: \(outcome)") }
      return outcome
    } catch {
      // The old file stays where it is; the new one answers meanwhile. Only the kind is
      // logged: the error's description names the file's path.
      let kind = if case .storage(_, let failure) = error { "\(failure.kind)" } else { "refused" }
      log?(.warning, "cache file not moved yet: \(kind)")
      return nil
    }
  }

  /// Imports the previous version's snapshot as of its save, before the client publishes
  /// anything. Importing again at a later launch finds the scope filled and changes nothing.
  private static func adopt(
    _ previous: MiniPreviousCache, into cache: SQLiteCustomerInfoCache, for scope: CacheScope,
    log: MiniLogHandler?
  ) -> ImportOutcome? {
    do {
      let snapshot = try CustomerInfoSnapshot(jsonData: previous.body)
      let outcome = try cache.importSnapshot(
        SnapshotImport(snapshot: snapshot, savedAt: previous.savedAt, label: "minisdk-v1"),
        for: scope)
      log?(.info, "previous cache: \(outcome)")
      return outcome
    } catch {
      log?(.warning, "previous cache not imported: \(error)")
      return nil
    }
  }

  /// Publishes the cached state at once, before any network call, then refreshes and posts
  /// any queued purchase.
  public func start() { client.start() }

  /// Stops every fetch, timer and stream, and closes the cache file.
  ///
  /// - Throws: `CacheError` when what reads learned could not be written; nothing is lost.
  public func close() throws {
    client.stop()
    try cache.close()
  }

  /// The decision for `entitlement` now, from the cache: never waits on the network.
  public func access(to entitlement: String) -> AccessDecision {
    client.access(to: entitlement)
  }

  /// The state last published; nil before ``start()``.
  public var currentState: ClientState? { client.currentState }

  /// The current user's state: the latest at once, then every change. Ends at ``close()``.
  public var updates: AsyncStream<ClientState> { client.updates }

  /// The app came back to the foreground from the background: refreshes when the cached
  /// state is stale. The SDK starts in the foreground, and a call while it is there (after no
  /// ``didEnterBackground()``) does nothing.
  public func didBecomeActive() { client.didEnterForeground() }

  /// The app went to the background: retries stop until it is active again.
  public func didEnterBackground() { client.didEnterBackground() }

  /// The network came back: posts queued purchases and refreshes when serving offline.
  public func networkBecameReachable() { client.networkAvailable() }

  /// A store transaction completed. It is queued on disk before any network call, then posted
  /// as the current user; finish the store's transaction once the result lists it as synced.
  ///
  /// - Throws: `CacheError` when it could not be queued; nothing was posted then.
  public func purchaseCompleted(transactionID: String, productID: String, token: Data)
    async throws -> PurchaseSyncResult
  {
    try await client.purchaseCompleted(
      ObservedPurchase(
        transactionID: transactionID, productID: productID, token: PurchaseToken(token)))
  }

  /// Posts every queued purchase of the current user now, then refreshes.
  public func restorePurchases() async -> PurchaseSyncResult {
    await client.restorePurchases()
  }

  /// Switches to `appUserID`; returns once that user's state has been refreshed.
  ///
  /// - Throws: `ScopeError` for an empty ID.
  public func logIn(_ appUserID: String) async throws -> ClientState {
    try await client.logIn(appUserID)
  }

  /// Switches to a new anonymous user and removes the previous user's cached state.
  ///
  /// - Throws: `CacheError` when that state could not be removed; nothing switched then.
  public func logOut() async throws -> ClientState {
    try await client.logOut()
  }

  /// One handler for the cache and the client, turning each diagnostic into a log line.
  private static func forwarding(to log: @escaping MiniLogHandler) -> DiagnosticHandler {
    { diagnostic in
      let level: MiniLogLevel =
        switch diagnostic.severity {
        case .info: .info
        case .warning: .warning
        case .error: .error
        }
      log(level, diagnostic.description)
    }
  }
}
