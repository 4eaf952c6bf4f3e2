import EntitlementCache

/// A cache bound to one scope, for tests that switch the "current" scope as an SDK's session
/// does.
extension CustomerInfoCache {
  func bound(to scope: CacheScope) -> ScopedCustomerInfoCache<Self> {
    ScopedCustomerInfoCache(cache: self, scope: scope)
  }
}

/// A cache bound to one scope: the reads and writes an SDK's current user session makes.
///
/// ```swift
/// let session = cache.bound(to: scope)
/// if session.hasActiveEntitlement("pro") { showPro() }
/// ```
struct ScopedCustomerInfoCache<Cache: CustomerInfoCache>: Sendable {
  /// The underlying cache.
  let cache: Cache
  /// The scope every call uses.
  let scope: CacheScope

  /// The decision for one entitlement now.
  func access(to entitlement: String, policy: OfflinePolicy? = nil) -> AccessDecision {
    cache.access(to: entitlement, for: scope, policy: policy)
  }

  /// Whether `entitlement` is usable now.
  func hasActiveEntitlement(_ entitlement: String) -> Bool {
    cache.access(to: entitlement, for: scope, policy: nil).isGranted
  }

  /// The keys usable now, offline included.
  var activeEntitlementKeys: Set<String> {
    cache.activeEntitlementKeys(for: scope, policy: nil)
  }

  /// The stored CustomerInfo re-evaluated now.
  func evaluatedCustomerInfo(policy: OfflinePolicy? = nil) throws(CacheError)
    -> EvaluatedCustomerInfo?
  {
    try cache.evaluatedCustomerInfo(for: scope, policy: policy)
  }

  /// Stores a successful refresh.
  func store(_ snapshot: CustomerInfoSnapshot) throws(CacheError) {
    try cache.store(snapshot, for: scope)
  }

  /// Stores a server's answer unless that would take the scope backwards
  /// (``CustomerInfoCache/storeAnswer(_:for:)``).
  func storeAnswer(_ snapshot: CustomerInfoSnapshot) throws(CacheError) -> StoreOutcome {
    try cache.storeAnswer(snapshot, for: scope)
  }

  /// Records a failed refresh.
  func recordRefreshFailure(reason: String? = nil) throws(CacheError) {
    try cache.recordRefreshFailure(for: scope, reason: reason)
  }

  /// The stored snapshot and bookkeeping, or nil when nothing is stored.
  func load() throws(CacheError) -> CachedCustomerInfo? {
    try cache.load(scope)
  }

  /// Deletes everything stored for the scope.
  func remove() throws(CacheError) {
    try cache.remove(scope)
  }
}
