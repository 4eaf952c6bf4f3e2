import Foundation
import TestSupport
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

/// What one preset shows a millisecond before and from the boundary on.
struct Sides: Sendable, Hashable {
  var before: Probe
  var after: Probe
  /// The decision's `validUntil` a millisecond before the boundary.
  var validUntil: Date?
}

/// One boundary of the offline rules (<doc:OfflineRules>): a snapshot whose `requestDate` is T
/// (unless the case says otherwise), the instant that matters in server time, and what each preset
/// shows around it.
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

/// How far the device's clock is from the server's, through the refresh and every read after
/// it: a clock set back 20 days before refreshing, ten minutes slow, right, an hour fast, and
/// 20 days ahead. By the time model (<doc:TimeModel>) none of them moves a server-issued boundary
/// or an elapsed time.
enum DeviceSkew: TimeInterval, CaseIterable, Sendable, CustomTestStringConvertible {
  case twentyDaysBehind = -1_728_000
  case tenMinutesSlow = -600
  case right = 0
  case anHourFast = 3_600
  case twentyDaysAhead = 1_728_000

  var testDescription: String {
    switch self {
    case .twentyDaysBehind: "device 20 d behind"
    case .tenMinutesSlow: "device 10 m slow"
    case .right: "device right"
    case .anHourFast: "device 1 h fast"
    case .twentyDaysAhead: "device 20 d ahead"
    }
  }
}

@Suite(
  "Every offline-rule boundary in server time, 1 ms either side, five device skews, both presets")
struct BoundaryTableTests {

  static let granted = Probe.state(.granted)

  static let cases: [BoundaryCase] = [
    BoundaryCase(
      name: "active until expiresAt",
      info: Fixture.info(["pro": Fixture.entitlement(.active, expiresAt: Fixture.at(.day))]),
      boundary: Fixture.at(.day),
      // The perk model never compares expiresAt with the device clock; max age bounds it.
      conservative: Sides(
        before: granted, after: .state(.denied(.expired)), validUntil: Fixture.at(.day)),
      serverSnapshot: Sides(
        before: granted, after: granted, validUntil: Fixture.at(2 * .day))),
    BoundaryCase(
      name: "grace until gracePeriodExpiresAt, not expiresAt",
      info: Fixture.info([
        "pro": Fixture.entitlement(
          .grace, expiresAt: Fixture.at(.hour), graceEnd: Fixture.at(.day))
      ]),
      boundary: Fixture.at(.day),
      conservative: Sides(
        before: granted, after: .state(.denied(.expired)), validUntil: Fixture.at(.day)),
      serverSnapshot: Sides(
        before: granted, after: granted, validUntil: Fixture.at(2 * .day))),
    BoundaryCase(
      name: "grace without gracePeriodExpiresAt until expiresAt",
      info: Fixture.info(["pro": Fixture.entitlement(.grace, expiresAt: Fixture.at(.day))]),
      boundary: Fixture.at(.day),
      conservative: Sides(
        before: granted, after: .state(.denied(.expired)), validUntil: Fixture.at(.day)),
      serverSnapshot: Sides(
        before: granted, after: granted, validUntil: Fixture.at(2 * .day))),
    BoundaryCase(
      name: "lifetime until verifiedAt + nonExpiringMaxOfflineAge",
      info: Fixture.info([
        "pro": Fixture.entitlement(.active, verifiedAt: Fixture.at(-29 * .day))
      ]),
      boundary: Fixture.at(.day),
      conservative: Sides(
        before: granted, after: .state(.denied(.offlineWindowElapsed)),
        validUntil: Fixture.at(.day)),
      serverSnapshot: Sides(
        before: granted, after: granted, validUntil: Fixture.at(2 * .day))),
    BoundaryCase(
      name: "lifetime without verifiedAt until requestDate + nonExpiringMaxOfflineAge",
      info: Fixture.info(
        ["pro": Fixture.entitlement(.active, verifiedAt: nil)],
        requestDate: Fixture.at(-29 * .day)),
      boundary: Fixture.at(.day),
      conservative: Sides(
        before: granted, after: .state(.denied(.offlineWindowElapsed)),
        validUntil: Fixture.at(.day)),
      // Refreshed 30 days before the boundary: far past the perk model's 2-day maximum age.
      serverSnapshot: Sides(
        before: .state(.offlineUnavailable(.snapshotTooOld)),
        after: .state(.offlineUnavailable(.snapshotTooOld)), validUntil: nil)),
    BoundaryCase(
      name: "device access until deviceAccess.expiresAt",
      info: Fixture.info(
        ["pro": Fixture.monthly],
        deviceAccess: DeviceAccessInfo(status: .known(.active), expiresAt: Fixture.at(.day))),
      boundary: Fixture.at(.day),
      conservative: Sides(
        before: granted, after: .state(.offlineUnavailable(.deviceAccessExpired)),
        validUntil: Fixture.at(.day)),
      serverSnapshot: Sides(
        before: granted, after: .state(.offlineUnavailable(.deviceAccessExpired)),
        validUntil: Fixture.at(.day))),
    BoundaryCase(
      name: "accessContext until its expiresAt, access unchanged",
      info: Fixture.info(
        ["pro": Fixture.monthly],
        accessContext: AccessContext(
          token: AccessToken(rawValue: "T0K3N"), expiresAt: Fixture.at(15 * .minute))),
      boundary: Fixture.at(15 * .minute),
      conservative: Sides(
        before: .accessContextPresent(true), after: .accessContextPresent(false),
        validUntil: Fixture.at(30 * .day)),
      serverSnapshot: Sides(
        before: .accessContextPresent(true), after: .accessContextPresent(false),
        validUntil: Fixture.at(2 * .day))),
    BoundaryCase(
      name: "fresh until staleAfter",
      info: Fixture.info(["pro": Fixture.monthly]),
      boundary: Fixture.at(5 * .minute),
      conservative: Sides(
        before: .freshness(.fresh), after: .freshness(.stale),
        validUntil: Fixture.at(30 * .day)),
      serverSnapshot: Sides(
        before: .freshness(.fresh), after: .freshness(.stale),
        validUntil: Fixture.at(2 * .day))),
    BoundaryCase(
      name: "usable until maxSnapshotAge has elapsed",
      info: Fixture.info(["pro": Fixture.monthly]),
      boundary: Fixture.at(2 * .day),
      // The conservative preset has no maximum age.
      conservative: Sides(
        before: granted, after: granted, validUntil: Fixture.at(30 * .day)),
      serverSnapshot: Sides(
        before: granted, after: .state(.offlineUnavailable(.snapshotTooOld)),
        validUntil: Fixture.at(2 * .day))),
    BoundaryCase(
      name: "rollback suspected only beyond the tolerance",
      info: Fixture.info(["pro": Fixture.monthly]),
      // Stored at T (device T + skew), so the device mark is that; the clock reads five minutes
      // before it.
      boundary: Fixture.at(-5 * .minute),
      conservative: Sides(
        before: .rollbackSuspected(true), after: .rollbackSuspected(false),
        validUntil: Fixture.at(30 * .day)),
      serverSnapshot: Sides(
        before: .rollbackSuspected(true), after: .rollbackSuspected(false),
        validUntil: Fixture.at(2 * .day))),
  ]

