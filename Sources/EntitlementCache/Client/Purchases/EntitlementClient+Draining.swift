#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Draining the purchase queue: posting each unsent entry through the SDK's ``PurchasePoster``,
/// one pass at a time, with its retries and deadlines.
extension EntitlementClient {
  /// The pass a drain request joins: the one running, or when the caller needs entries it
  /// just enqueued posted (or a pass that started after it, or one that posts backed-off
  /// entries when the running one does not), the one queued behind it. Nil when the client
  /// posts no purchases, or has not started or has stopped.
  ///
  /// - Parameter postingBackedOff: Someone asked (a restore, a sync, a purchase, the network
  ///   back): post entries still backing off too, at once.
  @discardableResult
  func requestDrain(
    _ core: inout ClientCore, startedAfterThisCall: Bool, postingBackedOff: Bool
  ) -> DrainPass? {
    guard purchaseQueue != nil, poster != nil, core.started, !core.stopped else { return nil }
    if let current = core.drain.current, !startedAfterThisCall,
      current.postsBackedOff || !postingBackedOff
    {
      return current
    }
    if let queued = core.drain.queued {
      if postingBackedOff { queued.postBackedOff() }
      return queued
    }
    let pass = DrainPass()
    if postingBackedOff { pass.postBackedOff() }
    if core.drain.current == nil {
      core.drain.current = pass
      runDrain(pass, &core)
    } else {
      core.drain.queued = pass
    }
    return pass
  }

  private func runDrain(_ pass: DrainPass, _ core: inout ClientCore) {
    core.purchaseRetry?.cancel()
    core.purchaseRetry = nil
    let spawned = spawn(&core) { [self] in
      let wakeUp = await drain(pass)
      endDrain(pass, wakeUp: wakeUp)
    }
    if spawned == nil { pass.finish() }
  }

  /// Enqueues the purchases held while the storage was unavailable, each as its observer, in
  /// the order observed, and tells each one's state. Stops at the first the storage still
  /// refuses, whatever the failure (unavailable, full, busy, closed, a newer build's file):
  /// it stays held, and a later attempt is made no sooner than the retry interval. Only a
  /// purchase the queue refuses for itself is dropped, which cannot happen here, since its ID
  /// and token were checked before the storage was.
  private func enqueueHeldPurchases(into queue: any PurchaseQueueStore) {
    while let next = core.withLock({ $0.heldPurchases.first }) {
      let outcome: EnqueueOutcome?
      do {
        outcome = try ownWrite { () throws(CacheError) in
          try queue.enqueue(next.purchase, observedBy: next.observer.scope)
        }
      } catch .invalidPurchase {
        outcome = nil
      } catch .storage(_, let failure) where failure.kind == .unavailable {
        // Still locked: the file opening is a write signal, which starts the next attempt.
        return
      } catch {
        // A full disk, a lock held elsewhere: such failures are write signals too, which
        // would start the next attempt at once, so the next waits out the interval.
        let retryAt = cache.clock.now().addingTimeInterval(Self.heldPurchaseRetryInterval)
        core.withLock { $0.heldPurchasesRetryAt = retryAt }
        return
      }
      core.withLock { core in
        core.heldPurchases.removeFirst()
        core.heldPurchasesRetryAt = nil
        core.knownObservers[next.observer.scope.key] = next.observer
      }
      switch outcome {
      case .queued(let entry)?, .alreadyQueued(let entry)?:
        tell(PurchaseUpdate(appUserID: next.observer.appUserID, purchase: entry))
      case .boundToAnotherObserver?, nil:
        break
      }
    }
  }

  /// How long after an attempt to queue a held purchase failed for a reason other than the
  /// storage being unavailable (a full disk, a lock held elsewhere) another write signal may
  /// start the next. Without it, two clients on one cache instance would wake each other with
  /// their failed attempts, which signal as writes do.
  static let heldPurchaseRetryInterval: TimeInterval = 2

