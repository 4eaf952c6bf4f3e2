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
    try write(.prune, scope: nil) { store, _ throws(SQLiteError) in
      report.expired = try store.deleteUnusableScopes(
        usedBefore: cutoff, now: now, boot: boot, policy: configuration.policy)
      report.overCap = try store.deleteScopesOverCap(keeping: configuration.maxScopes)
      (report.expiredPurchases, report.deletedPurchases) = try store.prunePurchases(
        now: now, keepingFinal: configuration.maxFinalPurchases)
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
    try write(.prune, scope: nil) { store, _ throws(SQLiteError) in
      deleted = try store.deleteUnusableScopes(
        usedBefore: nil, now: now, boot: boot, policy: rules)
      return { state in
        if deleted > 0 { state.residents.dropAll() }
      }
    }
    return deleted
  }
}
