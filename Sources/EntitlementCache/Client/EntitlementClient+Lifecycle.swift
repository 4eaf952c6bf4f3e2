#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The app's lifecycle as the client hears it: launch, foreground and background, the network,
/// refreshes on demand, log-in and log-out, and stopping.
extension EntitlementClient {
  /// Publishes the cached state before any network call, then refreshes (the configure flow).
  /// Launched in the background, it refreshes only when the snapshot is older than
  /// ``ClientConfiguration/backgroundStaleAfter``, after the background delay. Calling it
  /// again does nothing.
  public func start(in phase: AppPhase = .foreground) {
    let starting = core.withLock { core in
      guard !core.started, !core.stopped else { return false }
      core.started = true
      core.phase = phase
      if phase == .foreground { startCrossProcessChecks(&core) }
      return true
    }
    guard starting else { return }
    observeCacheWrites()
    let published = publish()
    core.withLock { _ = requestDrain(&$0, startedAfterThisCall: false, postingBackedOff: false) }
    if phase == .foreground || isStale(published?.customerInfo, in: .background) {
      launchRefresh(.start)
    }
  }

  /// The app came to the foreground: republishes, looks for other processes' writes again,
  /// and refreshes when the snapshot is stale (not on every activation).
  ///
  /// A move, not a state: it does nothing while the client is already in the foreground
  /// (``start(in:)`` starts there unless told otherwise), so call it for each return from
  /// ``didEnterBackground()``. To refresh a stale snapshot at any other moment, ask
  /// ``state(fetchPolicy:)`` with ``FetchPolicy/notStaleCachedOrFetched``.
  public func didEnterForeground() {
    let entering = core.withLock { core in
      guard core.started, !core.stopped, core.phase != .foreground else { return false }
      core.phase = .foreground
      startCrossProcessChecks(&core)
      return true
    }
    guard entering, let published = publish() else { return }
    core.withLock { _ = requestDrain(&$0, startedAfterThisCall: false, postingBackedOff: false) }
    if isStale(published.customerInfo, in: .foreground) { launchRefresh(.foreground) }
  }

  /// The app went to the background: retries and the cross-process checks stop.
  public func didEnterBackground() {
    core.withLock { core in
      guard core.started, !core.stopped else { return }
      core.phase = .background
      core.crossProcessCheck?.cancel()
      core.crossProcessCheck = nil
      core.retry.cancel()
      core.purchaseRetry?.cancel()
      core.purchaseRetry = nil
    }
  }

  /// The network came back: posts the queued purchases, backed-off ones too, and refreshes
  /// when access is being served offline (the last refresh failed, or nothing is cached), at
  /// once rather than at the next backed-off retry.
  public func networkAvailable() {
    let identity: ClientIdentity? = core.withLock { core in
      guard core.started, !core.stopped else { return nil }
      return core.identity
    }
    guard let identity else { return }
    // The network is back: what backed off while it was gone is due now.
    core.withLock { _ = requestDrain(&$0, startedAfterThisCall: false, postingBackedOff: true) }
    let info = try? cache.evaluatedCustomerInfo(for: identity.scope, policy: nil)
    guard info == nil || info?.freshness == .offline else { return }
    core.withLock { $0.retry.cancel() }
    launchRefresh(.networkAvailable)
  }

  /// Refreshes now (the explicit flow), sharing a fetch already in flight.
  @discardableResult
  public func refresh() async -> ClientState {
    await refreshed(.explicit)
  }

  /// Refreshes after a purchase the SDK posts itself (the purchase flow): with a fetch that
  /// starts after this call, never one already in flight, and returns once that refresh has
  /// ended. With a ``PurchasePoster``, call ``purchaseCompleted(_:)`` instead, which enqueues
  /// and posts the purchase first.
  @discardableResult
  public func refreshAfterPurchase() async -> ClientState {
    await refreshed(.purchase)
  }

