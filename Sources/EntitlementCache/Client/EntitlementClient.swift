#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The refresh client: what an SDK runs on top of any ``CustomerInfoCache`` (<doc:RefreshClient>).
///
/// It fills the cache from the SDK's ``CustomerInfoFetcher`` in the flows of ``RefreshFlow``,
/// and publishes the current identity's state to the app. It owns no storage.
///
/// ```swift
/// let client = try EntitlementClient(
///   cache: cache, fetcher: BackendFetcher(), identity: identity,
///   configuration: configuration)
/// client.start()                                  // publishes the cached state, then refreshes
/// for await update in client.accessUpdates(to: "pro") { show(update.decision.isGranted) }
/// ```
///
/// What it promises:
/// - ``start(in:)`` publishes before any network call; with nothing cached it publishes
///   `offlineUnavailable(noSnapshot)` at once.
/// - Every stream replays the latest state, then each change, never the same state twice; a
///   boundary crossed with no network (an expiry, `staleAfter`) republishes at its instant.
/// - Concurrent refreshes of one scope share one fetch. Every answer is stored under the scope
///   its request captured and reaches the stream only while that scope is current. An answer
///   older than the stored snapshot is not stored, nor a failed verification over a verified
///   one.
/// - Failed fetches are retried with backoff in the foreground only.
/// - In the foreground, a write by another process sharing the cache is published within
///   ``ClientConfiguration/changeCheckInterval``.
///
/// The client calls the cache while holding its own lock, so a cache (or a
/// ``DiagnosticHandler``) must not call back into the client.
public final class EntitlementClient: Sendable {
  let cache: any CustomerInfoCache
  let fetcher: any CustomerInfoFetcher
  /// The SDK's network for purchases; nil when the client posts none.
  let poster: (any PurchasePoster)?
  /// The cache's purchase queue, when it keeps one.
  let purchaseQueue: (any PurchaseQueueStore)?
  let configuration: ClientConfiguration
  let runtime: any ClientRuntime
  let core: Locked<ClientCore>
  /// Held around every cache write the client makes and around `logOut`'s removal, so a
  /// removal cannot fall between an answer's "was this user logged out?" check and its write.
  /// Lock order: a flight's lock, then this, then `core`.
  let writes = Locked(())
  /// How many of the client's own cache writes are under way: the cache's write signal for
  /// those is left to the flow that made them, which publishes after, in order with its report.
  let ownWrites = Locked<Int>(0)
  /// The client's observation of the cache's writes (``CustomerInfoChangeSignaling``), from
  /// `start` to `stop`.
  let writeObservation = Locked<WriteObservation?>(nil)

  /// A client for `identity` that posts no purchases; nothing happens until ``start(in:)``.
  /// The SDK posts purchases itself and calls ``refreshAfterPurchase()``; restore and sync only
  /// refresh, and ``purchaseCompleted(_:)``, which needs a queue, throws.
  ///
  /// - Parameters:
  ///   - cache: Where snapshots are kept, and the clock the client reads the time from.
  ///   - fetcher: The SDK's network.
  ///   - identity: The app and its current app-user ID.
  ///   - configuration: Watched entitlements, staleness, retries.
  ///   - runtime: Waits, executor and randomness. The time is the cache's ``CustomerInfoCache/clock``.
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` for a bad configuration.
  public convenience init(
    cache: any CustomerInfoCache, fetcher: any CustomerInfoFetcher, identity: ClientIdentity,
    configuration: ClientConfiguration = ClientConfiguration(),
    runtime: (any ClientRuntime)? = nil
  ) throws(CacheError) {
    try self.init(
      cache: cache, queue: nil, poster: nil, fetcher: fetcher, identity: identity,
      configuration: configuration, runtime: runtime ?? SystemClientRuntime())
  }

  /// A client for `identity` that posts the purchase queue `cache` keeps through `poster`;
  /// nothing happens until ``start(in:)``. A poster needs a cache that keeps a queue
  /// (``SQLiteCustomerInfoCache`` and the in-memory cache of
  /// ``inMemoryCustomerInfoCache(policy:snapshotSizeLimit:clock:trustRoots:)`` do): with any other, this
  /// initializer does not compile.
  ///
  /// - Parameters:
  ///   - cache: Where snapshots and the purchase queue are kept, and the clock the client
  ///     reads the time from.
  ///   - fetcher: The SDK's network.
  ///   - identity: The app and its current app-user ID.
  ///   - configuration: Watched entitlements, staleness, retries.
  ///   - runtime: Waits, executor and randomness. The time is the cache's ``CustomerInfoCache/clock``.
  ///   - poster: The SDK's network for purchases.
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` for a bad configuration.
  public convenience init(
    cache: any CustomerInfoCache & PurchaseQueueStore, fetcher: any CustomerInfoFetcher,
    identity: ClientIdentity, configuration: ClientConfiguration = ClientConfiguration(),
    runtime: (any ClientRuntime)? = nil, poster: any PurchasePoster
  ) throws(CacheError) {
    try self.init(
      cache: cache, queue: cache, poster: poster, fetcher: fetcher, identity: identity,
      configuration: configuration, runtime: runtime ?? SystemClientRuntime())
  }

