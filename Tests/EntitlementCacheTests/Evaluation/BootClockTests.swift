import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The boot clock of the time model (<doc:TimeModel>): in the boot session of the refresh, the time
/// since the refresh is the boot clock's, whatever the wall clock says; in any other session, or
/// for a refresh stored without a boot clock, the offset rule (the wall clock guarded by the device
/// mark) applies.
///
/// Every case runs through the SQLite cache (the instance that wrote, which answers from
/// memory, and the evaluated view) and through the pure evaluator with the bookkeeping the
/// file holds, and both must agree.
@Suite("Boot clock: in the refresh's boot session the wall clock is moot")
struct BootClockTests {

  static let scope = Fixture.scopeA

  /// The boot clock at the refresh: the device has been up an hour. A whole number of
  /// milliseconds, and a binary fraction, so `uptime + elapsed - uptime` is exact at a boundary.
  static let uptime: TimeInterval = .hour + 0.25

  /// The reading the refresh records in the first boot session.
  static let refreshBoot = BootInstant(session: "boot-1", sinceBoot: uptime)

  /// A subscription that ends one day after the refresh.
  static let daily = Fixture.info([
    "pro": Fixture.entitlement(.active, expiresAt: Fixture.at(.day))
  ])

  /// A cache on a throw-away file and a manual clock with a boot clock, up for ``uptime``, its
  /// wall clock at T.
  struct Harness {
    let directory: TemporaryDirectory
    let clock: ManualClock
    let cache: SQLiteCustomerInfoCache

    init(bootSession: String? = "boot-1") throws {
      directory = try TemporaryDirectory()
      clock = ManualClock(Fixture.t0, bootSession: bootSession)
      clock.advance(by: .seconds(BootClockTests.uptime))
      clock.set(Fixture.t0)
      cache = try Fixture.cache(in: directory, clock: clock)
    }

    func store(_ info: CustomerInfo) throws {
      try cache.store(try CustomerInfoSnapshot(info), for: BootClockTests.scope)
    }

    /// Another instance on the same file and clock, as another process of the same boot
    /// would open it: nothing resident, every read goes to the file.
    func reopen() throws -> SQLiteCustomerInfoCache {
      try Fixture.cache(in: directory, clock: clock)
    }
  }

  // MARK: Boundaries on the boot clock

  /// What a case observes on either side of its boundary.
  enum Observation: Hashable, Sendable {
    case state(AccessState)
    case freshness(Freshness)
    case accessContextPresent(Bool)

    /// The same kind of observation, read from a decision and the evaluated view.
    func observed(in decision: AccessDecision, _ evaluated: EvaluatedCustomerInfo?) -> Self {
      switch self {
      case .state: .state(decision.state)
      case .freshness: .freshness(decision.evidence.freshness ?? .stale)
      case .accessContextPresent:
        .accessContextPresent(evaluated?.customerInfo.accessContext != nil)
      }
    }
  }

  /// One boundary: a snapshot whose `requestDate` is T, the time after the refresh at which
  /// it falls, and what a read of `pro` shows before it and from it on.
  struct BoundaryCase: Sendable, CustomTestStringConvertible {
    var name: String
    var info: CustomerInfo
    var preset: Preset
    var elapsed: TimeInterval
    var before: Observation
    var after: Observation

    var testDescription: String { "\(name) (\(preset.rawValue))" }
  }

  static let monthly = Fixture.entitlement(.active, expiresAt: Fixture.at(30 * .day))

  static let boundaries: [BoundaryCase] = [
    BoundaryCase(
      name: "expiresAt", info: daily, preset: .conservative, elapsed: .day,
      before: .state(.granted), after: .state(.denied(.expired))),
    BoundaryCase(
      name: "lifetime until verifiedAt + nonExpiringMaxOfflineAge",
      info: Fixture.info([
        "pro": Fixture.entitlement(.active, verifiedAt: Fixture.at(-29 * .day))
      ]),
      preset: .conservative, elapsed: .day,
      before: .state(.granted), after: .state(.denied(.offlineWindowElapsed))),
    BoundaryCase(
      name: "deviceAccess.expiresAt",
      info: Fixture.info(
        ["pro": monthly],
        deviceAccess: DeviceAccessInfo(status: .known(.active), expiresAt: Fixture.at(.day))),
      preset: .serverSnapshot, elapsed: .day,
      before: .state(.granted), after: .state(.offlineUnavailable(.deviceAccessExpired))),
    BoundaryCase(
      name: "accessContext.expiresAt",
      info: Fixture.info(
        ["pro": monthly],
        accessContext: AccessContext(
          token: AccessToken(rawValue: "T0K3N"), expiresAt: Fixture.at(15 * .minute))),
      preset: .conservative, elapsed: 15 * .minute,
      before: .accessContextPresent(true), after: .accessContextPresent(false)),
    BoundaryCase(
      name: "staleAfter", info: Fixture.info(["pro": monthly]), preset: .conservative,
      elapsed: 5 * .minute, before: .freshness(.fresh), after: .freshness(.stale)),
    BoundaryCase(
      name: "maxSnapshotAge", info: Fixture.info(["pro": monthly]), preset: .serverSnapshot,
      elapsed: 2 * .day,
      before: .state(.granted), after: .state(.offlineUnavailable(.snapshotTooOld))),
  ]

