#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A cached CustomerInfo re-evaluated at one moment.
public struct EvaluatedCustomerInfo: Sendable, Hashable {
  /// The snapshot as it holds now: lapsed entitlements read `expired` (past their expiry or
  /// grace end, or non-expiring ones past the offline window, so code that reads only statuses
  /// never grants what the decisions deny by time), an expired access context is removed.
  public var customerInfo: CustomerInfo
  /// The decision for every entitlement key of the snapshot.
  public var decisions: [String: AccessDecision]
  /// How current the snapshot is.
  package var freshness: Freshness
  /// Why the library decided the snapshot `failed` verification (its
  /// ``CustomerInfo/verification`` then reads `failed`); nil when it decided `verified` or
  /// has no trust roots.
  package var verificationFailure: VerificationFailure?
  /// The device clock is more than the tolerance behind a device time already seen: it was
  /// set back. A diagnostic; never because the server's clock is ahead.
  package var clockRollbackSuspected: Bool
  /// ``ScopeBookkeeping/serverOffset`` in whole seconds: how far the server's clock was ahead
  /// of the device's at the last refresh. Nil without a snapshot.
  package var clockOffset: Int?
  /// The cache's estimate of the server's clock now, which every server-issued boundary was
  /// compared with (<doc:TimeModel>).
  package var estimatedServerTime: Date
  /// The scope's bookkeeping.
  package var bookkeeping: ScopeBookkeeping
  /// How long, in device time, until time alone could change this evaluation: the first
  /// boundary ahead among every decision's `validUntil`, the access context's expiry,
  /// `staleAfter` and `maxSnapshotAge`. Nil when none is ahead. The refresh client schedules its
  /// republish here, so a stream flips `pro` at its expiry with no network.
  public var timeToNextBoundary: TimeInterval?

  /// Served from cache after a failed refresh.
  package var isComputedOffline: Bool { freshness == .offline }

  /// What the whole evaluation rests on: the snapshot's freshness and verification, the
  /// clock offset, the estimated server time and whether the clock was set back. Fields that
  /// belong to one entitlement (`validUntil`, `verifiedAt`, `source`) are nil.
  public var evidence: AccessEvidence {
    AccessEvidence(
      freshness: freshness, verification: customerInfo.verification,
      isComputedOffline: freshness == .offline, storedAt: bookkeeping.storedAt,
      clockRollbackSuspected: clockRollbackSuspected, clockOffset: clockOffset,
      estimatedServerTime: estimatedServerTime, pendingPurchase: bookkeeping.hasPendingPurchase,
      verificationFailure: verificationFailure, origin: bookkeeping.origin)
  }

  /// The keys usable right now, offline included.
  public var activeEntitlementKeys: Set<String> {
    Set(decisions.lazy.filter { $0.value.isGranted }.map(\.key))
  }
}
