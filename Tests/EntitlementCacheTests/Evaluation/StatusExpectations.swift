@testable import EntitlementCache

// What the tests' oracles expect of each value the server can send, written out case by case.
// Each is a switch without `default`, so a value added to its enum does not compile here until
// someone writes what it should do; `KnownValuesTests` checks each table against the evaluator.

extension EntitlementStatus {
  /// The denial the status gives by itself, whatever the dates; nil for a status that grants
  /// until a boundary of the entitlement's own (its end, its grace end, or the offline window
  /// of non-expiring access) has passed.
  var expectedDenial: DenialReason? {
    switch self {
    case .active: nil
    case .grace: nil
    case .billingRetry: .billingRetry
    case .expired: .expired
    case .revoked: .revoked
    }
  }

  /// Whether the status grants until a boundary of its own: what may grant at all.
  var grantsUntilItsBoundary: Bool { expectedDenial == nil }
}

extension VerificationStatus {
  /// Whether a granted decision on a snapshot verified this way, not computed offline, is high
  /// trust (``AccessDecision/isHighTrust``).
  var expectedHighTrust: Bool {
    switch self {
    case .verified: true
    case .verifiedOnDevice: true
    case .notRequested: false
    case .failed: false
    }
  }
}
