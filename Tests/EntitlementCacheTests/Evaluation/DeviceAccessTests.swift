import Foundation
import Testing

@testable import EntitlementCache

@Suite("Device Access (DESIGN §5.6)")
struct DeviceAccessTests {
  typealias F = EvalFixture

  /// Every reason the server can send, one it may add later, and none at all.
  static let reasons: [OpenEnum<DeviceBlockReason>?] =
    DeviceBlockReason.allCases.map { .known($0) } + [.unknown("DEVICE_ON_FIRE"), nil]

  static let budget = DeviceChangeBudget(
    remaining: 0, limit: 3, windowDays: 30, unknownFields: ["resetsAt": .string("later")])

  static func blocked(
    _ reason: OpenEnum<DeviceBlockReason>?, status: OpenEnum<DeviceAccessStatus> = .known(.blocked),
    expiresAt: Date? = EvalFixture.at(7 * EvalFixture.day)
  ) -> DeviceAccessInfo {
    DeviceAccessInfo(
      status: status, reason: reason, expiresAt: expiresAt, nextAllowedAt: F.at(2 * F.day),
      changeBudget: budget,
      devices: [
        DeviceSummary(
          id: "d_7f3a", label: "iPhone", lastSeenAt: F.at(-F.day),
          unknownFields: ["deviceToken": .string("SECRET-DEVICE-TOKEN")]),
        DeviceSummary(id: "d_91bc"),
      ])
  }

  /// The details as the decision must carry them: the server's redacted list, nothing the
  /// server added to it (it could hold tokens).
  static func expectedDetails(_ reason: OpenEnum<DeviceBlockReason>?) -> DeviceBlockDetails {
    DeviceBlockDetails(
      reason: reason, nextAllowedAt: F.at(2 * F.day),
      changeBudget: DeviceChangeBudget(remaining: 0, limit: 3, windowDays: 30),
      devices: [
        DeviceSummary(id: "d_7f3a", label: "iPhone", lastSeenAt: F.at(-F.day)),
        DeviceSummary(id: "d_91bc"),
      ])
  }

  @Test(
    "blocked: deviceBlocked with the server's reason and details, never denied",
    arguments: reasons, Preset.allCases)
  func blockedWithEachReason(_ reason: OpenEnum<DeviceBlockReason>?, _ preset: Preset) throws {
    // An unclaimed purchase for the key must not turn device trouble into "restore".
    let info = F.info(
      ["pro": F.monthly], unclaimed: [F.unclaimed(["pro"], hint: .known(.restoreRequired))],
      deviceAccess: Self.blocked(reason))
    let now = F.at(F.hour)
    let decision = F.decide("pro", in: info, now: now, policy: preset.policy)
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
    let info = F.info(["pro": F.monthly], deviceAccess: device)
    let decision = F.decide("pro", in: info, now: F.at(F.hour), policy: preset.policy)
    #expect(decision.state == .deviceBlocked(.known(.loginRequired)))
    #expect(decision.device == Self.expectedDetails(.known(.loginRequired)))
  }

  @Test("blocked, but the entitlement is not usable anyway: the commercial denial wins")
  func blockedWithoutCommercialAccess() {
    let device = Self.blocked(.known(.deviceReplaced))
    let cases: [(EntitlementInfo?, DenialReason)] = [
      (nil, .notEntitled),
      (F.entitlement(.revoked), .revoked),
      (F.entitlement(.billingRetry), .billingRetry),
      (F.entitlement(.active, expiresAt: F.at(F.minute)), .expired),
    ]
    for (entitlement, reason) in cases {
      let info = F.info(entitlement.map { ["pro": $0] } ?? [:], deviceAccess: device)
      let decision = F.decide("pro", in: info, now: F.at(F.hour))
      #expect(decision.state == .denied(reason))
      #expect(decision.device == nil)
    }
  }

  @Test("blocked is checked before the device expiry", arguments: Preset.allCases)
  func blockedBeforeExpiry(_ preset: Preset) {
    let info = F.info(
      ["pro": F.monthly],
      deviceAccess: Self.blocked(.known(.deviceReplaced), expiresAt: F.at(F.hour)))
    let decision = F.decide("pro", in: info, now: F.at(2 * F.hour), policy: preset.policy)
    #expect(decision.state == .deviceBlocked(.known(.deviceReplaced)))
  }

  @Test("the installation's boundary is the earlier of the entitlement's and the device's")
  func earliestBoundary() {
    let device = DeviceAccessInfo(status: .known(.active), expiresAt: F.at(F.day))
    // The device expiry comes first.
    let longer = F.info(
      ["pro": F.entitlement(.active, expiresAt: F.at(2 * F.day))], deviceAccess: device)
    #expect(F.decide("pro", in: longer, now: F.at(F.hour)).evidence.validUntil == F.at(F.day))
    // The entitlement's expiry comes first, and past it the entitlement reads expired.
    let shorter = F.info(
      ["pro": F.entitlement(.active, expiresAt: F.at(12 * F.hour))], deviceAccess: device)
    #expect(
      F.decide("pro", in: shorter, now: F.at(F.hour)).evidence.validUntil == F.at(12 * F.hour))
    #expect(F.decide("pro", in: shorter, now: F.at(13 * F.hour)).state == .denied(.expired))
    #expect(
      F.decide("pro", in: shorter, now: F.at(F.day)).state == .denied(.expired),
      "a lapsed entitlement is expired whatever the device says")
    // Lifetime access: the device expiry bounds what the offline window would allow.
    let lifetime = F.info(["pro": F.entitlement(.active)], deviceAccess: device)
    #expect(F.decide("pro", in: lifetime, now: F.at(F.hour)).evidence.validUntil == F.at(F.day))
    #expect(
      F.decide("pro", in: lifetime, now: F.at(F.day)).state
        == .offlineUnavailable(.deviceAccessExpired))
  }

  @Test("active device access without expiresAt adds no boundary", arguments: Preset.allCases)
  func activeWithoutExpiry(_ preset: Preset) {
    let info = F.info(["pro": F.monthly], deviceAccess: DeviceAccessInfo(status: .known(.active)))
    let decision = F.decide("pro", in: info, now: F.at(F.hour), policy: preset.policy)
    let withoutDevice = F.decide(
      "pro", in: F.info(["pro": F.monthly]), now: F.at(F.hour), policy: preset.policy)
    #expect(decision == withoutDevice)
    #expect(decision.state == .granted)
  }

  @Test("the perk model still honours the server-issued device expiry")
  func serverSnapshotHonoursDeviceExpiry() {
    // check-access-perks skips the device-clock comparison of expiresAt only; the device
    // authorization is the server's own bound on this installation (offline-access.txt).
    let info = F.info(
      ["pro": F.entitlement(.active, expiresAt: F.at(F.minute))],
      deviceAccess: DeviceAccessInfo(status: .known(.active), expiresAt: F.at(F.day)))
    #expect(F.decide("pro", in: info, now: F.at(F.hour), policy: .serverSnapshot).state == .granted)
    #expect(
      F.decide("pro", in: info, now: F.at(F.day), policy: .serverSnapshot).state
        == .offlineUnavailable(.deviceAccessExpired))
  }
}
