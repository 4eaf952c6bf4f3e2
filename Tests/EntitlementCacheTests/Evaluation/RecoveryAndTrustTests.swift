import Foundation
import Testing

@testable import EntitlementCache

@Suite("Recovery hints and high trust (DESIGN §6)")
struct RecoveryAndTrustTests {
  typealias F = EvalFixture

  /// An entitlement for each kind of denial, keyed by what it is.
  static let deniedEntitlements: [String: EntitlementInfo] = [
    "expired": F.entitlement(.expired, expiresAt: F.at(-F.day)),
    "lapsed": F.entitlement(.active, expiresAt: F.at(F.minute)),
    "revoked": F.entitlement(.revoked),
    "billing": F.entitlement(.billingRetry),
    "window": F.entitlement(.active, verifiedAt: F.at(-31 * F.day)),
    "unknown": F.entitlement(.unknown("paused")),
    "shared": F.entitlement(.active, expiresAt: F.at(F.day), source: .known(.familyShared)),
  ]
  static let deniedKeys = deniedEntitlements.keys.sorted() + ["missing"]

  static var excludingFamily: OfflinePolicy {
    var policy = OfflinePolicy.conservative
    policy.excludeFamilyShared = true
    return policy
  }

  @Test(
    "denied, with an unclaimed purchase listing the key: its hint", arguments: ClaimHint.allCases)
  func deniedOffersTheHint(_ hint: ClaimHint) throws {
    let info = F.info(
      Self.deniedEntitlements.merging(["pro": F.monthly]) { $1 },
      unclaimed: [F.unclaimed(Self.deniedKeys + ["pro"], hint: .known(hint))])
    let now = F.at(F.hour)
    for key in Self.deniedKeys {
      let decision = F.decide(key, in: info, now: now, policy: Self.excludingFamily)
      guard case .denied = decision.state else {
        Issue.record("\(key) should be denied, is \(decision.state)")
        continue
      }
      #expect(decision.recovery == hint, "\(key)")
    }
    // Granted: nothing to recover.
    #expect(F.decide("pro", in: info, now: now, policy: Self.excludingFamily).recovery == nil)

    // The hint is stored with the key, so a read from the file offers the same.
    let harness = try CacheHarness()
    try harness.store(info)
    harness.clock.set(now)
    let reader = try harness.secondInstance()
    for key in Self.deniedKeys + ["pro"] {
      #expect(
        reader.access(to: key, for: Fixture.scopeA, policy: Self.excludingFamily)
          == F.decide(key, in: info, now: now, policy: Self.excludingFamily))
    }
  }

  @Test("no hint when the answer is not a denial")
  func noHintUnlessDenied() {
    let unclaimed = [F.unclaimed(["pro"], hint: .known(.loginRequired))]
    let expiringDevice = DeviceAccessInfo(status: .known(.active), expiresAt: F.at(F.minute))
    let blockedDevice = DeviceAccessInfo(status: .known(.blocked), reason: .known(.deviceReplaced))
    let decisions = [
      F.decide("pro", in: F.info(["pro": F.monthly], unclaimed: unclaimed), now: F.at(F.hour)),
      F.decide(
        "pro", in: F.info(["pro": F.monthly], unclaimed: unclaimed), now: F.at(3 * F.day),
        policy: .serverSnapshot),
      F.decide(
        "pro", in: F.info(["pro": F.monthly], unclaimed: unclaimed, deviceAccess: expiringDevice),
        now: F.at(F.hour)),
      F.decide(
        "pro", in: F.info(["pro": F.monthly], unclaimed: unclaimed, deviceAccess: blockedDevice),
        now: F.at(F.hour)),
    ]
    #expect(
      decisions.map(\.state) == [
        .granted, .offlineUnavailable(.snapshotTooOld), .offlineUnavailable(.deviceAccessExpired),
        .deviceBlocked(.known(.deviceReplaced)),
      ])
    #expect(decisions.allSatisfy { $0.recovery == nil })
  }

  @Test("a hint this build does not know is never offered; the first known one is")
  func unknownHints() {
    let now = F.at(F.hour)
    let onlyUnknown = F.info([:], unclaimed: [F.unclaimed(["pro"], hint: .unknown("call_us"))])
    #expect(F.decide("pro", in: onlyUnknown, now: now).recovery == nil)
    #expect(F.decide("pro", in: onlyUnknown, now: now).state == .denied(.notEntitled))

    let mixed = F.info(
      [:],
      unclaimed: [
        F.unclaimed(["pro"], hint: .unknown("call_us"), id: "tx_1"),
        F.unclaimed(["pro"], hint: .known(.supportRequired), id: "tx_2"),
        F.unclaimed(["pro"], hint: .known(.restoreRequired), id: "tx_3"),
      ])
    #expect(F.decide("pro", in: mixed, now: now).recovery == .supportRequired)
    // A purchase for another key says nothing about this one.
    let other = F.info([:], unclaimed: [F.unclaimed(["plus"], hint: .known(.restoreRequired))])
    #expect(F.decide("pro", in: other, now: now).recovery == nil)
  }

  /// Verification, computed offline, and whether the decision is high trust.
  static let trustTable: [(OpenEnum<VerificationStatus>, Bool, Bool)] = [
    (.known(.verified), false, true),
    (.known(.verifiedOnDevice), false, true),
    (.known(.failed), false, false),
    (.known(.notRequested), false, false),
    (.unknown("signed_twice"), false, false),
    (.known(.verified), true, false),
    (.known(.verifiedOnDevice), true, false),
    (.known(.failed), true, false),
    (.known(.notRequested), true, false),
  ]

  @Test("isHighTrust: granted, verified, not computed offline", arguments: trustTable)
  func highTrust(
    _ verification: OpenEnum<VerificationStatus>, _ computedOffline: Bool, _ highTrust: Bool
  ) throws {
    let info = F.info(
      ["pro": F.monthly, "gone": F.entitlement(.revoked)], verification: verification)
    let failedAt = computedOffline ? F.at(F.minute) : nil
    let decision = F.decide("pro", in: info, failedAt: failedAt, now: F.at(2 * F.minute))
    #expect(decision.state == .granted)
    #expect(decision.evidence.verification == verification)
    #expect(decision.evidence.isComputedOffline == computedOffline)
    #expect(decision.isHighTrust == highTrust)
    // Never for a decision that does not grant.
    #expect(!F.decide("gone", in: info, failedAt: failedAt, now: F.at(2 * F.minute)).isHighTrust)

    let harness = try CacheHarness()
    try harness.store(info)
    if let failedAt {
      harness.clock.set(failedAt)
      try harness.cache.recordRefreshFailure(for: Fixture.scopeA, reason: "timeout")
    }
    harness.clock.set(F.at(2 * F.minute))
    #expect(try harness.secondInstance().access(to: "pro", for: Fixture.scopeA) == decision)
  }
}
