import Foundation
import Testing

@testable import EntitlementCache

/// One observation a boundary case makes on each side of its boundary.
enum Probe: Hashable, Sendable {
  case state(AccessState)
  case freshness(Freshness)
  case accessContextPresent(Bool)
  case rollbackSuspected(Bool)

  /// The same kind of observation, read from a decision and the evaluated CustomerInfo.
  func observed(in decision: AccessDecision, _ evaluated: EvaluatedCustomerInfo) -> Probe {
    switch self {
    case .state: .state(decision.state)
    case .freshness: .freshness(evaluated.freshness)
    case .accessContextPresent: .accessContextPresent(evaluated.customerInfo.accessContext != nil)
    case .rollbackSuspected: .rollbackSuspected(decision.evidence.clockRollbackSuspected)
    }
  }

  var isGrant: Bool { self == .state(.granted) }
  var isStateWithoutGrant: Bool {
    if case .state(let state) = self { state != .granted } else { false }
  }
}

/// What one preset shows a second before and a second after the boundary.
struct Sides: Sendable, Hashable {
  var before: Probe
  var after: Probe
  /// The decision's `validUntil` a second before the boundary.
  var validUntil: Date?
}

/// One boundary of DESIGN §5–6: a snapshot stored at T, the instant that matters, and what
/// each preset shows around it.
struct BoundaryCase: Sendable, CustomTestStringConvertible {
  var name: String
  var info: CustomerInfo
  var boundary: Date
  var conservative: Sides
  var serverSnapshot: Sides

  func sides(_ preset: Preset) -> Sides {
    switch preset {
    case .conservative: conservative
    case .serverSnapshot: serverSnapshot
    }
  }

  var testDescription: String { name }
}

@Suite("Every boundary of DESIGN §5–6, one second either side, both presets")
struct BoundaryTableTests {
  typealias F = EvalFixture

  static let granted = Probe.state(.granted)

  static let cases: [BoundaryCase] = [
    BoundaryCase(
      name: "active until expiresAt",
      info: F.info(["pro": F.entitlement(.active, expiresAt: F.at(F.day))]),
      boundary: F.at(F.day),
      // The perk model never compares expiresAt with the device clock; max age bounds it.
      conservative: Sides(
        before: granted, after: .state(.denied(.expired)), validUntil: F.at(F.day)),
      serverSnapshot: Sides(before: granted, after: granted, validUntil: F.at(2 * F.day))),
    BoundaryCase(
      name: "grace until gracePeriodExpiresAt, not expiresAt",
      info: F.info(["pro": F.entitlement(.grace, expiresAt: F.at(F.hour), graceEnd: F.at(F.day))]),
      boundary: F.at(F.day),
      conservative: Sides(
        before: granted, after: .state(.denied(.expired)), validUntil: F.at(F.day)),
      serverSnapshot: Sides(before: granted, after: granted, validUntil: F.at(2 * F.day))),
    BoundaryCase(
      name: "grace without gracePeriodExpiresAt until expiresAt",
      info: F.info(["pro": F.entitlement(.grace, expiresAt: F.at(F.day))]),
      boundary: F.at(F.day),
      conservative: Sides(
        before: granted, after: .state(.denied(.expired)), validUntil: F.at(F.day)),
      serverSnapshot: Sides(before: granted, after: granted, validUntil: F.at(2 * F.day))),
    BoundaryCase(
      name: "lifetime until verifiedAt + nonExpiringMaxOfflineAge",
      info: F.info(["pro": F.entitlement(.active, verifiedAt: F.at(-29 * F.day))]),
      boundary: F.at(F.day),
      conservative: Sides(
        before: granted, after: .state(.denied(.offlineWindowElapsed)), validUntil: F.at(F.day)),
      serverSnapshot: Sides(before: granted, after: granted, validUntil: F.at(2 * F.day))),
    BoundaryCase(
      name: "lifetime without verifiedAt until requestDate + nonExpiringMaxOfflineAge",
      info: F.info(
        ["pro": F.entitlement(.active, verifiedAt: nil)], requestDate: F.at(-29 * F.day)),
      boundary: F.at(F.day),
      conservative: Sides(
        before: granted, after: .state(.denied(.offlineWindowElapsed)), validUntil: F.at(F.day)),
      serverSnapshot: Sides(before: granted, after: granted, validUntil: F.at(2 * F.day))),
    BoundaryCase(
      name: "device access until deviceAccess.expiresAt",
      info: F.info(
        ["pro": F.monthly],
        deviceAccess: DeviceAccessInfo(status: .known(.active), expiresAt: F.at(F.day))),
      boundary: F.at(F.day),
      conservative: Sides(
        before: granted, after: .state(.offlineUnavailable(.deviceAccessExpired)),
        validUntil: F.at(F.day)),
      serverSnapshot: Sides(
        before: granted, after: .state(.offlineUnavailable(.deviceAccessExpired)),
        validUntil: F.at(F.day))),
    BoundaryCase(
      name: "accessContext until its expiresAt, access unchanged",
      info: F.info(
        ["pro": F.monthly],
        accessContext: AccessContext(
          token: AccessToken(rawValue: "T0K3N"), expiresAt: F.at(15 * F.minute))),
      boundary: F.at(15 * F.minute),
      conservative: Sides(
        before: .accessContextPresent(true), after: .accessContextPresent(false),
        validUntil: F.at(30 * F.day)),
      serverSnapshot: Sides(
        before: .accessContextPresent(true), after: .accessContextPresent(false),
        validUntil: F.at(2 * F.day))),
    BoundaryCase(
      name: "fresh until staleAfter",
      info: F.info(["pro": F.monthly]),
      boundary: F.at(5 * F.minute),
      conservative: Sides(
        before: .freshness(.fresh), after: .freshness(.stale), validUntil: F.at(30 * F.day)),
      serverSnapshot: Sides(
        before: .freshness(.fresh), after: .freshness(.stale), validUntil: F.at(2 * F.day))),
    BoundaryCase(
      name: "usable until storedAt + maxSnapshotAge",
      info: F.info(["pro": F.monthly]),
      boundary: F.at(2 * F.day),
      // The conservative preset has no maximum age.
      conservative: Sides(before: granted, after: granted, validUntil: F.at(30 * F.day)),
      serverSnapshot: Sides(
        before: granted, after: .state(.offlineUnavailable(.snapshotTooOld)),
        validUntil: F.at(2 * F.day))),
    BoundaryCase(
      name: "rollback suspected only beyond the tolerance",
      info: F.info(["pro": F.monthly]),
      // Stored at T, so the high-water mark is T; the clock reads five minutes before it.
      boundary: F.at(-5 * F.minute),
      conservative: Sides(
        before: .rollbackSuspected(true), after: .rollbackSuspected(false),
        validUntil: F.at(30 * F.day)),
      serverSnapshot: Sides(
        before: .rollbackSuspected(true), after: .rollbackSuspected(false),
        validUntil: F.at(2 * F.day))),
  ]