  /// One millisecond before, the boundary itself (half-open: the later side already holds),
  /// and one millisecond after, in server time.
  static func expectations(_ sides: Sides) -> [(offset: TimeInterval, probe: Probe)] {
    [(-0.001, sides.before), (0, sides.after), (0.001, sides.after)]
  }

  /// The device clock at server time `instant` for a device `skew` off, refreshed for `info`.
  static func deviceTime(_ instant: Date, skew: DeviceSkew) -> Date {
    instant.addingTimeInterval(skew.rawValue)
  }

  @Test("in memory", arguments: cases, Preset.allCases)
  func inMemory(_ testCase: BoundaryCase, _ preset: Preset) {
    let sides = testCase.sides(preset)
    for skew in DeviceSkew.allCases {
      let storedAt = Self.deviceTime(testCase.info.requestDate, skew: skew)
      for (offset, expected) in Self.expectations(sides) {
        let now = Self.deviceTime(testCase.boundary.addingTimeInterval(offset), skew: skew)
        let decision = Fixture.decide(
          "pro", in: testCase.info, storedAt: storedAt, now: now, policy: preset.policy)
        let evaluated = Fixture.evaluate(
          testCase.info, storedAt: storedAt, now: now, policy: preset.policy)
        check(testCase, skew, offset: offset, expected, decision, evaluated, sides)
      }
    }
  }

  @Test("read through SQLite", arguments: cases, Preset.allCases)
  func throughSQLite(_ testCase: BoundaryCase, _ preset: Preset) throws {
    for skew in DeviceSkew.allCases {
      let harness = try CacheHarness()
      try harness.store(testCase.info, at: Self.deviceTime(testCase.info.requestDate, skew: skew))
      for (offset, expected) in Self.expectations(testCase.sides(preset)) {
        harness.clock.set(
          Self.deviceTime(testCase.boundary.addingTimeInterval(offset), skew: skew))
        let decision = harness.cache.access(to: "pro", for: Fixture.scopeA, policy: preset.policy)
        let evaluated = try #require(
          try harness.cache.evaluatedCustomerInfo(for: Fixture.scopeA, policy: preset.policy))
        check(testCase, skew, offset: offset, expected, decision, evaluated, testCase.sides(preset))
      }
    }
  }

  private func check(
    _ testCase: BoundaryCase, _ skew: DeviceSkew, offset: TimeInterval, _ expected: Probe,
    _ decision: AccessDecision, _ evaluated: EvaluatedCustomerInfo, _ sides: Sides
  ) {
    let context = Comment(
      rawValue:
        "\(testCase.name), \(skew.testDescription), at boundary \(offset > 0 ? "+" : "")\(Int(offset * 1000)) ms"
    )
    #expect(expected.observed(in: decision, evaluated) == expected, context)
    // The evaluated view and the single decision must never disagree.
    #expect(evaluated.decisions["pro"] == decision, context)
    #expect(decision.evidence.freshness == evaluated.freshness, context)
    #expect(decision.evidence.clockOffset == Int(-skew.rawValue), context)
    // Server time is the probe's, except where the device clock reads before the refresh: it
    // never winds back past the refresh's requestDate.
    #expect(
      decision.evidence.estimatedServerTime
        == max(testCase.info.requestDate, testCase.boundary.addingTimeInterval(offset)), context)
    if offset < 0 {
      #expect(decision.evidence.validUntil == sides.validUntil, context)
    }
    // <doc:OfflineRules#Decisions>: a boundary that passed is the one the evidence names after a
    // denial by its own boundary; offlineUnavailable names none.
    if offset >= 0, case .state(let state) = expected {
      switch state {
      case .denied: #expect(decision.evidence.validUntil == testCase.boundary, context)
      case .offlineUnavailable: #expect(decision.evidence.validUntil == nil, context)
      case .granted, .deviceBlocked: break
      }
    }
  }
}