  /// Switches to `appUserID`: publishes that user's cached state at once, starts the refresh
  /// that follows and a pass over the purchase queue (which posts the due entries of every user
  /// this process knows, this user's first: after a relaunch, theirs waited for them), and
  /// returns after the refresh. Fetches in flight for the previous user still land under that user and never
  /// reach this one's stream. Logging in as the current user does nothing; the
  /// same user is the same UTF-8 bytes, as the cache's scopes are, so an ID that differs only in
  /// Unicode form (a composed `é` against `e` and a combining accent) is another user.
  ///
  /// - Throws: ``ScopeError`` when `appUserID` is empty; nothing changes.
  @discardableResult
  public func logIn(_ appUserID: String) async throws(ScopeError) -> ClientState {
    let next = try identity.switching(to: appUserID)
    // The switch and the fetch it needs are one step under the lock, so another switch cannot
    // come between them and send this user's refresh for someone else.
    let flight: Flight?? = core.withLock { core in
      guard !core.identity.appUserID.namesSameUser(as: appUserID) else { return .none }
      switchIdentity(&core, to: next)
      // Purchases this user observed in an earlier launch wait for them to be current again,
      // and nothing in this launch scheduled them: a pass that starts now posts those due.
      requestDrain(&core, startedAfterThisCall: true, postingBackedOff: false)
      return .some(joinOrStartFlight(&core, flow: .identityChange))
    }
    if let flight {
      publish()
      await wait(for: flight, in: .identityChange, atMost: nil)
    }
    return state(of: self.identity)
  }

  /// Switches to a new anonymous app-user ID (`anonymousID`, or `$anonymous:` and 32 random
  /// hex digits) and, when ``ClientConfiguration/removesSnapshotOnLogOut`` (the default),
  /// removes the previous user's snapshot. A fetch still in flight for that user is then
  /// dropped rather than stored. Returns after the refresh that follows.
  ///
  /// - Throws: ``CacheError`` when the previous snapshot could not be removed. The identity has
  ///   not switched then: the previous user is still current, their snapshot still stored, and
  ///   no refresh was started.
  @discardableResult
  public func logOut(to anonymousID: String? = nil) async throws(CacheError) -> ClientState {
    let userID =
      anonymousID.flatMap { $0.isEmpty ? nil : $0 }
      ?? "$anonymous:" + runtime.randomBytes(16).map { hexDigits($0) }.joined()
    let current = identity
    let next: ClientIdentity
    do {
      next = try current.switching(to: userID)
    } catch {
      // The random ID is never empty, and an empty one passed in was replaced above.
      return state(of: current)
    }
    let flight = try writes.withLock { _ throws(CacheError) in try switchForLogOut(to: next) }
    publish()
    await wait(for: flight, in: .identityChange, atMost: nil)
    return state(of: self.identity)
  }

  /// Stops the client: every fetch, timer and retry is cancelled (an answer arriving after is
  /// dropped, as when the process is killed) and every stream ends. A stopped client stays
  /// stopped; start a new one on the same cache.
  public func stop() {
    writeObservation.withLock { observation in
      observation?.cancel()
      observation = nil
    }
    let (tasks, flights, passes, subscribers) = core.withLock { core in
      core.stopped = true
      let tasks = Array(core.tasks.values)
      core.tasks = [:]
      core.crossProcessCheck = nil
      core.boundaryTimer = nil
      core.retry.cancel()
      core.purchaseRetry = nil
      let flights = core.flights.values.flatMap { [$0.current, $0.queued].compactMap { $0 } }
      core.flights = [:]
      let passes = [core.drain.current, core.drain.queued].compactMap { $0 }
      core.drain = DrainPasses()
      let subscribers = core.takeSubscribers()
      return (tasks, flights, passes, subscribers)
    }
    for task in tasks { task.cancel() }
    for flight in flights { flight.finish(nil) }
    for pass in passes { pass.finish() }
    subscribers()
  }

  /// `logOut`'s switch, the removal and the fetch it needs; called holding the write lock, so
  /// no answer for the previous user is written between its removal and its check.
  private func switchForLogOut(to next: ClientIdentity) throws(CacheError) -> Flight? {
    // The removal first: when it fails, nothing has switched. No answer for the previous user
    // can land between it and the switch, which both happen holding the write lock.
    var removed: ClientIdentity?
    if configuration.removesSnapshotOnLogOut {
      let previous = identity
      try ownWrite { () throws(CacheError) in try cache.remove(previous.scope) }
      removed = previous
    }
    return core.withLock { core in
      switchIdentity(&core, to: next)
      if let removed { core.removedScopes[removed.scope.key] = core.epoch }
      return joinOrStartFlight(&core, flow: .identityChange)
    }
  }

  /// Refreshes in `flow` and answers the state of the identity current when it ends.
  private func refreshed(_ flow: RefreshFlow) async -> ClientState {
    await refresh(flow, waitingAtMost: nil)
    return state(of: identity)
  }
}

private func hexDigits(_ byte: UInt8) -> String {
  let digits = Array("0123456789abcdef")
  return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]])
}
