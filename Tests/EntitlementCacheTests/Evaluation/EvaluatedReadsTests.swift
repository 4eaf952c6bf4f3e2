import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

@Suite("EvaluatedCustomerInfo and the cache-level reads")
struct EvaluatedReadsTests {
  @Test(
    "the public effective device time is what a cache raises its mark to: set back, rebooted",
    arguments: [false, true])
  func effectiveDeviceTimeIsTheMarkARead(rebooted: Bool) throws {
    let clock = ManualClock(Fixture.t0, bootSession: "boot-1")
    let cache = InMemoryCustomerInfoCache(clock: clock.cacheClock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    clock.advance(by: .seconds(2 * .hour))
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    if rebooted { clock.reboot(session: "boot-2") }
    // Set back an hour: more than the tolerance behind the time a read already saw.
    clock.set(Fixture.at(.hour))
    let before = try #require(try cache.load(Fixture.scopeA)).bookkeeping
    let expected = EntitlementEvaluator.effectiveDeviceTime(
      now: clock.now, bookkeeping: before, bootInstant: clock.bootInstant)
    #expect(expected == Fixture.at(2 * .hour))
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark == expected)
    // Not rebooted, the boot clock still measures since the refresh: it runs on past the mark.
    clock.advance(by: .minute)
    let later = try #require(try cache.load(Fixture.scopeA)).bookkeeping
    let next = EntitlementEvaluator.effectiveDeviceTime(
      now: clock.now, bookkeeping: later, bootInstant: clock.bootInstant)
    #expect(next == (rebooted ? expected : Fixture.at(2 * .hour + .minute)))
    #expect(throws: CacheError.self) {
      try OfflinePolicy(staleAfter: .nan).validate(trustRoots: nil)
    }
    #expect(throws: CacheError.self) {
      try OfflinePolicy(requireVerified: true).validate(trustRoots: nil)
    }
    try OfflinePolicy.conservative.validate(trustRoots: nil)
  }

  @Test(
    "the evaluator refuses a policy the caches refuse: lifetime access 400 days on is unreadable, never granted",
    arguments: [Double.infinity, .nan, -1])
  func evaluatorRefusesWhatTheCacheRefuses(window: Double) throws {
    let info = Fixture.info([
      "lifetime": Fixture.entitlement(.active),
      "monthly": Fixture.entitlement(.active, expiresAt: Fixture.at(.day)),
    ])
    var policy = OfflinePolicy.conservative
    policy.nonExpiringMaxOfflineAge = window
    let later = Fixture.at(400 * .day)
    let harness = try CacheHarness()
    try harness.store(info)
    harness.clock.set(later)
    let cached = harness.cache.access(to: "lifetime", for: Fixture.scopeA, policy: policy)
    #expect(cached.state == .offlineUnavailable(.unreadable))
    let decided = Fixture.decide("lifetime", in: info, now: later, policy: policy)
    #expect(decided.state == cached.state)
    let evaluated = Fixture.evaluate(info, now: later, policy: policy)
    #expect(evaluated.decisions["lifetime"]?.state == .offlineUnavailable(.unreadable))
    #expect(evaluated.activeEntitlementKeys.isEmpty)
    #expect(evaluated.timeToNextBoundary == nil)
    // The view shows no more than a read: what lapsed reads expired.
    #expect(evaluated.customerInfo.entitlements["monthly"]?.status == .known(.expired))
    #expect(throws: CacheError.self) {
      try harness.cache.evaluatedCustomerInfo(for: Fixture.scopeA, policy: policy)
    }
  }

  /// One snapshot with an entitlement in every situation, stored at T.
  static let info = Fixture.info(
    [
      "pro": Fixture.entitlement(.active, expiresAt: Fixture.at(2 * .hour)),
      "grace": Fixture.entitlement(
        .grace, expiresAt: Fixture.at(-.day), graceEnd: Fixture.at(2 * .hour)),
      "lifetime": Fixture.entitlement(.active),
      "monthly": Fixture.monthly,
      "revoked": Fixture.entitlement(.revoked),
      "paused": Fixture.entitlement(
        .unknown("not_a_status_yet"), expiresAt: Fixture.at(.minute)),
    ],
    accessContext: AccessContext(
      token: AccessToken(rawValue: "SECRET"), expiresAt: Fixture.at(.hour)))

  @Test("lapsed entitlements read expired, the expired access context is gone")
  func evaluatedView() throws {
    let early = Fixture.evaluate(Self.info, now: Fixture.at(.minute))
    #expect(early.customerInfo == Self.info, "nothing lapsed yet: the snapshot as stored")
    #expect(early.activeEntitlementKeys == ["pro", "grace", "lifetime", "monthly"])
    #expect(Set(early.decisions.keys) == Set(Self.info.entitlements.keys))

    let later = Fixture.evaluate(Self.info, now: Fixture.at(3 * .hour))
    let statuses = later.customerInfo.entitlements.mapValues(\.status)
    #expect(statuses["pro"] == .known(.expired))
    #expect(statuses["grace"] == .known(.expired))
    #expect(statuses["lifetime"] == .known(.active))
    #expect(statuses["monthly"] == .known(.active))
    #expect(statuses["revoked"] == .known(.revoked))
    #expect(statuses["paused"] == .unknown("not_a_status_yet"))
    #expect(later.customerInfo.accessContext == nil)
    #expect(later.activeEntitlementKeys == ["lifetime", "monthly"])
    // Only the status changes: the server's other facts stay as they were.
    var expected = Self.info
    expected.entitlements["pro"]?.status = .known(.expired)
    expected.entitlements["grace"]?.status = .known(.expired)
    expected.accessContext = nil
    #expect(later.customerInfo == expected)
  }

  @Test(
    "the perk model keeps the server's status past expiresAt",
    arguments: [.hour, 3 * .hour])
  func serverSnapshotView(_ offset: TimeInterval) {
    let evaluated = Fixture.evaluate(Self.info, now: Fixture.at(offset), policy: .serverSnapshot)
    #expect(evaluated.customerInfo.entitlements["pro"]?.status == .known(.active))
    #expect(evaluated.activeEntitlementKeys == ["pro", "grace", "lifetime", "monthly"])
  }

  @Test("an entitlement past expiresAt reads expired even when the snapshot is too old")
  func lapsedInTooOldSnapshot() {
    var policy = OfflinePolicy.conservative
    policy.maxSnapshotAge = .day
    let evaluated = Fixture.evaluate(Self.info, now: Fixture.at(2 * .day), policy: policy)
    #expect(evaluated.decisions["pro"]?.state == .offlineUnavailable(.snapshotTooOld))
    #expect(evaluated.customerInfo.entitlements["pro"]?.status == .known(.expired))
    #expect(evaluated.customerInfo.entitlements["grace"]?.status == .known(.expired))
    #expect(evaluated.customerInfo.entitlements["monthly"]?.status == .known(.active))
    #expect(evaluated.activeEntitlementKeys.isEmpty)
  }

  // MARK: The cache

  @Test("access(to:), hasActiveEntitlement, activeEntitlementKeys, evaluatedCustomerInfo agree")
  func cacheReads() throws {
    let harness = try CacheHarness()
    let cache = harness.cache
    #expect(try cache.evaluatedCustomerInfo(for: Fixture.scopeA) == nil)
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    try harness.store(Self.info)

    for offset in [.minute, 3 * .hour, 31 * .day] {
      harness.clock.set(Fixture.at(offset))
      let memory = Fixture.evaluate(Self.info, now: Fixture.at(offset))
      for reader in [cache, try harness.secondInstance()] {
        let evaluated = try #require(try reader.evaluatedCustomerInfo(for: Fixture.scopeA))
        #expect(evaluated.customerInfo == memory.customerInfo)
        #expect(evaluated.decisions == memory.decisions)
        #expect(reader.activeEntitlementKeys(for: Fixture.scopeA) == memory.activeEntitlementKeys)
        for key in Self.info.entitlements.keys {
          #expect(reader.access(to: key, for: Fixture.scopeA) == memory.decisions[key])
          #expect(
            reader.hasActiveEntitlement(key, for: Fixture.scopeA)
              == memory.activeEntitlementKeys.contains(key))
        }
      }
    }
  }

  @Test("reads take the cache's policy unless given one")
  func configuredPolicy() throws {
    let harness = try CacheHarness { $0.policy = .serverSnapshot }
    try harness.store(Self.info)
    harness.clock.set(Fixture.at(3 * .hour))
    let cache = harness.cache
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(cache.hasActiveEntitlement("pro", for: Fixture.scopeA))
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA).contains("pro"))
    #expect(
      cache.access(to: "pro", for: Fixture.scopeA, policy: .conservative).state
        == .denied(.expired))
    #expect(
      !cache.activeEntitlementKeys(for: Fixture.scopeA, policy: .conservative).contains("pro"))
    let evaluated = try #require(
      try cache.evaluatedCustomerInfo(for: Fixture.scopeA, policy: .conservative))
    #expect(evaluated.customerInfo.entitlements["pro"]?.status == .known(.expired))
  }

  @Test("the handle bound to a scope reads and writes only that scope")
  func boundHandle() throws {
    let harness = try CacheHarness()
    let session = harness.cache.bound(to: Fixture.scopeA)
    let other = harness.cache.bound(to: Fixture.scopeB)
    try session.store(try CustomerInfoSnapshot(Self.info))
    harness.clock.set(Fixture.at(3 * .hour))

    #expect(session.access(to: "monthly").state == .granted)
    #expect(session.access(to: "pro").state == .denied(.expired))
    #expect(session.access(to: "pro", policy: .serverSnapshot).state == .granted)
    #expect(session.hasActiveEntitlement("monthly") && !session.hasActiveEntitlement("pro"))
    #expect(session.activeEntitlementKeys == ["lifetime", "monthly"])
    let evaluated = try #require(try session.evaluatedCustomerInfo())
    #expect(evaluated.customerInfo.entitlements["pro"]?.status == .known(.expired))
    #expect(
      try session.evaluatedCustomerInfo(policy: .serverSnapshot)?.customerInfo
        .entitlements["pro"]?.status == .known(.active))

    try session.recordRefreshFailure(reason: "offline")
    #expect(session.access(to: "monthly").evidence.freshness == .offline)
    #expect(session.access(to: "monthly").isGranted)

    // Switching users cannot read the previous user's access.
    #expect(other.access(to: "monthly").state == .offlineUnavailable(.noSnapshot))
    #expect(other.activeEntitlementKeys.isEmpty)
    #expect(try other.evaluatedCustomerInfo() == nil)
    #expect(try harness.cache.load(Fixture.scopeB) == nil)
  }
}