  /// One second before, the boundary itself (half-open: the later side already holds), and
  /// one second after.
  static func expectations(_ sides: Sides) -> [(offset: TimeInterval, probe: Probe)] {
    [(-1, sides.before), (0, sides.after), (1, sides.after)]
  }

  @Test("in memory", arguments: cases, Preset.allCases)
  func inMemory(_ testCase: BoundaryCase, _ preset: Preset) {
    let sides = testCase.sides(preset)
    for (offset, expected) in Self.expectations(sides) {
      let now = testCase.boundary.addingTimeInterval(offset)
      let decision = F.decide("pro", in: testCase.info, now: now, policy: preset.policy)
      let evaluated = F.evaluate(testCase.info, now: now, policy: preset.policy)
      check(testCase, offset: offset, expected, decision, evaluated, sides)
    }
  }

  @Test("read through SQLite", arguments: cases, Preset.allCases)
  func throughSQLite(_ testCase: BoundaryCase, _ preset: Preset) throws {
    let harness = try CacheHarness()
    try harness.store(testCase.info)
    for (offset, expected) in Self.expectations(testCase.sides(preset)) {
      harness.clock.set(testCase.boundary.addingTimeInterval(offset))
      let decision = harness.cache.access(to: "pro", for: Fixture.scopeA, policy: preset.policy)
      let evaluated = try #require(
        try harness.cache.evaluatedCustomerInfo(for: Fixture.scopeA, policy: preset.policy))
      check(testCase, offset: offset, expected, decision, evaluated, testCase.sides(preset))
    }
  }

  private func check(
    _ testCase: BoundaryCase, offset: TimeInterval, _ expected: Probe, _ decision: AccessDecision,
    _ evaluated: EvaluatedCustomerInfo, _ sides: Sides
  ) {
    let context = Comment(
      rawValue: "\(testCase.name) at boundary \(offset > 0 ? "+" : "")\(Int(offset))s")
    #expect(expected.observed(in: decision, evaluated) == expected, context)
    // The evaluated view and the single decision must never disagree.
    #expect(evaluated.decisions["pro"] == decision, context)
    #expect(decision.evidence.freshness == evaluated.freshness, context)
    if offset < 0 {
      #expect(decision.evidence.validUntil == sides.validUntil, context)
    }
    // A boundary that passed is the one the evidence names.
    if offset >= 0, expected.isStateWithoutGrant {
      #expect(decision.evidence.validUntil == testCase.boundary, context)
    }
  }
}
