import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

@Suite("Properties over seeded random snapshots and clocks")
struct EvaluationPropertyTests {

  /// Enough to reach every rule many times over (each seed asks about five keys, many at a
  /// boundary), small enough to stay well under two seconds; each seed reproduces alone.
  static let seeds: ClosedRange<UInt64> = 1...2_000

  static func decide(
    _ key: String, _ scenario: Scenario, now: Date, readMark: Date? = nil
  ) -> AccessDecision {
    EntitlementEvaluator.decision(
      for: key, in: scenario.info, bookkeeping: scenario.bookkeeping(readMark: readMark), now: now,
      policy: scenario.policy)
  }

  static func effectiveNow(_ scenario: Scenario, _ now: Date, readMark: Date? = nil) -> Date {
    max(now, scenario.bookkeeping(readMark: readMark).deviceHighWaterMark)
  }

  /// The server's time as the cache estimates it (<doc:TimeModel>), what server-issued boundaries
  /// are compared with: `requestDate` plus the device time elapsed since the store.
  static func serverNow(_ scenario: Scenario, _ now: Date, readMark: Date? = nil) -> Date {
    let elapsed = effectiveNow(scenario, now, readMark: readMark).timeIntervalSince(
      scenario.storedAt)
    return scenario.info.requestDate.addingTimeInterval(max(0, elapsed))
  }

  /// The device time at which the cache's estimate of the server's time is `serverTime`.
  static func deviceTime(_ scenario: Scenario, atServerTime serverTime: Date) -> Date {
    scenario.storedAt.addingTimeInterval(serverTime.timeIntervalSince(scenario.info.requestDate))
  }

