#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension StoreWriter {
  /// The entry of `transactionID`, under whichever scope observed it; nil when none is queued.
  func purchase(_ transactionID: String) throws(SQLiteError) -> QueuedPurchase? {
    try connection.withStatement(PurchaseQueueSQL.entryByTransaction) {
      statement throws(SQLiteError) in
      try statement.bind(transactionID, at: 1)
      guard try statement.step() else { return nil }
      return PurchaseQueueSQL.entry(row: statement)
    }
  }

  /// Every entry `scope` observed in observation order, or only those still to post (read
  /// from the partial index that holds only those: a drain costs the backlog, not the
  /// history). Entries another tool left out of the schema's range are skipped.
  func purchases(
    observedBy scope: CacheScope, unsentOnly: Bool
  ) throws(SQLiteError) -> [QueuedPurchase] {
    let sql = unsentOnly ? PurchaseQueueSQL.unsentByObserver : PurchaseQueueSQL.entriesByObserver
    return try connection.withStatement(sql) { statement throws(SQLiteError) in
      try statement.bind(scope.key.bytes, at: 1)
      var entries: [QueuedPurchase] = []
      while try statement.step() {
        if let entry = PurchaseQueueSQL.entry(row: statement) { entries.append(entry) }
      }
      return entries
    }
  }

  /// Queues `purchase` as observed by `scope` at `now`.
  func insertPurchase(
    _ purchase: ObservedPurchase, observedBy scope: CacheScope, at now: Date
  ) throws(SQLiteError) {
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
  }

  /// Puts a final entry back to post, with the token it was observed with again
  /// (``QueuedPurchase/reobserved(as:at:)``).
  func reopenPurchase(_ reopened: QueuedPurchase, at now: Date) throws(SQLiteError) {
    try connection.withStatement(PurchaseQueueSQL.reopen) { statement throws(SQLiteError) in
      try statement.bind(reopened.transactionID, at: 1)
      try statement.bind(reopened.token.bytes, at: 2)
      try statement.bind(now, at: 3)
      try statement.run()
    }
  }

  /// Writes the state of `entry` (``QueuedPurchase/applying(_:at:)``).
  func updatePurchase(_ entry: QueuedPurchase) throws(SQLiteError) {
    try connection.withStatement(PurchaseQueueSQL.update) { statement throws(SQLiteError) in
      try statement.bind(entry.transactionID, at: 1)
      try statement.bind(entry.state.rawValue, at: 2)
      try statement.bind(entry.attempts, at: 3)
      try statement.bind(entry.nextAttemptAt, at: 4)
      try statement.bind(entry.stateChangedAt, at: 5)
      try statement.bind(entry.lastFailure?.recordedReason, at: 6)
      try statement.bind(entry.resolution?.rawValue, at: 7)
      try statement.run()
    }
  }
}