  /// Starts a drain for the purchases held in memory, unless there are none or the last
  /// attempt failed less than the retry interval ago (a clock set back allows it): then at the
  /// interval's end, in the foreground. Called with
  /// no lock held: after a foreign write signal (the storage opening), and after a refresh's
  /// own write, which may be the one that opened it.
  func drainHeldPurchasesIfDue() {
    let now = cache.clock.now()
    core.withLock { core in
      guard !core.heldPurchases.isEmpty else { return }
      if let retryAt = core.heldPurchasesRetryAt,
        now < retryAt, now >= retryAt.addingTimeInterval(-Self.heldPurchaseRetryInterval)
      {
        // The signal may be the storage opening: try when the interval is over, unless a
        // wake-up is armed already.
        if core.purchaseRetry == nil { scheduleDrainWakeUp(&core, at: retryAt) }
        return
      }
      _ = requestDrain(&core, startedAfterThisCall: true, postingBackedOff: false)
    }
  }

  /// Ends `pass`: starts the one queued behind it or, with none, arms the wake-up for the
  /// earliest backed-off entry, in the same step that clears the running pass, so the wake-up
  /// cannot fire into the pass that is ending and be spent on it. Then republishes, since the
  /// current user's pending purchases may have changed what a denial says.
  private func endDrain(_ pass: DrainPass, wakeUp: Date?) {
    let refreshes = core.withLock { core -> Bool in
      guard core.drain.current === pass else { return false }
      core.drain.current = core.drain.queued
      core.drain.queued = nil
      if let next = core.drain.current {
        runDrain(next, &core)
      } else if let wakeUp {
        scheduleDrainWakeUp(&core, at: wakeUp)
      }
      return !core.stopped && pass.leavesUnrefreshed(core.identity.scope.key)
    }
    pass.finish()
    // The current user's purchase synced with no CustomerInfo, and nothing will refresh after
    // it: a fetch that started after it does, or the state says "buy" until the next refresh.
    if refreshes { launchRefresh(.purchase) }
    publish()
  }

  /// Posts every known observer's unsent entries, the current user's first, each observer's in
  /// observation order. A transient failure ends that observer's turn (the entries after it
  /// wait for it, in order). Returns the earliest backed-off entry's due time, for the wake-up.
  private func drain(_ pass: DrainPass) async -> Date? {
    guard let purchaseQueue else { return nil }
    enqueueHeldPurchases(into: purchaseQueue)
    let observers: [ClientIdentity] = core.withLock { core in
      let current = core.identity
      return [current]
        + core.knownObservers.values.filter { $0.scope != current.scope }
        .sorted { $0.appUserID < $1.appUserID }
    }
    var wakeUp: Date?
    for observer in observers {
      guard let entries = try? purchaseQueue.unsentPurchases(observedBy: observer.scope) else {
        continue
      }
      for entry in entries {
        guard !core.withLock({ $0.stopped }) else { return nil }
        if !pass.postsBackedOff, let due = notYetDue(entry) {
          wakeUp = min(wakeUp ?? due, due)
          break
        }
        switch await post(entry, as: observer, queue: purchaseQueue, in: pass) {
        case .next: continue
        case .stopObserver(let retryAt):
          if let retryAt { wakeUp = min(wakeUp ?? retryAt, retryAt) }
        case .stopped: return nil
        }
        break
      }
    }
    return wakeUp
  }

  /// When a pending entry backed off may be posted again, if that is still ahead. A due time
  /// further ahead than the longest backoff can put it was set by a clock since set back, and
  /// is due now: a wrong clock must not hold a purchase back. "Ahead" is what the wake-up
  /// timer can wait for: a wait that rounds to nothing is due now, or the timer would fire at
  /// once and find it not due, forever.
  private func notYetDue(_ entry: QueuedPurchase) -> Date? {
    guard entry.state == .pending, let due = entry.nextAttemptAt else { return nil }
    let wait = due.timeIntervalSince(cache.clock.now())
    let longest = configuration.purchaseRetryMaxDelay.seconds * 1.25
    guard Duration.ceilingMilliseconds(wait) > .zero, wait <= longest else { return nil }
    return due
  }

