import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A snapshot, a key and what each preset decides for it an hour after it was stored.
struct ReasonCase: Sendable, CustomTestStringConvertible {
  var name: String
  var info: CustomerInfo
  var key = "pro"
  var excludeFamilyShared = false
  var conservative: AccessState
  var serverSnapshot: AccessState

  func expected(_ preset: Preset) -> AccessState {
    switch preset {
    case .conservative: conservative
    case .serverSnapshot: serverSnapshot
    }
  }

  func policy(_ preset: Preset) -> OfflinePolicy {
    var policy = preset.policy
    policy.excludeFamilyShared = excludeFamilyShared
    return policy
  }

  var testDescription: String { name }
}

/// The denial and unavailable reasons of <doc:OfflineRules#Decisions>.
@Suite("Every denial and unavailable reason")
struct DecisionReasonTests {

  static let familyShared = Fixture.entitlement(
    .active, expiresAt: Fixture.at(30 * .day), source: .known(.familyShared))

  static let denials: [ReasonCase] = [
    ReasonCase(
      name: "a key the snapshot does not have", info: Fixture.info(["plus": Fixture.monthly]),
      conservative: .denied(.notEntitled), serverSnapshot: .denied(.notEntitled)),
    ReasonCase(
      name: "status expired, even before its expiresAt",
      info: Fixture.info(["pro": Fixture.entitlement(.expired, expiresAt: Fixture.at(.day))]
      ),
      conservative: .denied(.expired), serverSnapshot: .denied(.expired)),
    ReasonCase(
      name: "expiresAt passed by the device clock",
      info: Fixture.info([
        "pro": Fixture.entitlement(.active, expiresAt: Fixture.at(30 * .minute))
      ]),
      conservative: .denied(.expired), serverSnapshot: .granted),
    ReasonCase(
      name: "revoked before its expiresAt",
      info: Fixture.info(["pro": Fixture.entitlement(.revoked, expiresAt: Fixture.at(.day))]
      ),
      conservative: .denied(.revoked), serverSnapshot: .denied(.revoked)),
    ReasonCase(
      // Billing recovery, not premium: not even the perk model grants it.
      name: "billing_retry before its expiresAt",
      info: Fixture.info([
        "pro": Fixture.entitlement(.billingRetry, expiresAt: Fixture.at(.day))
      ]),
      conservative: .denied(.billingRetry), serverSnapshot: .denied(.billingRetry)),
    ReasonCase(
      name: "lifetime verified longer ago than the offline window",
      info: Fixture.info([
        "pro": Fixture.entitlement(.active, verifiedAt: Fixture.at(-30 * .day))
      ]),
      conservative: .denied(.offlineWindowElapsed), serverSnapshot: .granted),
    ReasonCase(
      // Only grace reads gracePeriodExpiresAt: on an active entitlement it is not an end date.
      name: "lifetime with a stray grace end still lapses by the offline window",
      info: Fixture.info([
        "pro": Fixture.entitlement(
          .active, graceEnd: Fixture.at(10 * .day), verifiedAt: Fixture.at(-30 * .day)
        )
      ]),
      conservative: .denied(.offlineWindowElapsed), serverSnapshot: .granted),
    ReasonCase(
      name: "grace with neither end date falls back to the offline window",
      info: Fixture.info([
        "pro": Fixture.entitlement(.grace, verifiedAt: Fixture.at(-30 * .day))
      ]),
      conservative: .denied(.offlineWindowElapsed), serverSnapshot: .granted),
    ReasonCase(
      name: "a status this build does not know",
      info: Fixture.info([
        "pro": Fixture.entitlement(.unknown("not_a_status_yet"), expiresAt: Fixture.at(.day))
      ]),
      conservative: .denied(.unknownStatus), serverSnapshot: .denied(.unknownStatus)),
    ReasonCase(
      name: "family-shared, policy excludes shared access",
      info: Fixture.info(["pro": familyShared]), excludeFamilyShared: true,
      conservative: .denied(.familySharingExcluded),
      serverSnapshot: .denied(.familySharingExcluded)),
    ReasonCase(
      name: "family-shared grants by default",
      info: Fixture.info(["pro": familyShared]),
      conservative: .granted, serverSnapshot: .granted),
    ReasonCase(
      name: "own purchase still grants when shared access is excluded",
      info: Fixture.info(["pro": Fixture.monthly]), excludeFamilyShared: true,
      conservative: .granted, serverSnapshot: .granted),
    ReasonCase(
      // The lapse is evidence of its own; exclusion only matters for usable access.
      name: "family-shared past expiresAt reads expired, not excluded",
      info: Fixture.info([
        "pro": Fixture.entitlement(
          .active, expiresAt: Fixture.at(.minute), source: .known(.familyShared))
      ]),
      excludeFamilyShared: true,
      conservative: .denied(.expired), serverSnapshot: .denied(.familySharingExcluded)),
    ReasonCase(
      name: "unknown source grants like any other",
      info: Fixture.info([
        "pro": Fixture.entitlement(
          .active, expiresAt: Fixture.at(.day), source: .unknown("gift_card"))
      ]),
      excludeFamilyShared: true, conservative: .granted, serverSnapshot: .granted),
  ]

