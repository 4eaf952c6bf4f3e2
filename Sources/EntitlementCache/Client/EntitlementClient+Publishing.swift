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
    // The cache's own policy decides: it has one home, the cache's configuration.
    // The whole CustomerInfo first: a watched key it decides is taken from it, so a state's
    // decisions are of one instant; a key the snapshot does not mention is asked of the
    // cache, a hot read once the first has made the scope resident.
    let customerInfo = try? cache.evaluatedCustomerInfo(for: scope, policy: nil)
    var decisions: [String: AccessDecision] = [:]
    for key in keys {
      decisions[key] =
        customerInfo?.decisions[key] ?? cache.access(to: key, for: scope, policy: nil)
    }
    return ClientState(
      appUserID: identity.appUserID, customerInfo: customerInfo, decisions: decisions)
  }

  /// Re-reads the current identity's state and publishes it when it says something new, then
  /// sets the boundary timer for the next instant time alone could change it.
  ///
  /// The cache is read with no lock held: a cache of an SDK's own may take its time, or call
  /// out. Each read takes a generation number first, and only a read newer than the last one
  /// applied is published, so a slow read never overwrites a newer state, and one for a user the
  /// app has switched away from is dropped.
  ///
  /// Returns the state it read (published or not, since a newer read may have won), so a
  /// caller deciding on staleness need not read the cache again; nil before `start`.
  @discardableResult
  func publish(reschedulingWhenUnchanged: Bool = true) -> ClientState? {
    let read: (ClientIdentity, Set<String>, UInt64)? = core.withLock { core in
      guard core.started, !core.stopped else { return nil }
      core.readGeneration += 1
      return (core.identity, watchedKeys(core), core.readGeneration)
    }
    guard let (identity, keys, generation) = read else { return nil }
    let state = state(of: identity, keys: keys)
    let rollbackNewlySuspected = core.withLock { core -> Bool in
      guard !core.stopped, core.identity.scope == identity.scope,
        generation > core.appliedGeneration
      else { return false }
      core.appliedGeneration = generation
      let changed = core.published.map { !$0.saysTheSame(as: state) } ?? true
      // Told once when the clock is found set back, not at every publish while it stays so.
      let newlySuspected =
        changed && state.clockRollbackSuspected
        && !(core.published.map {
          $0.appUserID.namesSameUser(as: state.appUserID) && $0.clockRollbackSuspected
        } ?? false)
      defer {
        if changed || reschedulingWhenUnchanged || core.boundaryTimer == nil {
          scheduleBoundary(&core, after: state.customerInfo?.timeToNextBoundary)
        }
      }
      if changed {
        core.published = state
        for continuation in core.stateSubscribers.values { continuation.yield(state) }
      }
      for id in core.accessSubscribers.keys {
        guard let key = core.accessSubscribers[id]?.entitlement,
          let decision = state.decisions[key]
        else { continue }
        core.accessSubscribers[id]?.deliver(
          AccessUpdate(appUserID: state.appUserID, decision: decision))
      }
      return newlySuspected
    }
    if rollbackNewlySuspected { tell(.clockRollbackSuspected, scope: identity.scope) }
    return state
  }

  /// Republishes at the next boundary, a wait on the runtime (``Duration/boundaryDelay(_:)``).
  func scheduleBoundary(_ core: inout ClientCore, after wait: TimeInterval?) {
    core.boundaryTimer?.cancel()
    core.boundaryTimer = nil
    guard let wait else { return }
    let delay = Duration.boundaryDelay(wait)
    core.boundaryTimer = spawn(&core) { [weak self, runtime] in
      do { try await runtime.sleep(for: delay) } catch { return }
      guard let self else { return }
      self.core.withLock { $0.boundaryTimer = nil }
      self.publish()
    }
  }

  /// Publishes after every write through the cache's instance that the client did not make
  /// itself (an SDK storing a snapshot directly, another client on the same instance), on the
  /// writing thread, as soon as the write ends; a cache without the signal is found at the next
  /// cross-process check.
  func observeCacheWrites() {
    guard let signaling = cache as? any CustomerInfoChangeSignaling else { return }
    let observation = signaling.observeWrites { [weak self] in
      // The client's own writes (its failed attempts to queue a held purchase among them)
      // are left to the flow that made them, so none of them starts another pass.
      guard let self, self.ownWrites.withLock({ $0 }) == 0 else { return }
      // Storage that opened is when purchases held in memory can be queued.
      self.drainHeldPurchasesIfDue()
      self.publish(reschedulingWhenUnchanged: false)
    }
    writeObservation.withLock { $0 = observation }
  }

  /// Runs one of the client's own cache writes (see ``ownWrites``).
  func ownWrite<Value, Failure: Error>(
    _ body: () throws(Failure) -> Value
  ) throws(Failure) -> Value {
    ownWrites.withLock { $0 += 1 }
    defer { ownWrites.withLock { $0 -= 1 } }
    return try body()
  }

  /// While in the foreground, looks every check interval for a write by another process
  /// sharing the cache, and republishes when there is one. A cache that signals its changes
  /// (``CustomerInfoChangeSignaling``) is read only when its mark moved, so an idle client
  /// reads and parses nothing; any other cache is read at every check, and a check that finds
  /// nothing new publishes nothing.
  func startCrossProcessChecks(_ core: inout ClientCore) {
    guard let interval = configuration.changeCheckInterval, core.crossProcessCheck == nil
    else { return }
    let signaling = cache as? any CustomerInfoChangeSignaling
    core.crossProcessCheck = spawn(&core) { [weak self, runtime] in
      // Taken before the first wait: a write after this moves it, so the first check sees it.
      var seen = signaling?.changeMark()
      while true {
        do { try await runtime.sleep(for: interval) } catch { return }
        guard let client = self else { return }
        if let signaling {
          // Taken before the read: a write during the read moves the mark again, and the next
          // check reads once more.
          let mark = signaling.changeMark()
          if let mark, mark == seen { continue }
          seen = mark
        }
        client.publish(reschedulingWhenUnchanged: false)
      }
    }
  }

  /// Starts `body` as a task of the client's on the runtime's executor, tracked so `stop()`
  /// and `deinit` can cancel it. A stopped client starts nothing. The task holds the client
  /// only as `body` does: timers capture it weakly, so a dropped client is freed.
  ///
  /// Before task executors (iOS 18, macOS 15) the task runs on the global concurrent
  /// executor; only a simulated runtime names another, and it needs them.
  @discardableResult
  func spawn(
    _ core: inout ClientCore, _ body: @escaping @Sendable () async -> Void
  ) -> ClientTask? {
    guard !core.stopped else { return nil }
    let id = core.nextSubscriberID()
    let operation: @Sendable () async -> Void = { [weak self] in
      await body()
      _ = self?.core.withLock { $0.tasks.removeValue(forKey: id) }
    }
    let task: Task<Void, Never>
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
      task = Task(executorPreference: runtime.taskExecutor, operation: operation)
    } else {
      task = Task(operation: operation)
    }
    core.tasks[id] = task
    return ClientTask(id: id, task: task)
  }

  /// Whether a snapshot read as `info` is due for a refresh in `phase`: nothing cached, the
  /// last refresh failed, or older than `staleAfter` (foreground) or the background staleness.
  func isStale(_ info: EvaluatedCustomerInfo?, in phase: AppPhase) -> Bool {
    guard let info else { return true }
    switch (info.freshness, phase) {
    case (.offline, _): return true
    case (.fresh, .foreground): return false
    case (.stale, .foreground): return true
    case (_, .background):
      let clock = ClockReading(
        now: cache.clock.now(), boot: cache.clock.bootInstant(),
        bookkeeping: info.bookkeeping, tolerance: .infinity)
      return clock.elapsed >= configuration.backgroundStaleAfter.seconds
    }
  }

  /// Makes `next` the current identity and stops the previous one's retries. The caller
  /// publishes once the lock is released.
  func switchIdentity(_ core: inout ClientCore, to next: ClientIdentity) {
    core.identity = next
    core.knownObservers[next.scope.key] = next
    core.epoch += 1
    core.retry.reset()
  }

  /// Tells the report streams and, for a refresh that stored nothing, the diagnostics, unless
  /// `diagnosing` is false.
  func report(_ report: RefreshReport, diagnosing: Bool = true) {
    core.withLock { core in
      for continuation in core.reportSubscribers.values { continuation.yield(report) }
    }
    switch report.outcome {
    case .failed, .timedOut, .invalidResponse, .verificationFailed, .storageFailed:
      if diagnosing {
        tell(.refreshFailed(flow: report.flow, reason: report.outcome), scope: report.scope)
      }
    case .stored, .lateStored, .discardedOlder, .discardedLoggedOut:
      break
    }
  }

  /// Hands `event` to ``ClientConfiguration/onDiagnostic``. Called with no lock of the
  /// client's held.
  func tell(_ event: DiagnosticEvent, scope: CacheScope?) {
    guard let handler = configuration.onDiagnostic else { return }
    handler(Diagnostic(event, scope: scope, date: cache.clock.now()))
  }
}