  /// How the wall clock is moved around the refresh, 20 days at a time, within one boot.
  enum WallClockMove: CaseIterable, Sendable, CustomTestStringConvertible {
    /// Right at the refresh, set back after it: the offset rule would extend every boundary
    /// by nothing at all, the boot clock keeps counting.
    case backAfterRefresh
    /// Right at the refresh, set forward after it: the offset rule would end every boundary
    /// 20 days early.
    case forwardAfterRefresh
    /// Set back before the refresh (issue 9), corrected after it: the offset rule would end
    /// every boundary 20 days early.
    case backBeforeRefreshRightAfter

    /// The wall clock at the refresh, and right after it.
    var walls: (atRefresh: Date, afterRefresh: Date) {
      switch self {
      case .backAfterRefresh: (Fixture.t0, Fixture.at(-20 * .day))
      case .forwardAfterRefresh: (Fixture.t0, Fixture.at(20 * .day))
      case .backBeforeRefreshRightAfter: (Fixture.at(-20 * .day), Fixture.t0)
      }
    }

    var testDescription: String {
      switch self {
      case .backAfterRefresh: "wall clock 20 d back after the refresh"
      case .forwardAfterRefresh: "wall clock 20 d forward after the refresh"
      case .backBeforeRefreshRightAfter: "wall clock 20 d back at the refresh, right after"
      }
    }
  }

  @Test(
    "1 ms before, at and after each boundary on the boot clock, whatever the wall clock says",
    arguments: boundaries, WallClockMove.allCases)
  func boundaryOnTheBootClock(_ boundary: BoundaryCase, _ move: WallClockMove) throws {
    let policy = boundary.preset.policy
    for offset in [-0.001, 0, 0.001] {
      // One cache per instant: the boot clock only moves forward, and one step from the
      // refresh keeps `uptime + elapsed - uptime` on the boundary exactly.
      let harness = try Harness()
      harness.clock.set(move.walls.atRefresh)
      try harness.store(boundary.info)
      harness.clock.set(move.walls.afterRefresh)
      harness.clock.advance(by: .seconds(boundary.elapsed + offset))
      let expected = offset < 0 ? boundary.before : boundary.after
      let context = Comment(rawValue: "\(boundary.testDescription), \(move), \(offset) s")

      let decision = harness.cache.access(to: "pro", for: Self.scope, policy: policy)
      let evaluated = try harness.cache.evaluatedCustomerInfo(for: Self.scope, policy: policy)
      #expect(expected.observed(in: decision, evaluated) == expected, context)
      #expect(evaluated?.decisions["pro"] == decision, context)
      // The estimate of the server's clock is the refresh's `requestDate` plus the boot
      // clock's elapsed time, to the rounding of that one subtraction.
      let estimate = decision.evidence.estimatedServerTime ?? .distantPast
      #expect(
        abs(estimate.timeIntervalSince(Fixture.t0) - (boundary.elapsed + offset)) < 1e-6, context)
      if offset == 0 { #expect(estimate == Fixture.at(boundary.elapsed), context) }
      // A diagnostic only: the wall clock behind the device mark still says so.
      #expect(decision.evidence.clockRollbackSuspected == (move == .backAfterRefresh), context)

      // The pure evaluator, with the bookkeeping the store wrote, agrees.
      let wall = move.walls.atRefresh
      let bookkeeping = ScopeBookkeeping(
        storedAt: wall, serverTime: Fixture.t0, lastRefreshAttemptAt: wall,
        deviceHighWaterMark: wall,
        refreshBootInstant: Self.refreshBoot)
      let memory = EntitlementEvaluator.decision(
        for: "pro", in: boundary.info, bookkeeping: bookkeeping, now: harness.clock.now,
        bootInstant: harness.clock.bootInstant, policy: policy)
      let memoryView = EntitlementEvaluator.evaluate(
        boundary.info, bookkeeping: bookkeeping, now: harness.clock.now,
        bootInstant: harness.clock.bootInstant, policy: policy)
      #expect(memory == decision, context)
      #expect(expected.observed(in: memory, memoryView) == expected, context)
      #expect(memoryView.decisions["pro"] == memory, context)
      #expect(memoryView.estimatedServerTime == estimate, context)
    }
  }

