/// The flow that asked for a refresh (<doc:RefreshClient>); the fetcher sees it, and a failed
/// refresh's diagnostic names it.
public enum RefreshFlow: String, Sendable, Hashable, CaseIterable {
  /// ``EntitlementClient/start(in:)``: the configure flow.
  case start
  /// The app entered the foreground with a stale snapshot.
  case foreground
  /// A purchase completed.
  case purchase
  /// ``EntitlementClient/restorePurchases()``.
  case restore
  /// ``EntitlementClient/syncPurchases()``.
  case sync
  /// The app-user ID changed: ``EntitlementClient/logIn(_:)`` or ``EntitlementClient/logOut(to:)``.
  case identityChange
  /// The network came back after access was served offline.
  case networkAvailable
  /// A read with a fetch policy that fetches: ``EntitlementClient/state(fetchPolicy:)``.
  case fetchPolicy
  /// ``EntitlementClient/refresh()``.
  case explicit
  /// A retry after a failure, backed off.
  case retry

  /// Flows that must see the server's state after the event that started them: they never
  /// join a fetch already in flight, which may have left before the purchase or the restore.
  var needsFetchStartedAfterIt: Bool {
    switch self {
    case .purchase, .restore, .sync, .identityChange: true
    default: false
    }
  }
}

/// How ``EntitlementClient/state(fetchPolicy:)`` balances the cache and the network
/// (<doc:RefreshClient>).
public enum FetchPolicy: Sendable, Hashable {
  /// The cached state; never the network.
  case cacheOnly
  /// The cached state now, and a refresh in the background when it is stale. The default.
  case cachedOrFetched
  /// The cached state when it is fresh; otherwise waits for a refresh.
  case notStaleCachedOrFetched
  /// Waits for a fetch up to `timeout` (a forced fetch). On a timeout or a failure it answers
  /// the cached state marked offline, unless another flow (a purchase post, say) stored an
  /// answer since the fetch left: that answer is newer, and the state stays as it made it. The
  /// fetch goes on, and its answer is stored when it comes.
  case fetchCurrent(timeout: Duration)
}

/// Whether the app is in front of the user: the client refreshes, polls for other processes'
/// writes and retries only in the foreground.
public enum AppPhase: String, Sendable, Hashable {
  /// The app is visible.
  case foreground
  /// The app is in the background (or was launched there).
  case background
}
