#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension EntitlementClient {
  // MARK: Purchase flows

  /// A purchase completed: enqueues it under the current user (durably, before any network
  /// call), drains the queue, then refreshes with a fetch started after this call, and returns
  /// once both have ended.
  ///
  /// A transaction another user of this device observed first stays bound to them: it is
  /// listed in ``PurchaseSyncResult/boundToAnotherUser`` and nothing changes. Finish the
  /// store's transaction only once the result lists it in ``PurchaseSyncResult/synced``: until
  /// then the store keeps delivering it, a second safety net under the queue. A transaction
  /// delivered again after it synced is listed there too, so the app can finish it; one that
  /// expired unsent is queued again (its 30 days start over).
  ///
  /// While the cache's storage is unavailable (a device before its first unlock), the
  /// purchase is held in memory and listed in ``PurchaseSyncResult/heldInMemory``; the first
  /// drain of the queue that finds the storage open enqueues it, as the user who observed it.
  ///
  /// - Throws: ``CacheError`` when the purchase could not be enqueued (a bad ID or token, or
  ///   storage other than unavailable); nothing was posted then. On a client made without a
  ///   ``PurchasePoster``, ``CacheError/invalidConfiguration(field:problem:)`` for `poster`
  ///   before anything happens: there is no queue to keep the purchase, and dropping it
  ///   quietly would lose it. Such a client's SDK posts the purchase itself and calls
  ///   ``refreshAfterPurchase()``.
  @discardableResult
  public func purchaseCompleted(_ purchase: ObservedPurchase) async throws(CacheError)
    -> PurchaseSyncResult
  {
    guard let purchaseQueue else {
      throw .invalidConfiguration(
        field: "poster",
        problem:
          "this client was made without a PurchasePoster, so it keeps no purchase queue; "
          + "post the purchase yourself and call refreshAfterPurchase()")
    }
    let identity = self.identity
    var boundElsewhere: [String] = []
    var alreadySynced: [QueuedPurchase] = []
    let outcome: EnqueueOutcome
    do {
      outcome = try ownWrite { () throws(CacheError) in
        try purchaseQueue.enqueue(purchase, observedBy: identity.scope)
      }
    } catch .storage(_, let failure) where failure.kind == .unavailable {
      let held = core.withLock { core in
        // The store delivers an unfinished transaction again: hold it once.
        guard
          !core.heldPurchases.contains(where: {
            $0.purchase.transactionID == purchase.transactionID
          })
        else { return false }
        core.heldPurchases.append((purchase, identity))
        return true
      }
      if held {
        tell(.purchaseHeld(transactionID: purchase.transactionID), scope: identity.scope)
      }
      publish()
      return await syncedResult(.purchase, for: identity, alreadySynced: [], boundElsewhere: [])
    }
    switch outcome {
    case .queued(let entry):
      tell(PurchaseUpdate(appUserID: identity.appUserID, purchase: entry))
      publish()
    case .alreadyQueued(let entry):
      if entry.state == .synced { alreadySynced.append(entry) }
    case .boundToAnotherObserver:
      boundElsewhere.append(purchase.transactionID)
    }
    return await syncedResult(
      .purchase, for: identity, alreadySynced: alreadySynced, boundElsewhere: boundElsewhere)
  }

  /// Restores purchases: drains the queue, then a fetch in the `restore` flow started after
  /// this call (an SDK whose restore posts the store's receipt does so in its fetcher), and
  /// returns once both have ended.
  @discardableResult
  public func restorePurchases() async -> PurchaseSyncResult {
    await syncedResult(.restore, for: identity, alreadySynced: [], boundElsewhere: [])
  }

  /// Syncs purchases: as ``restorePurchases()``, in the `sync` flow.
  @discardableResult
  public func syncPurchases() async -> PurchaseSyncResult {
    await syncedResult(.sync, for: identity, alreadySynced: [], boundElsewhere: [])
  }

  /// Lets the client post, as `appUserID`, the purchases that user observed in an earlier
  /// launch, and drains the queue.
  ///
  /// The queue keeps only hashes of its observers
  /// (<doc:PurchaseQueue#Posted-as-the-observer>), so after a relaunch the client
  /// can post another user's entries only once it knows their raw app-user ID: when that user
  /// is current again, or when the SDK, which keeps its users' IDs, names them here (a user
  /// logged out on a shared device, whose purchase is still queued). Entries are posted as
  /// `appUserID`, never as the current user.
  ///
  /// - Throws: ``ScopeError`` when `appUserID` is empty; nothing changes.
  public func postQueuedPurchases(observedBy appUserID: String) throws(ScopeError) {
    let observer = try identity.switching(to: appUserID)
    core.withLock { core in
      core.knownObservers[observer.scope.key] = observer
      _ = requestDrain(&core, startedAfterThisCall: true, postingBackedOff: false)
    }
  }

  /// Every change of a queued purchase's state this client makes, for every user it posts
  /// as: no replay. Ends at ``stop()``.
  public var purchaseUpdates: AsyncStream<PurchaseUpdate> {
    let (stream, continuation) = AsyncStream<PurchaseUpdate>.makeStream()
    let id = core.withLock { core in
      let id = core.nextSubscriberID()
      if core.stopped { continuation.finish() } else { core.purchaseSubscribers[id] = continuation }
      return id
    }
    continuation.onTermination = { [weak self] _ in
      self?.core.withLock { _ = $0.purchaseSubscribers.removeValue(forKey: id) }
    }
    return stream
  }

  /// Drains the queue with a pass started after this call, refreshes in `flow`, and collects
  /// the entries of `identity`, the user current when the call began, with the state of the
  /// user current at its end.
  ///
  /// A user asked for it, so the pass posts entries still backing off, at once. What synced is
  /// what the purchase updates told while the call waited, whichever pass posted it. The result
  /// stays that user's when another logs in meanwhile: read as the user current at the end,
  /// a purchase that synced during the call was in no list, and the app never learned it may
  /// finish the store's transaction.
  private func syncedResult(
    _ flow: RefreshFlow, for identity: ClientIdentity, alreadySynced: [QueuedPurchase],
    boundElsewhere: [String]
  ) async -> PurchaseSyncResult {
    let log = PurchaseChangeLog()
    let (logID, pass) = core.withLock { core in
      let id = core.nextSubscriberID()
      core.purchaseLogs[id] = log
      let pass = requestDrain(&core, startedAfterThisCall: true, postingBackedOff: true)
      pass?.refreshFollowsIt()
      return (id, pass)
    }
    await pass?.wait()
    await refresh(flow, waitingAtMost: nil)
    core.withLock { _ = $0.purchaseLogs.removeValue(forKey: logID) }
    let synced = log.all.map(\.purchase).filter {
      $0.observer == identity.scope.key && $0.state == .synced
    }
    let held = core.withLock { core in
      core.heldPurchases.filter { $0.observer.scope == identity.scope }.map(\.purchase)
    }
    let current = self.identity
    var result = PurchaseSyncResult(
      synced: alreadySynced + synced, pending: [], conflicts: [], rejected: [], expired: [],
      boundToAnotherUser: boundElsewhere, storageError: nil,
      heldInMemory: held.map(\.transactionID),
      // What an app shows: the user current now, never the one who began the call if another
      // has logged in since.
      state: state(of: current))
    // Another user is current: what synced (and what is held) lets the app finish or keep the
    // store's transactions, which no user sees; the lists an app shows (a conflict's "log in
    // with the owning account") are the buyer's, and wait until they are current again.
    guard current.scope == identity.scope else { return result }
    do throws(CacheError) {
      for entry in try purchaseQueue?.queuedPurchases(observedBy: identity.scope) ?? [] {
        switch entry.state {
        case .pending, .posting:
          result.pending.append(entry)
        case .conflict:
          guard entry.resolution != nil else { continue }
          result.conflicts.append(entry)
        case .rejected:
          result.rejected.append(entry)
        case .expired:
          result.expired.append(entry)
        case .synced:
          break
        }
      }
    } catch {
      result.storageError = error
    }
    return result
  }
}