  // MARK: Another boot

  @Test("a new boot session: the offset rule, the wall clock guarded by the device mark")
  func rebootFallsBackToTheOffsetRule() throws {
    let harness = try Harness()
    try harness.store(Self.daily)
    let clock = harness.clock
    let cache = harness.cache
    // In the refresh's session the wall clock set back changes nothing.
    clock.set(Fixture.at(-20 * .day))
    clock.advance(by: .seconds(.hour))
    #expect(
      cache.access(to: "pro", for: Self.scope).evidence.estimatedServerTime
        == Fixture.at(.hour))

    clock.reboot(session: "boot-2")
    clock.set(Fixture.t0)
    clock.advance(by: .seconds(2 * .hour))
    // The new boot's clock cannot measure since the refresh: the wall clock (T+2h) can.
    let rebooted = cache.access(to: "pro", for: Self.scope)
    #expect(rebooted.state == .granted)
    #expect(rebooted.evidence.estimatedServerTime == Fixture.at(2 * .hour))
    #expect(Self.memoryDecision(cache, clock, mark: Fixture.t0) == rebooted)

    // Set back now, the mark holds what the read just saw; suspected, not extended.
    clock.set(Fixture.at(-20 * .day))
    let setBack = cache.access(to: "pro", for: Self.scope)
    #expect(setBack.evidence.estimatedServerTime == Fixture.at(2 * .hour))
    #expect(setBack.evidence.clockRollbackSuspected)
    #expect(Self.memoryDecision(cache, clock, mark: Fixture.at(2 * .hour)) == setBack)