  private enum PostStep {
    /// The entry reached a final state (or was finished elsewhere): post the next one.
    case next
    /// A transient failure or a storage error: the observer's later entries wait.
    case stopObserver(retryAt: Date?)
    /// The client stopped: everything it was doing is dropped, as in a killed process.
    case stopped
  }

  /// Posts one entry as `observer`: `posting` (and the attempt) written first, then the
  /// post, then its result written.
  private func post(
    _ entry: QueuedPurchase, as observer: ClientIdentity, queue: any PurchaseQueueStore,
    in pass: DrainPass
  ) async -> PostStep {
    let scope = observer.scope
    let started: QueuedPurchase
    do throws(CacheError) {
      let marking = { () throws(CacheError) in
        try queue.updatePurchase(entry.transactionID, observedBy: scope, to: .posting)
      }
      guard let marked = try ownWrite(marking) else { return .next }
      started = marked
    } catch {
      return .stopObserver(retryAt: nil)
    }
    tell(PurchaseUpdate(appUserID: observer.appUserID, purchase: started))
    guard started.state == .posting else { return .next }
    let request = PurchasePostRequest(
      scope: scope, appUserID: observer.appUserID, transactionID: started.transactionID,
      productID: started.productID, token: started.token, attempt: started.attempts,
      nonce: runtime.randomBytes(16))
    let answer = await postWithDeadline(request)
    guard !core.withLock({ $0.stopped }) else { return .stopped }
    let change: PurchaseStateChange
    var retryDelay: Duration?
    switch answer {
    case .success(.synced(let body)):
      if let body {
        storePosted(body, for: observer, requestNonce: request.nonce)
      } else {
        pass.noteSyncedWithoutAnswer(scope.key)
      }
      change = .synced
    case .success(.conflict(let resolution)):
      change = .conflict(resolution)
    case .failure(.rejected(let status)):
      change = .rejected(status: status)
    case .failure(let failure):
      let delay = purchaseRetryDelay(afterAttempt: started.attempts)
      retryDelay = delay
      // To the millisecond, as the file keeps it, so both caches hold the same instant.
      let at = Date(
        unixMilliseconds: cache.clock.now().addingTimeInterval(delay.seconds).unixMilliseconds)
      change = .retry(failure, at: at)
    }
    let updated: QueuedPurchase?
    do throws(CacheError) {
      updated = try ownWrite { () throws(CacheError) in
        try queue.updatePurchase(started.transactionID, observedBy: scope, to: change)
      }
    } catch {
      return .stopObserver(retryAt: nil)
    }
    if let updated {
      tell(PurchaseUpdate(appUserID: observer.appUserID, purchase: updated))
      switch change {
      case .conflict(let resolution) where updated.state == .conflict:
        tell(
          .purchaseConflict(transactionID: updated.transactionID, resolution: resolution),
          scope: scope)
      case .retry where updated.state == .pending:
        if let retryDelay {
          tell(
            .retryScheduled(.purchasePost(transactionID: updated.transactionID), after: retryDelay),
            scope: scope)
        }
      default:
        break
      }
      if updated.state == .pending {
        return .stopObserver(retryAt: updated.nextAttemptAt)
      }
    }
    return .next
  }

