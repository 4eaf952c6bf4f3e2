#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Retention's statements: which scopes and purchase-queue entries go, by the rules of
/// ``SQLiteCustomerInfoCache/prune()``.
extension StoreWriter {
  /// Deletes every scope, or every one last used before `cutoff`, whose snapshot can no
  /// longer grant anything under `policy` now, and returns how many were deleted.
  func deleteUnusableScopes(
    usedBefore cutoff: Date?, now: Date, boot: BootInstant?, policy: OfflinePolicy
  ) throws(SQLiteError) -> Int {
    let sql =
      cutoff == nil
      ? "SELECT scope_key FROM scope"
      : "SELECT scope_key FROM scope WHERE last_used_at < ?1"
    let candidates: [[UInt8]] = try connection.withStatement(sql) { statement throws(SQLiteError) in
      if let cutoff { try statement.bind(cutoff, at: 1) }
      var keys: [[UInt8]] = []
      while try statement.step() {
        if let key = statement.data(0) { keys.append(Array(key)) }
      }
      return keys
    }
    var deleted = 0
    for key in candidates
    where try !entitlesAnyKey(key, now: now, boot: boot, policy: policy) {
      if try deleteScope(storedKey: key) { deleted += 1 }
    }
    return deleted
  }

  /// Whether any key of the stored snapshot is granted now, or would be but for this
  /// installation's device access: a blocked device's answer is device management, never
  /// "buy again", and it needs the snapshot that says so.
  private func entitlesAnyKey(
    _ key: [UInt8], now: Date, boot: BootInstant?, policy: OfflinePolicy
  ) throws(SQLiteError) -> Bool {
    let (scopeRow, entitlements) = try scope(storedKey: key)
    guard let scopeRow, let snapshot = scopeRow.facts else { return false }
    let clock = ClockReading(
      now: now, boot: boot, bookkeeping: scopeRow.bookkeeping,
      tolerance: policy.clockRollbackTolerance)
    return entitlements.contains { name, facts in
      let decision = EntitlementEvaluator.decide(
        name, facts: facts, snapshot: snapshot, bookkeeping: scopeRow.bookkeeping, clock: clock,
        policy: policy)
      if case .deviceBlocked = decision.state { return true }
      return decision.isGranted
    }
  }

  /// The purchase queue's retention: how many entries expired, and how many were deleted.
  func prunePurchases(
    now: Date, keepingFinal limit: Int
  ) throws(SQLiteError) -> (expired: Int, deleted: Int) {
    let now = now.truncatedToMilliseconds
    let expired = try connection.withStatement(PurchaseQueueSQL.expireUnsent) {
      statement throws(SQLiteError) in
      try statement.bind(now.addingTimeInterval(-QueuedPurchase.expiryAge), at: 1)
      try statement.bind(now, at: 2)
      try statement.run()
      return connection.changes
    }
    let cutoff = now.addingTimeInterval(-QueuedPurchase.retentionAge)
    var deleted = try connection.withStatement(PurchaseQueueSQL.deleteSynced) {
      statement throws(SQLiteError) in
      try statement.bind(cutoff, at: 1)
      try statement.run()
      return connection.changes
    }
    try connection.withStatement(PurchaseQueueSQL.dropFinalTokens) {
      statement throws(SQLiteError) in
      try statement.bind(cutoff, at: 1)
      try statement.run()
    }
    deleted += try connection.withStatement(PurchaseQueueSQL.deleteFinalOverCap) {
      statement throws(SQLiteError) in
      try statement.bind(limit, at: 1)
      try statement.run()
      return connection.changes
    }
    return (expired, deleted)
  }

  /// Deletes the least recently used scopes beyond `limit`, and returns how many.
  func deleteScopesOverCap(keeping limit: Int) throws(SQLiteError) -> Int {
    let count = Int(try connection.scalarInt("SELECT count(*) FROM scope"))
    guard count > limit else { return 0 }
    let sql = """
      DELETE FROM scope WHERE id IN (
        SELECT id FROM scope ORDER BY last_used_at ASC, id ASC LIMIT ?1)
      """
    return try connection.withStatement(sql) { statement throws(SQLiteError) in
      try statement.bind(count - max(0, limit), at: 1)
      try statement.run()
      return connection.changes
    }
  }
}
