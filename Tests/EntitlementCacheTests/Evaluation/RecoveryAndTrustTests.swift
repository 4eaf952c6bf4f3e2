import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The recovery hint and `isHighTrust` of a decision (<doc:OfflineRules>).
@Suite("Recovery hints and high trust")
struct RecoveryAndTrustTests {

  /// An entitlement for each kind of denial, keyed by what it is.
  static let deniedEntitlements: [String: EntitlementInfo] = [
    "expired": Fixture.entitlement(.expired, expiresAt: Fixture.at(-.day)),
    "lapsed": Fixture.entitlement(.active, expiresAt: Fixture.at(.minute)),
    "revoked": Fixture.entitlement(.revoked),
    "billing": Fixture.entitlement(.billingRetry),
    "window": Fixture.entitlement(.active, verifiedAt: Fixture.at(-31 * .day)),
    "unknown": Fixture.entitlement(.unknown("not_a_status_yet")),
    "shared": Fixture.entitlement(
      .active, expiresAt: Fixture.at(.day), source: .known(.familyShared)),
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
    let info = Fixture.info(
      Self.deniedEntitlements.merging(["pro": Fixture.monthly]) { $1 },
      unclaimed: [Fixture.unclaimed(Self.deniedKeys + ["pro"], hint: .known(hint))])
    let now = Fixture.at(.hour)
    var reasons: Set<DenialReason> = []
    for key in Self.deniedKeys {
      let decision = Fixture.decide(key, in: info, now: now, policy: Self.excludingFamily)
      guard case .denied(let reason) = decision.state else {
        Issue.record("\(key) should be denied, is \(decision.state)")
        continue
      }
      reasons.insert(reason)
      #expect(decision.recovery == hint, "\(key)")
    }
    // Each kind of denial: a reason added to the enum needs an entitlement above.
    #expect(reasons == Set(DenialReason.allCases))
    // Granted: nothing to recover.
    #expect(Fixture.decide("pro", in: info, now: now, policy: Self.excludingFamily).recovery == nil)

    // The hint is stored with the key, so a read from the file offers the same.
    let harness = try CacheHarness()
    try harness.store(info)
    harness.clock.set(now)
    let reader = try harness.secondInstance()
    for key in Self.deniedKeys + ["pro"] {
      #expect(
        reader.access(to: key, for: Fixture.scopeA, policy: Self.excludingFamily)
          == Fixture.decide(key, in: info, now: now, policy: Self.excludingFamily))
    }
  }

  @Test("no hint when the answer is not a denial")
  func noHintUnlessDenied() {
    let unclaimed = [Fixture.unclaimed(["pro"], hint: .known(.loginRequired))]
    let expiringDevice = DeviceAccessInfo(
      status: .known(.active), expiresAt: Fixture.at(.minute))
    let blockedDevice = DeviceAccessInfo(status: .known(.blocked), reason: .known(.deviceReplaced))
    let decisions = [
      Fixture.decide(
        "pro", in: Fixture.info(["pro": Fixture.monthly], unclaimed: unclaimed),
        now: Fixture.at(.hour)),
      Fixture.decide(
        "pro", in: Fixture.info(["pro": Fixture.monthly], unclaimed: unclaimed),
        now: Fixture.at(3 * .day),
        policy: .serverSnapshot),
      Fixture.decide(
        "pro",
        in: Fixture.info(
          ["pro": Fixture.monthly], unclaimed: unclaimed, deviceAccess: expiringDevice),
        now: Fixture.at(.hour)),
      Fixture.decide(
        "pro",
        in: Fixture.info(
          ["pro": Fixture.monthly], unclaimed: unclaimed, deviceAccess: blockedDevice),
        now: Fixture.at(.hour)),
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
    let now = Fixture.at(.hour)
    let onlyUnknown = Fixture.info(
      [:], unclaimed: [Fixture.unclaimed(["pro"], hint: .unknown("call_us"))])
    #expect(Fixture.decide("pro", in: onlyUnknown, now: now).recovery == nil)
    #expect(Fixture.decide("pro", in: onlyUnknown, now: now).state == .denied(.notEntitled))

    let mixed = Fixture.info(
      [:],
      unclaimed: [
        Fixture.unclaimed(["pro"], hint: .unknown("call_us"), id: "tx_1"),
        Fixture.unclaimed(["pro"], hint: .known(.supportRequired), id: "tx_2"),
        Fixture.unclaimed(["pro"], hint: .known(.restoreRequired), id: "tx_3"),
      ])
    #expect(Fixture.decide("pro", in: mixed, now: now).recovery == .supportRequired)
    // A purchase for another key says nothing about this one.
    let other = Fixture.info(
      [:], unclaimed: [Fixture.unclaimed(["plus"], hint: .known(.restoreRequired))])
    #expect(Fixture.decide("pro", in: other, now: now).recovery == nil)
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
    let info = Fixture.info(
      ["pro": Fixture.monthly, "gone": Fixture.entitlement(.revoked)], verification: verification)
    let failedAt = computedOffline ? Fixture.at(.minute) : nil
    let decision = Fixture.decide(
      "pro", in: info, failedAt: failedAt, now: Fixture.at(2 * .minute))
    #expect(decision.state == .granted)
    #expect(decision.evidence.verification == verification)
    #expect(decision.evidence.isComputedOffline == computedOffline)
    #expect(decision.isHighTrust == highTrust)
    // Never for a decision that does not grant.
    #expect(
      !Fixture.decide("gone", in: info, failedAt: failedAt, now: Fixture.at(2 * .minute))
        .isHighTrust)

    let harness = try CacheHarness()
    try harness.store(info)
    if let failedAt {
      harness.clock.set(failedAt)
      try harness.cache.recordRefreshFailure(for: Fixture.scopeA, reason: "timeout")
    }
    harness.clock.set(Fixture.at(2 * .minute))
    #expect(try harness.secondInstance().access(to: "pro", for: Fixture.scopeA) == decision)
  }
}