  /// The post, raced against ``ClientConfiguration/fetchTimeout``: a poster that never answers
  /// must not hold the queue, which every restore and sync waits for. A late answer is
  /// dropped; the entry is posted again, and the server de-duplicates.
  private func postWithDeadline(
    _ request: PurchasePostRequest
  ) async -> Result<PurchasePostResult, FetchFailure> {
    guard let poster else { return .failure(.transient(status: nil)) }
    let first = FirstEvent<Result<PurchasePostResult, FetchFailure>>()
    let tasks = core.withLock { core -> (post: ClientTask?, deadline: ClientTask?) in
      let post = spawn(&core) {
        do throws(FetchFailure) {
          first.offer(.success(try await poster.post(request)))
        } catch {
          first.offer(.failure(error))
        }
      }
      let deadline = configuration.fetchTimeout.flatMap { limit in
        spawn(&core) { [runtime] in
          do { try await runtime.sleep(for: limit) } catch { return }
          first.offer(.failure(.transient(status: nil)))
        }
      }
      return (post, deadline)
    }
    if tasks.post == nil { return .failure(.transient(status: nil)) }
    let answer = await withTaskCancellationHandler {
      await withCheckedContinuation { first.install($0) }
    } onCancel: {
      first.offer(.failure(.transient(status: nil)))
    }
    tasks.deadline?.cancel()
    // A post that lost to its deadline is abandoned: the entry is posted again after its
    // backoff, and a late answer to this one would only race that post.
    tasks.post?.cancel()
    return answer
  }

  /// The backoff before the next post of an entry whose `attempt`-th post failed: the initial
  /// delay doubling per attempt up to the maximum, scaled by a random factor in 0.75..<1.25 and
  /// still capped, so devices that failed together do not post together.
  func purchaseRetryDelay(afterAttempt attempt: Int) -> Duration {
    let initial = configuration.purchaseRetryInitialDelay.seconds
    let maximum = configuration.purchaseRetryMaxDelay.seconds
    let doublings = min(max(attempt - 1, 0), 40)
    let base = min(initial * Double(UInt64(1) << UInt64(doublings)), maximum)
    return .ceilingMilliseconds(min(base * (0.75 + 0.5 * runtime.randomFraction()), maximum))
  }

  /// Stores the CustomerInfo a post answered under the observer's scope, by the rules every
  /// answer keeps (never backwards), and only while the observer is the current user: a
  /// logged-out user's snapshot is not brought back by their queued purchase. A body that does
  /// not parse or verify is recorded as a failed refresh, as a fetched one is, and so is
  /// retried as one: otherwise a drain no refresh follows (a wake-up, `networkAvailable()`)
  /// would leave the scope `offline` until some other flow refreshed.
  private func storePosted(
    _ body: FetchedCustomerInfo, for observer: ClientIdentity, requestNonce: [UInt8]
  ) {
    let retryDelay: Duration? = writes.withLock { _ in
      let current = core.withLock { $0.identity.scope == observer.scope }
      guard current else { return nil }
      let outcome = ownWrite {
        storeAnswer(body, for: observer.scope, requestNonce: requestNonce)
      }
      guard outcome == .invalidResponse || outcome == .verificationFailed else { return nil }
      return core.withLock { core in
        core.identity.scope == observer.scope ? scheduleRetry(&core, after: outcome) : nil
      }
    }
    if let retryDelay {
      tell(.retryScheduled(.refresh, after: retryDelay), scope: observer.scope)
    }
  }

  /// After a transient failure, a drain at the earliest entry's due time, in the foreground.
  /// Called holding the core lock, with no pass running.
  private func scheduleDrainWakeUp(_ core: inout ClientCore, at due: Date) {
    guard core.phase == .foreground, !core.stopped else { return }
    let delay = Duration.ceilingMilliseconds(due.timeIntervalSince(cache.clock.now()))
    core.purchaseRetry?.cancel()
    core.purchaseRetry = spawn(&core) { [weak self, runtime] in
      do { try await runtime.sleep(for: delay) } catch { return }
      guard let self else { return }
      self.core.withLock { core in
        guard core.phase == .foreground else { return }
        core.purchaseRetry = nil
        // A pass that started after this wake-up was armed: the one that armed it has ended.
        self.requestDrain(&core, startedAfterThisCall: true, postingBackedOff: false)
      }
    }
  }

  /// Tells the purchase streams and the logs of the calls waiting for a sync result.
  func tell(_ update: PurchaseUpdate) {
    core.withLock { core in
      for continuation in core.purchaseSubscribers.values { continuation.yield(update) }
      for log in core.purchaseLogs.values { log.append(update) }
    }
  }
}