  private init(
    cache: any CustomerInfoCache, queue: (any PurchaseQueueStore)?,
    poster: (any PurchasePoster)?, fetcher: any CustomerInfoFetcher, identity: ClientIdentity,
    configuration: ClientConfiguration, runtime: any ClientRuntime
  ) throws(CacheError) {
    try configuration.validate()
    self.cache = cache
    self.fetcher = fetcher
    self.poster = poster
    purchaseQueue = queue
    self.configuration = configuration
    self.runtime = runtime
    core = Locked(ClientCore(identity: identity))
  }

  /// A client dropped without ``stop()`` cancels its timers and ends its streams; its timers
  /// hold it only weakly, so dropping it is enough. A fetch or post in flight holds it until
  /// it ends, at most ``ClientConfiguration/fetchTimeout``.
  deinit {
    let (tasks, endStreams) = core.withLock { core in
      (Array(core.tasks.values), core.takeSubscribers())
    }
    for task in tasks { task.cancel() }
    endStreams()
  }

  // MARK: Reading

  /// The decision for `entitlement` for the current identity now, from the cache. Never
  /// touches the network.
  public func access(to entitlement: String) -> AccessDecision {
    let scope = core.withLock { $0.identity.scope }
    return cache.access(to: entitlement, for: scope, policy: nil)
  }

  /// The current identity.
  public var identity: ClientIdentity {
    core.withLock { $0.identity }
  }

  /// The state last published; nil before ``start(in:)``.
  public var currentState: ClientState? {
    core.withLock { $0.published }
  }

  /// The current identity's state under `fetchPolicy` (<doc:RefreshClient>).
  ///
  /// The state answered is the identity's that is current when the call returns: if the app
  /// switched users while it waited, it gets the new user's state (see ``ClientState/appUserID``),
  /// never the previous user's.
  public func state(fetchPolicy: FetchPolicy = .cachedOrFetched) async -> ClientState {
    let published = publish()
    let (identity, phase, backingOff) = core.withLock { core in
      (core.identity, core.phase, core.retry.isBackingOff(now: cache.clock.now()))
    }
    // The publish read the cache already; read again only if the user switched meanwhile.
    let current =
      published.flatMap { $0.appUserID.namesSameUser(as: identity.appUserID) ? $0 : nil }
      ?? state(of: identity)
    switch fetchPolicy {
    case .cacheOnly:
      return current
    case .cachedOrFetched:
      // After a failure the backed-off retry refreshes; a screen reading on every render must
      // not turn into a fetch a render.
      if !backingOff, isStale(current.customerInfo, in: phase) { launchRefresh(.fetchPolicy) }
      return current
    case .notStaleCachedOrFetched:
      guard isStale(current.customerInfo, in: phase) else { return current }
      await refresh(.fetchPolicy, waitingAtMost: nil)
    case .fetchCurrent(let timeout):
      await refresh(.fetchPolicy, waitingAtMost: timeout)
    }
    return state(of: self.identity)
  }

  // MARK: Streams

  /// The current identity's state: the latest at once (when the client has started), then
  /// every change, never the same state twice. Ends at ``stop()``.
  ///
  /// The buffer is unbounded so a subscriber sees every change in order; the client publishes
  /// only changes, so it stays short unless a subscriber stops reading without cancelling.
  public var updates: AsyncStream<ClientState> {
    let (stream, continuation) = AsyncStream<ClientState>.makeStream()
    let id = core.withLock { core in
      let id = core.nextSubscriberID()
      if let published = core.published { continuation.yield(published) }
      if core.stopped {
        continuation.finish()
      } else {
        core.stateSubscribers[id] = continuation
      }
      return id
    }
    continuation.onTermination = { [weak self] _ in
      self?.core.withLock { _ = $0.stateSubscribers.removeValue(forKey: id) }
    }
    return stream
  }

  /// The decision for `entitlement` and the user it is for: the current one at once, then
  /// every change, never the same decision for the same user twice: what a `useAccess`-style
  /// hook in an app's UI follows. An identity switch delivers the new user's decision even
  /// when it reads the same. Ends at ``stop()``.
  public func accessUpdates(to entitlement: String) -> AsyncStream<AccessUpdate> {
    let (stream, continuation) = AsyncStream<AccessUpdate>.makeStream()
    let id = core.withLock { core in
      let id = core.nextSubscriberID()
      if core.stopped {
        continuation.finish()
      } else {
        core.accessSubscribers[id] = AccessSubscriber(
          entitlement: entitlement, continuation: continuation)
      }
      return id
    }
    continuation.onTermination = { [weak self] _ in
      self?.core.withLock { _ = $0.accessSubscribers.removeValue(forKey: id) }
    }
    // The key is watched from now on: a publish decides it and delivers the first decision.
    publish()
    return stream
  }

  /// How each fetch ends, for diagnostics: no replay. Ends at ``stop()``.
  package var refreshReports: AsyncStream<RefreshReport> {
    let (stream, continuation) = AsyncStream<RefreshReport>.makeStream()
    let id = core.withLock { core in
      let id = core.nextSubscriberID()
      if core.stopped { continuation.finish() } else { core.reportSubscribers[id] = continuation }
      return id
    }
    continuation.onTermination = { [weak self] _ in
      self?.core.withLock { _ = $0.reportSubscribers.removeValue(forKey: id) }
    }
    return stream
  }
}
