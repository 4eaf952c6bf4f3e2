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
    try write(.enqueuePurchase, scope: scope) { connection, _ throws(SQLiteError) in
      if let existing = try Self.entry(purchase.transactionID, on: connection) {
        guard existing.observer == scope.key else { return { _ in } }
        guard let reopened = existing.reobserved(as: purchase, at: now) else {
          outcome = .alreadyQueued(existing)
          return { _ in }
        }
        try connection.withStatement(PurchaseQueueSQL.reopen) { statement throws(SQLiteError) in
          try statement.bind(purchase.transactionID, at: 1)
          try statement.bind(reopened.token.bytes, at: 2)
          try statement.bind(now, at: 3)
          try statement.run()
        }
        outcome = .queued(reopened)
        return { path in path.residents.markForReread(scope.key) }
      }
      try connection.withStatement(PurchaseQueueSQL.insert) { statement throws(SQLiteError) in
        typealias Parameter = PurchaseQueueSQL.InsertParameter
        try statement.bind(purchase.transactionID, at: Parameter.transactionID.rawValue)
        try statement.bind(scope.key.bytes, at: Parameter.observerKey.rawValue)
        try statement.bind(scope.userHash, at: Parameter.observerUserHash.rawValue)
        try statement.bind(scope.environment.rawValue, at: Parameter.environment.rawValue)
        try statement.bind(purchase.productID, at: Parameter.productID.rawValue)
        try statement.bind(purchase.token.bytes, at: Parameter.payload.rawValue)
        try statement.bind(now, at: Parameter.observedAt.rawValue)
        try statement.run()
      }
      outcome = .queued(QueuedPurchase(purchase, observedBy: scope, at: now))
      return { path in path.residents.markForReread(scope.key) }
    }
    return outcome
  }

  /// Every entry `scope` observed, in observation order. Entries another tool left out of the
  /// schema's range are skipped.
  public func queuedPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase] {
    try entries(PurchaseQueueSQL.entriesByObserver, observedBy: scope)
  }

  /// The entries `scope` observed that are still to post, in observation order, read from the
  /// partial index that holds only those: a drain costs the backlog, not the history.
  public func unsentPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase] {
    try entries(PurchaseQueueSQL.unsentByObserver, observedBy: scope)
  }

  private func entries(
    _ sql: String, observedBy scope: CacheScope
  ) throws(CacheError) -> [QueuedPurchase] {
    try readQueue(.readPurchases) { connection throws(SQLiteError) in
      try connection.withStatement(sql) { statement throws(SQLiteError) in
        try statement.bind(scope.key.bytes, at: 1)
        var entries: [QueuedPurchase] = []
        while try statement.step() {
          if let entry = PurchaseQueueSQL.entry(row: statement) { entries.append(entry) }
        }
        return entries
      }
    }
  }

  /// Applies `change` to the entry `scope` observed, in one transaction, by the rules of
  /// ``QueuedPurchase/applying(_:at:)``.
  public func updatePurchase(
    _ transactionID: String, observedBy scope: CacheScope, to change: PurchaseStateChange
  ) throws(CacheError) -> QueuedPurchase? {
    let now = clock.now().truncatedToMilliseconds
    var result: QueuedPurchase?
    try write(.updatePurchase, scope: scope) { connection, _ throws(SQLiteError) in
      guard let entry = try Self.entry(transactionID, on: connection), entry.observer == scope.key
      else { return { _ in } }
      let next = entry.applying(change, at: now)
      result = next
      guard next != entry else { return { _ in } }
      try connection.withStatement(PurchaseQueueSQL.update) { statement throws(SQLiteError) in
        try statement.bind(transactionID, at: 1)
        try statement.bind(next.state.rawValue, at: 2)
        try statement.bind(next.attempts, at: 3)
        try statement.bind(next.nextAttemptAt, at: 4)
        try statement.bind(next.stateChangedAt, at: 5)
        try statement.bind(next.lastFailure?.recordedReason, at: 6)
        try statement.bind(next.resolution?.rawValue, at: 7)
        try statement.run()
      }
      guard next.state.isUnsent != entry.state.isUnsent else { return { _ in } }
      return { path in path.residents.markForReread(scope.key) }
    }
    return result
  }

  /// The entry of `transactionID`, read inside a write transaction.
  private static func entry(
    _ transactionID: String, on connection: SQLiteConnection
  ) throws(SQLiteError) -> QueuedPurchase? {
    try connection.withStatement(PurchaseQueueSQL.entryByTransaction) {
      statement throws(SQLiteError) in
      try statement.bind(transactionID, at: 1)
      guard try statement.step() else { return nil }
      return PurchaseQueueSQL.entry(row: statement)
    }
  }

  /// Runs a read of the queue on the writer connection, under its lock: queue reads are rare
  /// and must see the queue as the next write will.
  func readQueue<T>(
    _ operation: CacheOperation, _ body: (SQLiteConnection) throws(SQLiteError) -> T
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
