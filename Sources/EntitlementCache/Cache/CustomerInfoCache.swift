/// What an SDK plugs in as its `customerInfoCache`: one snapshot per scope, re-evaluated on
/// every read.
///
/// Every call names its scope, and no call enumerates or reads another scope, so switching
/// users cannot read the previous user's access. A write goes to the scope it names: pass the
/// scope captured when the request started, and a late response for user A lands under A
/// even if the app has switched to user B.
public protocol CustomerInfoCache: Sendable {
  /// The wall clock and boot clock every read decides with. The refresh client reads time
  /// only through this, so the cache and the client can never disagree about what time it is.
  var clock: CacheClock { get }

  /// The stored snapshot and bookkeeping of `scope`, or nil when nothing is stored.
  func load(_ scope: CacheScope) throws(CacheError) -> CachedCustomerInfo?

  /// Stores `snapshot` as the result of a successful refresh now.
  ///
  /// The snapshot, its normalized entitlements and the bookkeeping change together or not at
  /// all; after a failure the previous snapshot is still readable.
  func store(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope) throws(CacheError)

  /// Stores a server's answer for `scope` unless that would take the scope backwards: a late
  /// answer whose `requestDate` is older than the stored snapshot's is discarded, and one that
  /// failed verification never replaces a verified snapshot (the rules in full:
  /// ``StoreOutcome/deciding(_:over:at:)``).
  ///
  /// Both rules are decided against what is stored at the moment of the write, in the same
  /// transaction or under the same lock, so two processes or two instances refreshing one
  /// scope can never store an older answer over a newer one. The refresh client stores every
  /// answer through this. The default implementation reads, compares, then calls
  /// ``store(_:for:)``: correct for a cache that one instance alone writes. A cache that
  /// several can write implements it inside its own transaction, deciding with
  /// ``StoreOutcome/deciding(_:over:at:)``.
  ///
  /// - Returns: What happened: ``StoreOutcome/stored``, ``StoreOutcome/discardedOlder`` or
  ///   ``StoreOutcome/refusedUnverified(_:)``; only `stored` changed anything.
  /// - Throws: As ``store(_:for:)``, other than for a refused verification, which is an
  ///   outcome here.
  func storeAnswer(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope) throws(CacheError)
    -> StoreOutcome

  /// Records that a refresh attempt for `scope` failed now. Cached access is unchanged; its
  /// evidence reads `offline` until the next successful refresh.
  ///
  /// - Parameters:
  ///   - scope: The scope the failed request was for.
  ///   - reason: A short note for support engineers. Do not pass tokens or user IDs.
  func recordRefreshFailure(for scope: CacheScope, reason: String?) throws(CacheError)

  /// Deletes everything stored for `scope`.
  func remove(_ scope: CacheScope) throws(CacheError)

  /// The decision for one entitlement now. Never throws: when nothing usable can be read the
  /// decision is `offlineUnavailable`, which is fail-closed and distinct from `denied`.
  func access(to entitlement: String, for scope: CacheScope, policy: OfflinePolicy?)
    -> AccessDecision

  /// The keys usable now, offline included.
  func activeEntitlementKeys(for scope: CacheScope, policy: OfflinePolicy?) -> Set<String>

  /// The stored CustomerInfo re-evaluated now, or nil when nothing is stored.
  func evaluatedCustomerInfo(for scope: CacheScope, policy: OfflinePolicy?) throws(CacheError)
    -> EvaluatedCustomerInfo?
}

extension CustomerInfoCache {
  /// Reads, compares and stores: see ``CustomerInfoCache/storeAnswer(_:for:)`` for when this
  /// is enough.
  public func storeAnswer(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope)
    throws(CacheError) -> StoreOutcome
  {
    // A stored body that no longer decodes (edited on disk) is nothing to compare with: the
    // answer replaces it, or every refresh would fail on it for good.
    var loaded: CachedCustomerInfo?
    do {
      loaded = try load(scope)
    } catch .unreadableSnapshot {
      loaded = nil
    }
    let outcome = StoreOutcome.deciding(snapshot, over: loaded, at: clock.now())
    guard outcome == .stored else { return outcome }
    do {
      try store(snapshot, for: scope)
    } catch .unverifiedSnapshot(let reason) {
      return .refusedUnverified(reason)
    }
    return .stored
  }

  /// The decision for one entitlement now, under the cache's policy.
  public func access(to entitlement: String, for scope: CacheScope) -> AccessDecision {
    access(to: entitlement, for: scope, policy: nil)
  }

  /// Whether `entitlement` is usable now, under the cache's policy.
  public func hasActiveEntitlement(_ entitlement: String, for scope: CacheScope) -> Bool {
    access(to: entitlement, for: scope, policy: nil).isGranted
  }

  /// The keys usable now under the cache's policy, offline included.
  public func activeEntitlementKeys(for scope: CacheScope) -> Set<String> {
    activeEntitlementKeys(for: scope, policy: nil)
  }

  /// The stored CustomerInfo re-evaluated now under the cache's policy, or nil when nothing is
  /// stored.
  public func evaluatedCustomerInfo(for scope: CacheScope) throws(CacheError)
    -> EvaluatedCustomerInfo?
  {
    try evaluatedCustomerInfo(for: scope, policy: nil)
  }

  /// Records that a refresh attempt for `scope` failed now, without a reason.
  public func recordRefreshFailure(for scope: CacheScope) throws(CacheError) {
    try recordRefreshFailure(for: scope, reason: nil)
  }

}

/// A snapshot as stored, with its bookkeeping.
public struct CachedCustomerInfo: Sendable, Hashable {
  /// The snapshot; nil when the scope has bookkeeping (a failed refresh) but no snapshot yet.
  public var snapshot: CustomerInfoSnapshot?
  /// When it was stored and what happened since.
  public var bookkeeping: ScopeBookkeeping
  /// With trust roots, what the library decided about the snapshot (<doc:TrustedSnapshots>),
  /// checked as it was read; nil without them, or without a snapshot. The snapshot's own
  /// `verification` is the body's claim, which trust roots ignore.
  public var verdict: TrustVerdict?

  /// A stored snapshot and its bookkeeping, as a ``CustomerInfoCache`` of an SDK's own
  /// returns them from ``CustomerInfoCache/load(_:)``, with the verdict of a cache with trust
  /// roots.
  public init(
    snapshot: CustomerInfoSnapshot?, bookkeeping: ScopeBookkeeping, verdict: TrustVerdict? = nil
  ) {
    self.snapshot = snapshot
    self.bookkeeping = bookkeeping
    self.verdict = verdict
  }
}
