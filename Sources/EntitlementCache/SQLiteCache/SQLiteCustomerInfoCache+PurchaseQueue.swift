#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension SQLiteCustomerInfoCache: PurchaseQueueStore {
  /// Enqueues `purchase` as observed by `scope`, in one transaction that has committed when
  /// this returns; a transaction already queued, under any scope, is left as it is.
  ///
  /// The next read of `scope` says ``AccessEvidence/pendingPurchase``.
  ///
  /// - Throws: ``CacheError/invalidPurchase(field:problem:)`` before anything is written;
  ///   ``CacheError/storage(_:_:)``, after which nothing was written.
  public func enqueue(
    _ purchase: ObservedPurchase, observedBy scope: CacheScope
  ) throws(CacheError) -> EnqueueOutcome {
    try purchase.validate()
    let now = clock.now().truncatedToMilliseconds
    var outcome = EnqueueOutcome.boundToAnotherObserver
    try write(.enqueuePurchase, scope: scope) { store, _ throws(SQLiteError) in
      if let existing = try store.purchase(purchase.transactionID) {
        guard existing.observer == scope.key else { return { _ in } }
        guard let reopened = existing.reobserved(as: purchase, at: now) else {
          outcome = .alreadyQueued(existing)
          return { _ in }
        }
        try store.reopenPurchase(reopened, at: now)
        outcome = .queued(reopened)
        return { path in path.residents.markForReread(scope.key) }
      }
      try store.insertPurchase(purchase, observedBy: scope, at: now)
      outcome = .queued(QueuedPurchase(purchase, observedBy: scope, at: now))
      return { path in path.residents.markForReread(scope.key) }
    }
    return outcome
  }

  /// Every entry `scope` observed, in observation order. Entries another tool left out of the
  /// schema's range are skipped.
  public func queuedPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase] {
    try readQueue(.readPurchases) { store throws(SQLiteError) in
      try store.purchases(observedBy: scope, unsentOnly: false)
    }
  }

  /// The entries `scope` observed that are still to post, in observation order, read from the
  /// partial index that holds only those: a drain costs the backlog, not the history.
  public func unsentPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase] {
    try readQueue(.readPurchases) { store throws(SQLiteError) in
      try store.purchases(observedBy: scope, unsentOnly: true)
    }
  }

  /// Applies `change` to the entry `scope` observed, in one transaction, by the rules of
  /// ``QueuedPurchase/applying(_:at:)``.
  public func updatePurchase(
    _ transactionID: String, observedBy scope: CacheScope, to change: PurchaseStateChange
  ) throws(CacheError) -> QueuedPurchase? {
    let now = clock.now().truncatedToMilliseconds
    var result: QueuedPurchase?
    try write(.updatePurchase, scope: scope) { store, _ throws(SQLiteError) in
      guard let entry = try store.purchase(transactionID), entry.observer == scope.key
      else { return { _ in } }
      let next = entry.applying(change, at: now)
      result = next
      guard next != entry else { return { _ in } }
      try store.updatePurchase(next)
      guard next.state.isUnsent != entry.state.isUnsent else { return { _ in } }
      return { path in path.residents.markForReread(scope.key) }
    }
    return result
  }

  /// Runs a read of the queue on the writer connection, under its lock: queue reads are rare
  /// and must see the queue as the next write will.
  func readQueue<T>(
    _ operation: CacheOperation, _ body: (StoreWriter) throws(SQLiteError) -> T
  ) throws(CacheError) -> T {
    openAwaitedStorage()
    return try writer.withLock { connection throws(CacheError) in
      guard let open = connection else { throw awaitedStorageError(operation) ?? .closed }
      do throws(SQLiteError) {
        return try body(open)
      } catch {
        throw .sqlite(operation, error)
      }
    }
  }
}
