/// The persistent purchase queue the refresh client posts purchases from (<doc:PurchaseQueue>).
///
/// ``SQLiteCustomerInfoCache`` keeps it in the cache's file, in the same transactions as
/// everything else it writes; the in-memory cache keeps it in memory. A cache of an
/// SDK's own conforms to take part, and runs `PurchaseQueueContract` of the
/// `EntitlementCacheTesting` product to check it keeps the rules.
///
/// The rules:
/// - An entry is committed when ``enqueue(_:observedBy:)`` returns (with
///   ``SQLiteCustomerInfoCache``, durable against the app being killed; against power loss with
///   ``CacheConfiguration/Durability/full``), and idempotent by transaction ID: the first
///   observer keeps it for good, across log-outs and log-ins. Only an expired entry observed
///   again by its own observer changes: it is queued again (``QueuedPurchase/reobserved(as:at:)``).
/// - Entries are bound to their observer: every read and change names it, and no call shows
///   one scope another scope's entry.
/// - State changes follow ``QueuedPurchase/applying(_:at:)``: a final entry never changes.
/// - A scope with an unsent entry reads with ``ScopeBookkeeping/hasPendingPurchase`` set, and
///   its decisions with ``AccessEvidence/pendingPurchase``.
public protocol PurchaseQueueStore: Sendable {
  /// Enqueues `purchase` as observed by `scope` now, durably; nothing happens when its
  /// transaction is queued already, under any scope, except that an expired entry observed
  /// again by its own observer is queued again (``EnqueueOutcome/queued(_:)``).
  ///
  /// - Throws: ``CacheError/invalidPurchase(field:problem:)`` for an empty or oversized ID or
  ///   token; ``CacheError/storage(_:_:)``. Either way nothing was written.
  func enqueue(_ purchase: ObservedPurchase, observedBy scope: CacheScope) throws(CacheError)
    -> EnqueueOutcome

  /// Every entry `scope` observed, in observation order, final ones included.
  func queuedPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase]

  /// The entries `scope` observed that are still to post (`pending` or `posting`), in
  /// observation order: what each drain reads, so it should cost the backlog, not the history.
  /// By default, ``queuedPurchases(observedBy:)`` filtered.
  func unsentPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase]

  /// Applies `change` to the entry of `transactionID` that `scope` observed, now, and returns
  /// the entry as stored after it; nil when `scope` has no such entry.
  func updatePurchase(
    _ transactionID: String, observedBy scope: CacheScope, to change: PurchaseStateChange
  ) throws(CacheError) -> QueuedPurchase?
}

extension PurchaseQueueStore {
  /// ``queuedPurchases(observedBy:)`` without the final entries.
  public func unsentPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase] {
    try queuedPurchases(observedBy: scope).filter(\.state.isUnsent)
  }
}
