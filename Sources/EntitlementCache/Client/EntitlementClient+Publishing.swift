#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension EntitlementClient {
  /// The keys every published state decides: the configured ones and those of live
  /// `accessUpdates(to:)` streams.
  func watchedKeys(_ core: ClientCore) -> Set<String> {
    var keys = configuration.watchedEntitlements
    for subscriber in core.accessSubscribers.values { keys.insert(subscriber.entitlement) }
    return keys
  }

  /// `identity`'s state now, read from the cache. An unreadable snapshot reads as none: the
  /// decisions then fail closed on their own.
  func state(of identity: ClientIdentity, keys: Set<String>? = nil) -> ClientState {
    let keys = keys ?? core.withLock { watchedKeys($0) }
    let scope = identity.scope
    let policy = configuration.policy
    var decisions: [String: AccessDecision] = [:]
    for key in keys { decisions[key] = cache.access(to: key, for: scope, policy: policy) }
    return ClientState(
      appUserID: identity.appUserID,
      customerInfo: try? cache.evaluatedCustomerInfo(for: scope, policy: policy),
      decisions: decisions)
  }

  /// Re-reads the current identity's state and publishes it when it says something new, then
  /// sets the boundary timer for the next instant time alone could change it.
  ///
  /// Called under the lock, so two publishes never cross: a stream sees states in the order
  /// they were read.
  func publish(_ core: inout ClientCore, reschedulingWhenUnchanged: Bool = true) {
    guard core.started, !core.stopped else { return }
    let state = state(of: core.identity, keys: watchedKeys(core))
    let changed = core.published.map { !$0.saysTheSame(as: state) } ?? true
    if changed {
      core.published = state
      for continuation in core.stateSubscribers.values { continuation.yield(state) }
    }
    let scope = core.identity.scope
    for id in core.accessSubscribers.keys {
      guard let key = core.accessSubscribers[id]?.entitlement else { continue }
      let decision =
        state.decisions[key] ?? cache.access(to: key, for: scope, policy: configuration.policy)
      core.accessSubscribers[id]?.deliver(decision)
    }
    if changed || reschedulingWhenUnchanged || core.boundaryTimer == nil {
      scheduleBoundary(&core, after: state.customerInfo?.timeToNextBoundary)
    }
  }

  /// Republishes at the next boundary (DESIGN §10 item 3), on the runtime's clock: the wait is
  /// rounded up to the millisecond so the timer never fires before the boundary it is for.
  func scheduleBoundary(_ core: inout ClientCore, after wait: TimeInterval?) {
    core.boundaryTimer?.cancel()
    core.boundaryTimer = nil
    guard let wait else { return }
    let delay = Duration.ceilingMilliseconds(wait)
    core.boundaryTimer = spawn(&core) { client in
      do { try await client.runtime.sleep(for: delay) } catch { return }
      client.core.withLock { core in
        core.boundaryTimer = nil
        client.publish(&core)
      }
    }
  }

  /// While in the foreground, republishes every check interval, which shows a write by
  /// another process sharing the cache (DESIGN §10 item 10). A check that finds nothing new
  /// publishes nothing.
  func startCrossProcessChecks(_ core: inout ClientCore) {
    guard let interval = configuration.crossProcessCheckInterval, core.crossProcessCheck == nil
    else { return }
    core.crossProcessCheck = spawn(&core) { client in
      while true {
        do { try await client.runtime.sleep(for: interval) } catch { return }
        client.core.withLock { client.publish(&$0, reschedulingWhenUnchanged: false) }
      }
    }
  }

  /// Starts `body` as a task of the client's on the runtime's executor, tracked so `stop()`
  /// can cancel it. A stopped client starts nothing.
  @discardableResult
  func spawn(
    _ core: inout ClientCore, _ body: @escaping @Sendable (EntitlementClient) async -> Void
  ) -> ClientTask? {
    guard !core.stopped else { return nil }
    let id = core.nextSubscriberID()
    let task = Task(executorPreference: runtime.taskExecutor) { [self] in
      await body(self)
      _ = self.core.withLock { $0.tasks.removeValue(forKey: id) }
    }
    core.tasks[id] = task
    return ClientTask(id: id, task: task)
  }

  /// Whether `identity`'s snapshot is due for a refresh in `phase`: nothing cached, the last
  /// refresh failed, or older than `staleAfter` (foreground) or the background staleness.
  func isStale(_ identity: ClientIdentity, in phase: AppPhase) -> Bool {
    guard
      let info = try? cache.evaluatedCustomerInfo(for: identity.scope, policy: configuration.policy)
    else { return true }
    switch (info.freshness, phase) {
    case (.offline, _): return true
    case (.fresh, .foreground): return false
    case (.stale, .foreground): return true
    case (_, .background):
      let clock = ClockReading(
        now: runtime.clock.now(), boot: runtime.clock.bootInstant(),
        bookkeeping: info.bookkeeping, tolerance: .infinity)
      return clock.elapsed >= configuration.backgroundStaleAfter.seconds
    }
  }

  /// Makes `next` the current identity: its cached state is published at once, retries for
  /// the previous one stop.
  func switchIdentity(_ core: inout ClientCore, to next: ClientIdentity) {
    core.identity = next
    core.epoch += 1
    core.retry.reset()
    publish(&core)
  }

  /// Tells the report streams.
  func report(_ report: RefreshReport) {
    core.withLock { core in
      for continuation in core.reportSubscribers.values { continuation.yield(report) }
    }
  }
}
