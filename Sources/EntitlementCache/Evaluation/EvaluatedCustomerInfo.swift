/// A cached CustomerInfo re-evaluated at one moment.
public struct EvaluatedCustomerInfo: Sendable, Hashable {
  /// The snapshot as it holds now: lapsed entitlements read `expired`, an expired access
  /// context is removed.
  public var customerInfo: CustomerInfo
  /// The decision for every entitlement key of the snapshot.
  public var decisions: [String: AccessDecision]
  /// How current the snapshot is.
  public var freshness: Freshness
  /// The device clock is behind the latest trusted time by more than the tolerance.
  public var clockRollbackSuspected: Bool
  /// The scope's bookkeeping.
  public var bookkeeping: ScopeBookkeeping

  /// Served from cache after a failed refresh.
  public var isComputedOffline: Bool { freshness == .offline }

  /// The keys usable right now, offline included.
  public var activeEntitlementKeys: Set<String> {
    Set(decisions.lazy.filter { $0.value.isGranted }.map(\.key))
  }
}
