#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a pruning pass deleted.
package struct PruneReport: Sendable, Hashable {
  /// Scopes that could no longer grant anything and were unused for the retention period.
  package var expired: Int
  /// Scopes deleted, least recently used first, to stay within the scope cap.
  package var overCap: Int
  /// Purchase-queue entries still unsent ``QueuedPurchase/expiryAge`` after they were
  /// observed, now ``PurchaseState/expired`` (kept for diagnostics).
  package var expiredPurchases = 0
  /// Final purchase-queue entries deleted: ``QueuedPurchase/retentionAge`` after they reached
  /// their state, or the oldest beyond ``CacheConfiguration/maxFinalPurchases``.
  package var deletedPurchases = 0
}

extension SQLiteCustomerInfoCache {
  /// Applies the retention rules (the TTL side of the cache) in one transaction: deletes
  /// every scope that can no longer grant anything under the configured policy (a blocked
  /// installation of an entitled user counts as granting) and was not used for
  /// ``CacheConfiguration/retention``, then the least recently used scopes beyond
  /// ``CacheConfiguration/maxScopes``. In the purchase queue, an entry unsent
  /// ``QueuedPurchase/expiryAge`` after its observation becomes expired;
  /// ``QueuedPurchase/retentionAge`` after an entry reached a final state it is deleted when
  /// it synced, and otherwise keeps only its binding (its token dropped); the oldest final
  /// entries beyond ``CacheConfiguration/maxFinalPurchases`` are deleted. Deleting a scope
  /// never deletes its purchases.
  ///
  /// Runs at open unless ``CacheConfiguration/pruneOnOpen`` is false. Cheap: the age test
  /// uses an index and only old scopes are evaluated.
  @discardableResult
  package func prune() throws(CacheError) -> PruneReport {
    let now = clock.now()
    let boot = clock.bootInstant()
    let cutoff = now.addingTimeInterval(-configuration.retention)
    var report = PruneReport(expired: 0, overCap: 0)
    try write(.prune, scope: nil) { connection, _ throws(SQLiteError) in
      report.expired = try Self.deleteUnusable(
        on: connection, usedBefore: cutoff, now: now, boot: boot, policy: configuration.policy)
      report.overCap = try Self.deleteOverCap(on: connection, keeping: configuration.maxScopes)
      (report.expiredPurchases, report.deletedPurchases) = try Self.prunePurchases(
        on: connection, now: now, keepingFinal: configuration.maxFinalPurchases)
      return { state in
        if report.expired + report.overCap + report.expiredPurchases > 0 {
          state.residents.dropAll()
        }
      }
    }
    return report
  }

  /// Deletes every scope whose snapshot can no longer grant anything under `policy` now (a
  /// blocked installation of an entitled user counts as granting),
  /// whatever its age, and returns how many were deleted.
  @discardableResult
  package func purgeUnusable(policy: OfflinePolicy? = nil) throws(CacheError) -> Int {
    // A policy out of range could call every scope unusable: checked before anything goes.
    let rules = try resolve(policy).get()
    let now = clock.now()
    let boot = clock.bootInstant()
    var deleted = 0
    try write(.prune, scope: nil) { connection, _ throws(SQLiteError) in
      deleted = try Self.deleteUnusable(
        on: connection, usedBefore: nil, now: now, boot: boot, policy: rules)
      return { state in
        if deleted > 0 { state.residents.dropAll() }
      }
    }
    return deleted
  }

  private static func deleteUnusable(
    on connection: SQLiteConnection, usedBefore cutoff: Date?, now: Date, boot: BootInstant?,
    policy: OfflinePolicy
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
    where try !entitlesAnyKey(key, on: connection, now: now, boot: boot, policy: policy) {
      try connection.withStatement(ScopeSQL.deleteScope) { statement throws(SQLiteError) in
        try statement.bind(key, at: 1)
        try statement.run()
      }
      deleted += connection.changes
    }
    return deleted
  }

  /// Whether any key of the stored snapshot is granted now, or would be but for this
  /// installation's device access: a blocked device's answer is device management, never
  /// "buy again", and it needs the snapshot that says so.
  private static func entitlesAnyKey(
    _ key: [UInt8], on connection: SQLiteConnection, now: Date, boot: BootInstant?,
    policy: OfflinePolicy
  ) throws(SQLiteError) -> Bool {
    let (scopeRow, entitlements) = try ScopeSQL.readScope(key, on: connection)
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
  private static func prunePurchases(
    on connection: SQLiteConnection, now: Date, keepingFinal limit: Int
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

  private static func deleteOverCap(
    on connection: SQLiteConnection, keeping limit: Int
  ) throws(SQLiteError) -> Int {
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