    // Forward past the end by the wall clock alone, which the boot clock no longer
    // contradicts: expired, and the mark keeps it so when the clock is set back again.
    clock.set(Fixture.at(.day))
    #expect(cache.access(to: "pro", for: Self.scope).state == .denied(.expired))
    clock.set(Fixture.t0)
    let after = cache.access(to: "pro", for: Self.scope)
    #expect(after.state == .denied(.expired))
    #expect(after.evidence.estimatedServerTime == Fixture.at(.day))
    #expect(Self.memoryDecision(cache, clock, mark: Fixture.at(.day)) == after)
    // And the file, read by another instance of the new boot, says the same.
    try cache.flush()
    let reopened = try harness.reopen()
    #expect(reopened.access(to: "pro", for: Self.scope) == after)
    let view = try #require(try reopened.evaluatedCustomerInfo(for: Self.scope))
    #expect(view.estimatedServerTime == Fixture.at(.day))
    #expect(view.customerInfo.entitlements["pro"]?.status == .known(.expired))
  }

  /// What the boot clock measured in the refresh's session outlives a reboot: the read that
  /// saw pro expire by the boot clock raised the device mark to the device time it measured,
  /// so after the reboot the wall clock, still set back, cannot grant it again (found by the
  /// property test's review of the first boot-clock rule, which kept wall-clock times only).
  @Test("a reboot keeps what the boot clock measured: an expiry seen stays seen")
  func rebootKeepsTheBootClocksMeasure() throws {
    let harness = try Harness()
    try harness.store(Self.daily)
    let clock = harness.clock
    clock.set(Fixture.at(-20 * .day))
    clock.advance(by: .seconds(2 * .day))
    let expired = harness.cache.access(to: "pro", for: Self.scope)
    #expect(expired.state == .denied(.expired))
    #expect(expired.evidence.estimatedServerTime == Fixture.at(2 * .day))
    // The wall clock is 20 days behind what the boot clock measured: that is a rollback.
    #expect(expired.evidence.clockRollbackSuspected)

    clock.reboot(session: "boot-2")
    let rebooted = harness.cache.access(to: "pro", for: Self.scope)
    #expect(rebooted.state == .denied(.expired))
    #expect(rebooted.evidence.estimatedServerTime == Fixture.at(2 * .day))
    #expect(rebooted.evidence.clockRollbackSuspected)
    // Persisted, it holds for another process of the new boot too.
    try harness.cache.flush()
    #expect(try harness.reopen().access(to: "pro", for: Self.scope).state == .denied(.expired))
  }

  /// The other direction: a wall clock set a year forward in the refresh's boot session, by a
  /// person or a glitch, is no device time a decision used, since the boot clock said what
  /// time it was. Neither a read nor a failed refresh attempt raises the mark to it, so once
  /// the clock is put right nothing reads as set back, and after a reboot access the boot
  /// clock showed valid stays valid (found by an SDK author's try: the mark kept the year, and
  /// the reboot denied `pro` until the next refresh).
  @Test(
    "a wall clock set forward in the refresh's boot session is no time seen, even after a reboot",
    arguments: [false, true])
  func wallClockForwardInTheBootSession(inMemory: Bool) throws {
    let harness = try Harness()
    let clock = harness.clock
    let cache: any CustomerInfoCache =
      inMemory ? InMemoryCustomerInfoCache(clock: clock.cacheClock) : harness.cache
    try cache.store(try CustomerInfoSnapshot(Self.daily), for: Self.scope)

    clock.set(Fixture.at(365 * .day))
    let forward = cache.access(to: "pro", for: Self.scope)
    #expect(forward.state == .granted)
    #expect(forward.evidence.estimatedServerTime == Fixture.t0)
    try cache.recordRefreshFailure(for: Self.scope, reason: "timeout")
    #expect(try cache.load(Self.scope)?.bookkeeping.deviceHighWaterMark == Fixture.t0)

    // Put right an hour later: nothing was set back.
    clock.set(Fixture.t0)
    clock.advance(by: .seconds(.hour))
    let putRight = cache.access(to: "pro", for: Self.scope)
    #expect(putRight.state == .granted)
    #expect(!putRight.evidence.clockRollbackSuspected)

    clock.reboot(session: "boot-2")
    let rebooted = cache.access(to: "pro", for: Self.scope)
    #expect(rebooted.state == .granted)
    #expect(rebooted.evidence.estimatedServerTime == Fixture.at(.hour))
    #expect(!rebooted.evidence.clockRollbackSuspected)
    #expect(
      try cache.load(Self.scope)?.bookkeeping.deviceHighWaterMark == Fixture.at(.hour))
    if !inMemory {
      try harness.cache.flush()
      #expect(try harness.reopen().access(to: "pro", for: Self.scope).state == .granted)
    }
  }

  /// The pure evaluator's decision for ``daily`` stored at T in the first boot, with a device
  /// mark at `mark`.
  static func memoryDecision(
    _ cache: SQLiteCustomerInfoCache, _ clock: ManualClock, mark: Date
  ) -> AccessDecision {
    EntitlementEvaluator.decision(
      for: "pro", in: daily,
      bookkeeping: ScopeBookkeeping(
        storedAt: Fixture.t0, serverTime: Fixture.t0, lastRefreshAttemptAt: Fixture.t0,
        deviceHighWaterMark: mark,
        refreshBootInstant: refreshBoot),
      now: clock.now, bootInstant: clock.bootInstant, policy: cache.configuration.policy)
  }

  // MARK: Another instance, the same boot

  @Test("a cache reopened on the same file in the same boot session keeps to the boot clock")
  func reopenedCacheKeepsTheBootClock() throws {
    let harness = try Harness()
    try harness.store(Self.daily)
    harness.clock.set(Fixture.at(-20 * .day))
    harness.clock.advance(by: .seconds(.day - 1))
    let writer = harness.cache
    let reopened = try harness.reopen()
    // The reading is in the file (refresh_boot_session, refresh_boot_uptime), so an instance
    // with nothing resident measures on the boot clock too, and answers exactly as the writer.
    let stored = try #require(try reopened.load(Self.scope)).bookkeeping
    #expect(stored.refreshBootInstant == Self.refreshBoot)
    let before = reopened.access(to: "pro", for: Self.scope)
    #expect(before.state == .granted)
    #expect(before.evidence.estimatedServerTime == Fixture.at(.day - 1))
    #expect(writer.access(to: "pro", for: Self.scope) == before)

    harness.clock.advance(by: .seconds(1))
    let expired = reopened.access(to: "pro", for: Self.scope)
    #expect(expired.state == .denied(.expired))
    #expect(expired.evidence.estimatedServerTime == Fixture.at(.day))
    #expect(writer.access(to: "pro", for: Self.scope) == expired)
    // A third instance, opened after both, as well.
    #expect(try harness.reopen().access(to: "pro", for: Self.scope) == expired)
  }

  // MARK: No boot clock at the refresh

  /// Clocks that have no boot clock.
  enum ClockWithoutBoot: CaseIterable, Sendable, CustomTestStringConvertible {
    /// What the command-line tool's `--now` uses.
    case fixed
    /// A test clock made without a boot session.
    case manualWithoutSession

    var testDescription: String {
      switch self {
      case .fixed: "CacheClock.fixed"
      case .manualWithoutSession: "ManualClock without a boot session"
      }
    }
  }

  @Test(
    "a refresh stored without a boot clock never uses one, even read with one",
    arguments: ClockWithoutBoot.allCases)
  func refreshWithoutBootClock(_ writerClock: ClockWithoutBoot) throws {
    let directory = try TemporaryDirectory()
    let cacheClock: CacheClock
    switch writerClock {
    case .fixed: cacheClock = .fixed(Fixture.t0)
    case .manualWithoutSession: cacheClock = ManualClock(Fixture.t0).cacheClock
    }
    #expect(cacheClock.bootInstant() == nil)
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    let writer = try SQLiteCustomerInfoCache(
      path: directory.path("cache.sqlite"), configuration: configuration, clock: cacheClock)
    try writer.store(try CustomerInfoSnapshot(Self.daily), for: Self.scope)
    #expect(try writer.load(Self.scope)?.bookkeeping.refreshBootInstant == nil)

    // Read by a process with a boot clock, two days of it later, the wall clock set back.
    let clock = ManualClock(Fixture.t0, bootSession: "boot-1")
    let reader = try Fixture.cache(in: directory, clock: clock)
    clock.advance(by: .seconds(2 * .day))
    clock.set(Fixture.at(-20 * .day))
    let decision = reader.access(to: "pro", for: Self.scope)
    // Nothing to measure from: the offset rule, which cannot see the two days.
    #expect(decision.state == .granted)
    #expect(decision.evidence.estimatedServerTime == Fixture.t0)
    #expect(decision.evidence.clockRollbackSuspected)
    let memory = EntitlementEvaluator.decision(
      for: "pro", in: Self.daily,
      bookkeeping: ScopeBookkeeping(
        storedAt: Fixture.t0, serverTime: Fixture.t0, lastRefreshAttemptAt: Fixture.t0),
      now: clock.now, bootInstant: clock.bootInstant)
    #expect(memory == decision)
    // The wall clock forward: the offset rule ends it.
    clock.set(Fixture.at(.day))
    #expect(reader.access(to: "pro", for: Self.scope).state == .denied(.expired))

    // The next refresh, from the process with the boot clock, records a reading: from then on
    // the wall clock is moot again.
    clock.set(Fixture.t0)
    try reader.store(try CustomerInfoSnapshot(Self.daily), for: Self.scope)
    #expect(
      try reader.load(Self.scope)?.bookkeeping.refreshBootInstant
        == BootInstant(session: "boot-1", sinceBoot: 2 * .day))
    clock.set(Fixture.at(-20 * .day))
    clock.advance(by: .seconds(.day))
    #expect(reader.access(to: "pro", for: Self.scope).state == .denied(.expired))
  }

  // MARK: What the file keeps

  @Test("load(_:) holds the boot reading truncated to milliseconds, as memory does")
  func readingTruncatedToMilliseconds() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.t0, bootSession: "boot-7")
    clock.advance(by: .seconds(1_234.567_89))
    clock.set(Fixture.t0)
    let writer = try Fixture.cache(in: directory, clock: clock)
    try writer.store(try CustomerInfoSnapshot(Self.daily), for: Self.scope)
    let truncated = BootInstant(session: "boot-7", sinceBoot: 1_234.567)
    #expect(try writer.load(Self.scope)?.bookkeeping.refreshBootInstant == truncated)

    // The writer answers from memory, a new instance from the file: the same reading, so the
    // same elapsed time to the last bit (the 0.89 ms truncated away counts as elapsed).
    clock.advance(by: .seconds(.hour))
    let reader = try Fixture.cache(in: directory, clock: clock)
    let fromMemory = writer.access(to: "pro", for: Self.scope)
    let fromFile = reader.access(to: "pro", for: Self.scope)
    #expect(fromMemory == fromFile)
    let estimate = try #require(fromFile.evidence.estimatedServerTime)
    #expect(abs(estimate.timeIntervalSince(Fixture.t0) - (.hour + 0.000_89)) < 1e-6)
  }

  // MARK: The system's boot clock

  #if os(Linux)
    @Test("CacheClock.system reads CLOCK_BOOTTIME in the session of the kernel's boot ID")
    func systemBootClock() throws {
      let first = try #require(CacheClock.system.bootInstant())
      let second = try #require(CacheClock.system.bootInstant())
      let bootID = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        .trimmingCharacters(in: .whitespacesAndNewlines)
      #expect(!bootID.isEmpty)
      #expect(first.session == bootID)
      #expect(second.session == bootID)
      #expect(first.sinceBoot > 0)
      #expect(second.sinceBoot >= first.sinceBoot)
    }
  #endif
}
