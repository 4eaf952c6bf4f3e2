import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Device Access as a decision sees it (<doc:OfflineRules#Decisions>).
@Suite("Device Access")
struct DeviceAccessTests {

  /// Every reason the server can send, one it may add later, and none at all.
  static let reasons: [OpenEnum<DeviceBlockReason>?] =
    DeviceBlockReason.allCases.map { .known($0) } + [.unknown("DEVICE_ON_FIRE"), nil]

  static let budget = DeviceChangeBudget(
    remaining: 0, limit: 3, windowDays: 30, unknownFields: ["resetsAt": .string("later")])

  static func blocked(
    _ reason: OpenEnum<DeviceBlockReason>?, status: OpenEnum<DeviceAccessStatus> = .known(.blocked),
    expiresAt: Date? = Fixture.at(7 * .day)
  ) -> DeviceAccessInfo {
    DeviceAccessInfo(
      status: status, reason: reason, expiresAt: expiresAt,
      nextAllowedAt: Fixture.at(2 * .day),
      changeBudget: budget,
      devices: [
        DeviceSummary(
          id: "d_7f3a", label: "iPhone", lastSeenAt: Fixture.at(-.day),
          unknownFields: ["deviceToken": .string(SampleSnapshot.deviceToken)]),
        DeviceSummary(id: "d_91bc"),
      ])
  }

  /// The details as the decision must carry them: the server's redacted list, nothing the
  /// server added to it (it could hold tokens).
  static func expectedDetails(_ reason: OpenEnum<DeviceBlockReason>?) -> DeviceBlockDetails {
    DeviceBlockDetails(
      reason: reason, nextAllowedAt: Fixture.at(2 * .day),
      changeBudget: DeviceChangeBudget(remaining: 0, limit: 3, windowDays: 30),
      devices: [
        DeviceSummary(id: "d_7f3a", label: "iPhone", lastSeenAt: Fixture.at(-.day)),
        DeviceSummary(id: "d_91bc"),
      ])
  }

  @Test(
    "blocked: deviceBlocked with the server's reason and details, never denied",
    arguments: reasons, Preset.allCases)
  func blockedWithEachReason(_ reason: OpenEnum<DeviceBlockReason>?, _ preset: Preset) throws {
    // An unclaimed purchase for the key must not turn device trouble into "restore".
    let info = Fixture.info(
      ["pro": Fixture.monthly],
      unclaimed: [Fixture.unclaimed(["pro"], hint: .known(.restoreRequired))],
      deviceAccess: Self.blocked(reason))
    let now = Fixture.at(.hour)
    let decision = Fixture.decide("pro", in: info, now: now, policy: preset.policy)
    #expect(decision.state == .deviceBlocked(reason))
    #expect(decision.device == Self.expectedDetails(reason))
    #expect(decision.recovery == nil)
    #expect(!decision.isGranted && !decision.isHighTrust)

    let harness = try CacheHarness()
    try harness.store(info)
    harness.clock.set(now)
    #expect(harness.cache.access(to: "pro", for: Fixture.scopeA, policy: preset.policy) == decision)
    let reader = try harness.secondInstance()
    #expect(reader.access(to: "pro", for: Fixture.scopeA, policy: preset.policy) == decision)
    #expect(reader.activeEntitlementKeys(for: Fixture.scopeA, policy: preset.policy).isEmpty)
  }

  @Test("a device status this build does not know blocks", arguments: Preset.allCases)
  func unknownStatusBlocks(_ preset: Preset) {
    let device = Self.blocked(.known(.loginRequired), status: .unknown("suspended"))
    let info = Fixture.info(["pro": Fixture.monthly], deviceAccess: device)
    let decision = Fixture.decide(
      "pro", in: info, now: Fixture.at(.hour), policy: preset.policy)
    #expect(decision.state == .deviceBlocked(.known(.loginRequired)))
    #expect(decision.device == Self.expectedDetails(.known(.loginRequired)))
  }

  @Test("blocked, but the entitlement is not usable anyway: the commercial denial wins")
  func blockedWithoutCommercialAccess() {
    let device = Self.blocked(.known(.deviceReplaced))
    let cases: [(EntitlementInfo?, DenialReason)] = [
      (nil, .notEntitled),
      (Fixture.entitlement(.revoked), .revoked),
      (Fixture.entitlement(.billingRetry), .billingRetry),
      (Fixture.entitlement(.active, expiresAt: Fixture.at(.minute)), .expired),
    ]
    for (entitlement, reason) in cases {
      let info = Fixture.info(entitlement.map { ["pro": $0] } ?? [:], deviceAccess: device)
      let decision = Fixture.decide("pro", in: info, now: Fixture.at(.hour))
      #expect(decision.state == .denied(reason))
      #expect(decision.device == nil)
    }
  }

  @Test("blocked is checked before the device expiry", arguments: Preset.allCases)
  func blockedBeforeExpiry(_ preset: Preset) {
    let info = Fixture.info(
      ["pro": Fixture.monthly],
      deviceAccess: Self.blocked(.known(.deviceReplaced), expiresAt: Fixture.at(.hour)))
    let decision = Fixture.decide(
      "pro", in: info, now: Fixture.at(2 * .hour), policy: preset.policy)
    #expect(decision.state == .deviceBlocked(.known(.deviceReplaced)))
  }

  @Test("the installation's boundary is the earlier of the entitlement's and the device's")
  func earliestBoundary() {
    let device = DeviceAccessInfo(status: .known(.active), expiresAt: Fixture.at(.day))
    // The device expiry comes first.
    let longer = Fixture.info(
      ["pro": Fixture.entitlement(.active, expiresAt: Fixture.at(2 * .day))],
      deviceAccess: device)
    #expect(
      Fixture.decide("pro", in: longer, now: Fixture.at(.hour)).evidence.validUntil
        == Fixture.at(.day))
    // The entitlement's expiry comes first, and past it the entitlement reads expired.
    let shorter = Fixture.info(
      ["pro": Fixture.entitlement(.active, expiresAt: Fixture.at(12 * .hour))],
      deviceAccess: device)
    #expect(
      Fixture.decide("pro", in: shorter, now: Fixture.at(.hour)).evidence.validUntil
        == Fixture.at(12 * .hour))
    #expect(
      Fixture.decide("pro", in: shorter, now: Fixture.at(13 * .hour)).state
        == .denied(.expired))
    #expect(
      Fixture.decide("pro", in: shorter, now: Fixture.at(.day)).state == .denied(.expired),
      "a lapsed entitlement is expired whatever the device says")
    // Lifetime access: the device expiry bounds what the offline window would allow.
    let lifetime = Fixture.info(["pro": Fixture.entitlement(.active)], deviceAccess: device)
    #expect(
      Fixture.decide("pro", in: lifetime, now: Fixture.at(.hour)).evidence.validUntil
        == Fixture.at(.day))
    #expect(
      Fixture.decide("pro", in: lifetime, now: Fixture.at(.day)).state
        == .offlineUnavailable(.deviceAccessExpired))
  }

  @Test("active device access without expiresAt adds no boundary", arguments: Preset.allCases)
  func activeWithoutExpiry(_ preset: Preset) {
    let info = Fixture.info(
      ["pro": Fixture.monthly], deviceAccess: DeviceAccessInfo(status: .known(.active)))
    let decision = Fixture.decide(
      "pro", in: info, now: Fixture.at(.hour), policy: preset.policy)
    let withoutDevice = Fixture.decide(
      "pro", in: Fixture.info(["pro": Fixture.monthly]), now: Fixture.at(.hour),
      policy: preset.policy)
    #expect(decision == withoutDevice)
    #expect(decision.state == .granted)
  }

  @Test("the perk model still honours the server-issued device expiry")
  func serverSnapshotHonoursDeviceExpiry() {
    // The perk model skips the comparison of expiresAt only; the device authorization is the
    // server's own bound on this installation (<doc:OfflineRules>).
    let info = Fixture.info(
      ["pro": Fixture.entitlement(.active, expiresAt: Fixture.at(.minute))],
      deviceAccess: DeviceAccessInfo(status: .known(.active), expiresAt: Fixture.at(.day)))
    #expect(
      Fixture.decide("pro", in: info, now: Fixture.at(.hour), policy: .serverSnapshot).state
        == .granted)
    #expect(
      Fixture.decide("pro", in: info, now: Fixture.at(.day), policy: .serverSnapshot).state
        == .offlineUnavailable(.deviceAccessExpired))
  }
}