  @Test("in memory and through SQLite", arguments: denials, Preset.allCases)
  func decision(_ testCase: ReasonCase, _ preset: Preset) throws {
    let now = Fixture.at(.hour)
    let policy = testCase.policy(preset)
    let memory = Fixture.decide(testCase.key, in: testCase.info, now: now, policy: policy)
    #expect(memory.state == testCase.expected(preset))
    #expect(memory.evidence.source == testCase.info.entitlements[testCase.key]?.source)

    let harness = try CacheHarness()
    try harness.store(testCase.info)
    harness.clock.set(now)
    let reader = try harness.secondInstance()
    #expect(reader.access(to: testCase.key, for: Fixture.scopeA, policy: policy) == memory)
  }

  @Test func everyDenialReasonIsCovered() {
    let covered = Set(
      Self.denials.flatMap { [$0.conservative, $0.serverSnapshot] }.compactMap { state in
        if case .denied(let reason) = state { reason } else { nil }
      })
    #expect(covered == Set(DenialReason.allCases))
  }

  @Test func everyStatusIsDecided() {
    let statuses = Set(
      Self.denials.flatMap { $0.info.entitlements.values.compactMap(\.status.knownValue) })
    #expect(statuses == Set(EntitlementStatus.allCases))
  }

  @Test("expired status: the validUntil is the server's expiresAt")
  func expiredStatusNamesItsBoundary() {
    let info = Fixture.info([
      "pro": Fixture.entitlement(.expired, expiresAt: Fixture.at(-.day))
    ])
    let decision = Fixture.decide("pro", in: info, now: Fixture.at(.hour))
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.validUntil == Fixture.at(-.day))
  }

  @Test("unknown status is kept as the server sent it, never rewritten", arguments: Preset.allCases)
  func unknownStatusIsKept(_ preset: Preset) {
    let info = Fixture.info([
      "pro": Fixture.entitlement(
        .unknown("not_a_status_yet"), expiresAt: Fixture.at(.minute))
    ])
    let evaluated = Fixture.evaluate(info, now: Fixture.at(.hour), policy: preset.policy)
    #expect(evaluated.customerInfo.entitlements["pro"]?.status == .unknown("not_a_status_yet"))
    #expect(evaluated.decisions["pro"]?.state == .denied(.unknownStatus))
    #expect(evaluated.activeEntitlementKeys.isEmpty)
  }

  @Test("lifetime without verifiedAt, in memory without serverTime: bounded by requestDate")
  func lifetimeFallsBackToRequestDateInMemory() {
    // An SDK evaluating a CustomerInfo it holds may give only storedAt; requestDate is in the
    // snapshot, and without it lifetime access would never end.
    let info = Fixture.info(["pro": Fixture.entitlement(.active, verifiedAt: nil)])
    let bookkeeping = ScopeBookkeeping(storedAt: Fixture.t0)
    let before = EntitlementEvaluator.decision(
      for: "pro", in: info, bookkeeping: bookkeeping, now: Fixture.at(30 * .day - 1))
    let after = EntitlementEvaluator.decision(
      for: "pro", in: info, bookkeeping: bookkeeping, now: Fixture.at(30 * .day))
    #expect(before.state == .granted)
    #expect(before.evidence.validUntil == Fixture.at(30 * .day))
    #expect(after.state == .denied(.offlineWindowElapsed))
    let evaluated = EntitlementEvaluator.evaluate(
      info, bookkeeping: bookkeeping, now: Fixture.at(30 * .day))
    #expect(evaluated.decisions["pro"] == after)
  }

  /// A server cannot have verified access after it answered. Counted from a `verifiedAt` a
  /// year past the `requestDate`, lifetime access held offline for 13 months, not 30 days.
  @Test("lifetime with a verifiedAt after the requestDate: bounded from the requestDate")
  func lifetimeWithAVerifiedAtAheadIsBoundedByRequestDate() throws {
    let info = Fixture.info([
      "pro": Fixture.entitlement(.active, verifiedAt: Fixture.at(365 * .day))
    ])
    let harness = try CacheHarness()
    try harness.store(info)
    let reader = try harness.secondInstance()
    for (now, granted) in [(30 * .day - 1, true), (30 * .day, false)] {
      harness.clock.set(Fixture.at(now))
      let memory = Fixture.decide("pro", in: info, now: Fixture.at(now), policy: .conservative)
      #expect(memory.isGranted == granted)
      #expect(memory.evidence.validUntil == Fixture.at(30 * .day))
      #expect(reader.access(to: "pro", for: Fixture.scopeA) == memory)
    }
  }

  /// Past its offline window, lifetime access is denied, and the evaluated CustomerInfo says
  /// so too: it read `active`, which code that gates on statuses alone (as raw data readers
  /// are told to: only `active` and valid `grace`) would have granted forever offline.
  @Test("lifetime past its offline window reads expired in the evaluated CustomerInfo")
  func lifetimePastItsWindowReadsExpired() throws {
    let info = Fixture.info(["pro": Fixture.entitlement(.active, verifiedAt: Fixture.t0)])
    let harness = try CacheHarness()
    try harness.store(info)
    let reader = try harness.secondInstance()
    for (now, status) in [(30 * .day - 1, "active"), (30 * .day, "expired")] {
      harness.clock.set(Fixture.at(now))
      let memory = EntitlementEvaluator.evaluate(
        info, bookkeeping: ScopeBookkeeping(storedAt: Fixture.t0), now: Fixture.at(now))
      #expect(memory.customerInfo.entitlements["pro"]?.status.rawValue == status)
      let stored = try #require(try reader.evaluatedCustomerInfo(for: Fixture.scopeA))
      #expect(stored.customerInfo.entitlements["pro"]?.status.rawValue == status)
      #expect(stored.decisions["pro"]?.isGranted == (status == "active"))
    }
  }

  /// A policy that requires verification leaves an unverified snapshot undecided; its view
  /// still shows what time alone ended, where it showed both keys `active` past their ends.
  @Test("an unverified snapshot under requireVerified shows lapsed keys expired")
  func unverifiedSnapshotShowsLapsedKeysExpired() {
    let info = Fixture.info(
      [
        "monthly": Fixture.entitlement(.active, expiresAt: Fixture.at(.day)),
        "lifetime": Fixture.entitlement(.active, verifiedAt: Fixture.t0),
      ], verification: .known(.notRequested))
    let policy = OfflinePolicy(requireVerified: true)
    for (now, status) in [(.day - 1, "active"), (30 * .day, "expired")] {
      let evaluated = EntitlementEvaluator.evaluate(
        info, bookkeeping: ScopeBookkeeping(storedAt: Fixture.t0), now: Fixture.at(now),
        policy: policy)
      #expect(evaluated.decisions["monthly"]?.state == .offlineUnavailable(.unverified))
      #expect(evaluated.customerInfo.entitlements["monthly"]?.status.rawValue == status)
      #expect(evaluated.customerInfo.entitlements["lifetime"]?.status.rawValue == status)
    }
  }

  // MARK: Unavailable

  @Test("no snapshot: nil CustomerInfo, nil bookkeeping, or bookkeeping without storedAt")
  func noSnapshotInMemory() {
    let info = Fixture.info(["pro": Fixture.monthly])
    let states = [
      EntitlementEvaluator.decision(
        for: "pro", in: nil, bookkeeping: Fixture.bookkeeping(for: info), now: Fixture.t0),
      EntitlementEvaluator.decision(for: "pro", in: info, bookkeeping: nil, now: Fixture.t0),
      EntitlementEvaluator.decision(
        for: "pro", in: info, bookkeeping: ScopeBookkeeping(storedAt: nil), now: Fixture.t0),
    ].map(\.state)
    #expect(states.allSatisfy { $0 == .offlineUnavailable(.noSnapshot) })
    let decision = EntitlementEvaluator.decision(
      for: "pro", in: nil, bookkeeping: nil, now: Fixture.t0)
    // Unknown is not "not entitled": nothing in the evidence pretends otherwise.
    #expect(decision.evidence == AccessEvidence())
    #expect(decision.recovery == nil && decision.device == nil && !decision.isHighTrust)
  }

  @Test("no snapshot through SQLite: nothing stored, or only a failed refresh")
  func noSnapshotThroughSQLite() throws {
    let harness = try CacheHarness()
    #expect(
      harness.cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot)
    )
    try harness.cache.recordRefreshFailure(for: Fixture.scopeA, reason: "offline")
    let decision = harness.cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .offlineUnavailable(.noSnapshot))
    #expect(harness.cache.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    #expect(try harness.cache.evaluatedCustomerInfo(for: Fixture.scopeA) == nil)
    #expect(try harness.secondInstance().access(to: "pro", for: Fixture.scopeA) == decision)
  }

  @Test("snapshot too old: every key, entitled or not, is unavailable")
  func snapshotTooOld() throws {
    var policy = OfflinePolicy.conservative
    policy.maxSnapshotAge = .day
    let info = Fixture.info([
      "pro": Fixture.monthly, "gone": Fixture.entitlement(.revoked),
      "paused": Fixture.entitlement(.unknown("x")),
    ])
    for preset in [policy, .serverSnapshot] {
      let now = Fixture.at(3 * .day)
      for key in ["pro", "gone", "paused", "missing"] {
        let decision = Fixture.decide(key, in: info, now: now, policy: preset)
        #expect(decision.state == .offlineUnavailable(.snapshotTooOld), "\(key)")
        #expect(decision.recovery == nil)
      }
    }
  }

  @Test("unreadable: a stored row that no longer decodes answers offlineUnavailable")
  func unreadable() throws {
    let harness = try CacheHarness()
    let blocked = DeviceAccessInfo(
      status: .known(.blocked), reason: .known(.deviceReplaced),
      devices: [DeviceSummary(id: "d_1", label: "iPhone")])
    try harness.store(Fixture.info(["pro": Fixture.monthly], deviceAccess: blocked))
    // Damage the device details the way an outside tool could; the library never writes this.
    let connection = try SQLiteConnection(path: harness.directory.path("cache.sqlite"))
    try connection.execute("UPDATE scope SET device_block = '{\"devices\": [{\"label\": 1}'")
    let reader = try harness.secondInstance()
    let decision = reader.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .offlineUnavailable(.unreadable))
    #expect(decision.evidence == AccessEvidence())
  }

  /// Every reason is produced by a constructed input, so a reason added without a way to
  /// reach it, or a rule that stops producing one, fails here.
  @Test func everyUnavailableReasonIsProducedByAnInput() throws {
    var produced: Set<UnavailableReason> = []
    func record(_ decision: AccessDecision) {
      if case .offlineUnavailable(let reason) = decision.state { produced.insert(reason) }
    }
    record(
      EntitlementEvaluator.decision(for: "pro", in: nil, bookkeeping: nil, now: Fixture.t0))
    record(
      Fixture.decide(
        "pro", in: Fixture.info(["pro": Fixture.monthly]), now: Fixture.at(3 * .day),
        policy: .serverSnapshot))
    record(
      Fixture.decide(
        "pro",
        in: Fixture.info(
          ["pro": Fixture.monthly],
          deviceAccess: DeviceAccessInfo(
            status: .known(.active), expiresAt: Fixture.at(.day))),
        now: Fixture.at(2 * .day)))
    var strict = OfflinePolicy.conservative
    strict.requireVerified = true
    record(
      Fixture.decide(
        "pro", in: Fixture.info(["pro": Fixture.monthly], verification: .known(.notRequested)),
        now: Fixture.at(.minute), policy: strict))
    let harness = try CacheHarness()
    try harness.store(
      Fixture.info(
        ["pro": Fixture.monthly],
        deviceAccess: DeviceAccessInfo(status: .known(.blocked), reason: .known(.deviceReplaced))))
    let connection = try SQLiteConnection(path: harness.directory.path("cache.sqlite"))
    try connection.execute("UPDATE scope SET device_block = 'not json'")
    record(try harness.secondInstance().access(to: "pro", for: Fixture.scopeA))
    // A file that is there but cannot be opened yet, as before a device's first unlock.
    let vfs = try TestVFS()
    vfs.armFault(.open, at: 1, persistent: true)
    var locked = CacheConfiguration()
    locked.vfsName = vfs.name
    let lockedCache = try SQLiteCustomerInfoCache(
      path: harness.directory.path("cache.sqlite"), configuration: locked,
      clock: ManualClock(Fixture.t0).cacheClock)
    record(lockedCache.access(to: "pro", for: Fixture.scopeA))
    // A file from a newer schema that changed what this build reads.
    let newerPath = harness.directory.path("newer.sqlite")
    let newer = try SQLiteConnection(path: newerPath)
    try newer.execute("CREATE TABLE future (x); PRAGMA user_version = 99")
    let newerCache = try SQLiteCustomerInfoCache(
      path: newerPath, clock: ManualClock(Fixture.t0).cacheClock)
    record(newerCache.access(to: "pro", for: Fixture.scopeA))
    #expect(produced == Set(UnavailableReason.allCases))
  }
}