  @Test("never granted at or past validUntil")
  func neverGrantedPastValidUntil() {
    for seed in Self.seeds {
      let scenario = Scenario(seed: seed)
      var random = ScenarioRNG(seed: ~seed)
      for key in Scenario.keys {
        let now = scenario.instant(&random)
        let decision = Self.decide(key, scenario, now: now)
        guard decision.isGranted, let validUntil = decision.evidence.validUntil else { continue }
        #expect(Self.serverNow(scenario, now) < validUntil, "\(scenario) \(key)")
        // And it is the real boundary, not just some later date: access holds up to it. The
        // boundary is in server time; the clock the cache reads is the device's.
        let boundary = Self.deviceTime(scenario, atServerTime: validUntil)
        #expect(
          Self.decide(key, scenario, now: boundary.addingTimeInterval(-0.001)).isGranted,
          "\(scenario) \(key) just before \(validUntil)")
        for later in [
          boundary, boundary.addingTimeInterval(random.seconds(1...(40 * .day))),
        ] {
          #expect(
            !Self.decide(key, scenario, now: later).isGranted, "\(scenario) \(key) at \(later)")
        }
      }
    }
  }

  @Test("moving the clock backwards never turns a denial into a grant")
  func clockBackNeverGrants() {
    for seed in Self.seeds {
      let scenario = Scenario(seed: seed)
      var random = ScenarioRNG(seed: ~seed)
      let first = scenario.instant(&random)
      // The read at `first` raises the mark, as the cache does in memory.
      let mark = Self.effectiveNow(scenario, first)
      let earlier = first.addingTimeInterval(-random.seconds(1...(40 * .day)))
      let later = first.addingTimeInterval(random.seconds(1...(40 * .day)))
      for key in Scenario.keys where !Self.decide(key, scenario, now: first).isGranted {
        let back = Self.decide(key, scenario, now: earlier, readMark: mark)
        #expect(!back.isGranted, "\(scenario) \(key): \(first) then \(earlier)")
        // Without the mark, only time moving forward: what ended stays ended.
        #expect(!Self.decide(key, scenario, now: later).isGranted, "\(scenario) \(key)")
      }
    }
  }

  @Test("no lack of evidence is ever reported as denied")
  func unknownIsNeverDenied() {
    for seed in Self.seeds {
      let scenario = Scenario(seed: seed)
      var random = ScenarioRNG(seed: ~seed)
      let now = scenario.instant(&random)
      let effective = Self.effectiveNow(scenario, now)
      let serverNow = Self.serverNow(scenario, now)
      for key in Scenario.keys {
        let decision = Self.decide(key, scenario, now: now)
        let context = Comment(rawValue: "\(scenario) \(key) at \(now): \(decision.state)")
        let none = EntitlementEvaluator.decision(
          for: key, in: nil, bookkeeping: nil, now: now, policy: scenario.policy)
        #expect(none.state == .offlineUnavailable(.noSnapshot), context)
        if let age = scenario.policy.maxSnapshotAge,
          effective >= scenario.storedAt.addingTimeInterval(age)
        {
          #expect(decision.state == .offlineUnavailable(.snapshotTooOld), context)
        }
        if case .denied(let reason) = decision.state {
          #expect(Self.justifies(reason, key, scenario, serverNow), context)
        }
        if case .offlineUnavailable(.deviceAccessExpired) = decision.state {
          #expect(scenario.info.deviceAccess?.expiresAt.map { $0 <= serverNow } == true, context)
        }
        checkInvariants(decision, key, scenario, now: now, context)
      }
    }
  }

  /// Whether the snapshot's own facts about the key justify denying it: the denial rests on
  /// evidence, never on its absence. A status that denies by itself justifies its own denial
  /// and no other (`StatusExpectations`); one that grants until a boundary is denied only for a
  /// boundary that passed, or a source the policy excludes.
  static func justifies(
    _ reason: DenialReason, _ key: String, _ scenario: Scenario, _ serverNow: Date
  ) -> Bool {
    let policy = scenario.policy
    guard let entitlement = scenario.info.entitlements[key] else { return reason == .notEntitled }
    guard let status = entitlement.status.knownValue else { return reason == .unknownStatus }
    if let denial = status.expectedDenial { return reason == denial }
    // The server-snapshot model compares no boundary of the entitlement's with the clock.
    let byDeviceClock = policy.expiryReference == .deviceClock
    switch reason {
    case .familySharingExcluded:
      return policy.excludeFamilyShared && entitlement.source == .known(.familyShared)
    case .expired:
      return byDeviceClock && Scenario.endDate(of: entitlement).map { serverNow >= $0 } == true
    case .offlineWindowElapsed:
      return byDeviceClock && Scenario.endDate(of: entitlement) == nil
        && serverNow >= scenario.offlineWindowEnd(of: entitlement)
    case .notEntitled, .revoked, .billingRetry, .unknownStatus:
      return false
    }
  }

  private func checkInvariants(
    _ decision: AccessDecision, _ key: String, _ scenario: Scenario, now: Date,
    _ context: Comment
  ) {
    let bookkeeping = scenario.bookkeeping()
    let offline = scenario.failedAt != nil
    // Only evidence grants: a known usable status, from a source the policy accepts, on an
    // installation the server lets use it.
    if decision.isGranted {
      let entitlement = scenario.info.entitlements[key]
      #expect(entitlement?.status.knownValue?.grantsUntilItsBoundary == true, context)
      #expect(
        !(scenario.policy.excludeFamilyShared && entitlement?.source == .known(.familyShared)),
        context)
      #expect([nil, .known(.active)].contains(scenario.info.deviceAccess?.status), context)
    }
    if let hint = decision.recovery {
      #expect(decision.state.isDenial, context)
      let first = scenario.info.unclaimedPurchases.first {
        $0.entitlements.contains(key) && $0.claimHint.knownValue != nil
      }
      #expect(first?.claimHint == .known(hint), context)
    }
    if case .deviceBlocked = decision.state {
      #expect(decision.device != nil, context)
      #expect(scenario.info.deviceAccess?.status != .known(.active), context)
    } else {
      #expect(decision.device == nil, context)
    }
    let verified = scenario.info.verification.knownValue?.expectedHighTrust == true
    #expect(decision.isHighTrust == (decision.isGranted && verified && !offline), context)
    #expect(
      decision.evidence.clockRollbackSuspected
        == (now
          < bookkeeping.deviceHighWaterMark.addingTimeInterval(
            -scenario.policy.clockRollbackTolerance)),
      context)
    // Freshness (<doc:OfflineRules>), whatever the decision.
    let age = max(now, bookkeeping.deviceHighWaterMark).timeIntervalSince(scenario.storedAt)
    let freshness: Freshness =
      offline ? .offline : age < scenario.policy.staleAfter ? .fresh : .stale
    #expect(decision.evidence.freshness == freshness, context)
    #expect(decision.evidence.isComputedOffline == offline, context)
    #expect(decision.evidence.storedAt == scenario.storedAt, context)
    // The whole-snapshot view decides every key exactly as the single read does.
    if scenario.info.entitlements[key] != nil {
      let evaluated = EntitlementEvaluator.evaluate(
        scenario.info, bookkeeping: bookkeeping, now: now, policy: scenario.policy)
      #expect(evaluated.decisions[key] == decision, context)
    }
  }
}

extension AccessState {
  var isDenial: Bool {
    if case .denied = self { true } else { false }
  }
}
