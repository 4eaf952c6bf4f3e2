#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension EntitlementEvaluator {
  /// The device time until the first boundary ahead that could change an evaluation with no
  /// new data: a `validUntil` (expiry, grace, the lifetime window, device access, the snapshot's
  /// age), the access context's expiry, `staleAfter`, `maxSnapshotAge`. Server-issued instants
  /// are ahead of ``ClockReading/serverNow`` by the device time still to pass, since server time
  /// advances with elapsed time.
  static func timeToNextBoundary(
    decisions: some Sequence<AccessDecision>, accessContext: AccessContext?,
    freshness: Freshness, clock: ClockReading, policy: OfflinePolicy
  ) -> TimeInterval? {
    var soonest: TimeInterval?
    func consider(_ wait: TimeInterval) {
      guard wait > 0, wait.isFinite else { return }
      soonest = soonest.map { min($0, wait) } ?? wait
    }
    for decision in decisions {
      if let validUntil = decision.evidence.validUntil {
        consider(validUntil.timeIntervalSince(clock.serverNow))
      }
    }
    if let accessContext { consider(accessContext.expiresAt.timeIntervalSince(clock.serverNow)) }
    if freshness == .fresh { consider(policy.staleAfter - clock.elapsed) }
    if let maxSnapshotAge = policy.maxSnapshotAge { consider(maxSnapshotAge - clock.elapsed) }
    return soonest
  }
}
