import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

// MARK: - One device's life, run

extension TrustedTimePropertyTests {
  /// One seeded run: the true clock, the device's clock and skew, the cache, and the model of
  /// the bookkeeping the cache should hold.
  struct Run {
    let seed: UInt64
    /// A device clock that is right and stays right: every read must be the truth.
    let rightClock: Bool
    var random: ScenarioRNG
    let clock: ManualClock
    let directory: TemporaryDirectory
    var cache: SQLiteCustomerInfoCache
    let scope = Fixture.scopeA
    /// True time, which is the server's clock.
    var trueNow = Fixture.t0
    /// Device clock minus true time.
    var skew: TimeInterval
    /// How fast the device clock gains (positive) or loses time, in seconds per day.
    let drift: TimeInterval
    var boots = 0
    var refresh: Refresh?
    /// The bookkeeping the cache should hold: the refresh's device time, the server's time,
    /// failures since, and the latest device time observed since the refresh.
    var bookkeeping = ScopeBookkeeping(storedAt: nil)
    var tally = Tally()
    /// What happened so far, for a failure's comment: the seed and these steps reproduce it.
    var trace: [String] = []

    /// - Parameter bootClock: Whether the device has a boot clock; nil: the seed decides.
    init(seed: UInt64, rightClock: Bool, bootClock: Bool?) throws {
      self.seed = seed
      self.rightClock = rightClock
      var random = ScenarioRNG(seed: seed)
      let hasBootClock = bootClock ?? random.chance(0.5)
      skew = rightClock ? 0 : TrustedTimePropertyTests.skew(&random)
      drift = !rightClock && random.chance(0.3) ? random.seconds(-600...600) : 0
      self.random = random
      clock = ManualClock(
        Fixture.t0.addingTimeInterval(skew), bootSession: hasBootClock ? "boot-0" : nil)
      directory = try TemporaryDirectory()
      cache = try Self.openCache(in: directory, clock: clock)
      trace.append(
        "seed \(seed): boot clock \(hasBootClock), skew \(Self.interval(skew)), drift "
          + "\(Int(drift)) s/day")
    }

    var deviceNow: Date { trueNow.addingTimeInterval(skew) }

    /// A cache that asks the file whether another connection wrote on every read, not once per
    /// 50 ms of real time: the released instance's last flush is such a write, and a run must
    /// take the same path every time for its seed to reproduce.
    static func openCache(
      in directory: TemporaryDirectory, clock: ManualClock
    ) throws -> SQLiteCustomerInfoCache {
      try Fixture.cache(in: directory, clock: clock) { $0.changeCheckInterval = .zero }
    }

    /// About 45 steps: time passes, and the device reads, refreshes, fails to, is reopened,
    /// rebooted, or has its clock set.
    mutating func play() throws {
      try refreshSucceeds()
      for _ in 0..<45 {
        if random.chance(0.85) { advance() }
        let roll = Double.random(in: 0..<1, using: &random)
        switch roll {
        case ..<0.1 where !rightClock: setClock(to: TrustedTimePropertyTests.skew(&random))
        case ..<0.2: try refreshSucceeds()
        case ..<0.27: try refreshFails()
        case ..<0.32: try reopen()
        case ..<0.37 where clock.bootInstant != nil: reboot()
        default: try read()
        }
      }
    }

    // MARK: Steps

    /// Time passes, seconds to days, or to one of the snapshot's boundaries and a second
    /// either side. Both of the device's clocks move with it; a drifting wall clock a little
    /// more or less.
    mutating func advance() {
      var step: TimeInterval
      switch Int.random(in: 0..<8, using: &random) {
      case 0: step = random.seconds(1...59)
      case 1, 2: step = random.seconds(.minute ... .hour)
      case 3, 4: step = random.seconds(.hour ... .day)
      case 5: step = random.seconds(.day...(4 * .day))
      default: step = nextBoundary().map { $0.timeIntervalSince(trueNow) } ?? .hour
      }
      step = max(1, step)
      trueNow = trueNow.addingTimeInterval(step)
      clock.advance(by: .seconds(step))
      if drift != 0 {
        skew += (drift * step / .day).rounded()
        clock.set(deviceNow)
      }
      trace.append("\(Self.at(trueNow)): time passes, device \(Self.interval(skew)) off")
    }

    /// One of the next boundaries of the stored snapshot ahead of true time, give or take a
    /// second: the nearest three, so time does not race past the rest.
    mutating func nextBoundary() -> Date? {
      guard let refresh else { return nil }
      let info = refresh.info
      var boundaries = [
        refresh.trueTime.addingTimeInterval(5 * .minute),
        refresh.trueTime.addingTimeInterval(2 * .day),
      ]
      for entitlement in info.entitlements.values {
        boundaries += [entitlement.expiresAt, entitlement.gracePeriodExpiresAt].compactMap { $0 }
        boundaries.append(
          (entitlement.verifiedAt ?? info.requestDate).addingTimeInterval(30 * .day))
      }
      boundaries += [info.deviceAccess?.expiresAt, info.accessContext?.expiresAt].compactMap { $0 }
      let ahead = boundaries.filter { $0 > trueNow.addingTimeInterval(1) }.sorted().prefix(3)
      guard !ahead.isEmpty else { return nil }
      return random.pick(Array(ahead)).addingTimeInterval(random.pick([-1, 0, 1]))
    }

    /// A person (or a time server) sets the wall clock: the boot clock does not move.
    mutating func setClock(to newSkew: TimeInterval) {
      skew = newSkew
      clock.set(deviceNow)
      trace.append("\(Self.at(trueNow)): clock set \(Self.interval(skew)) off")
    }

    /// A refresh that succeeds at true time R returns `requestDate = R`; sometimes the clock
    /// was set just before it (issue 9: 20 days back, then refresh).
    mutating func refreshSucceeds() throws {
      if !rightClock, refresh != nil, random.chance(0.4) {
        setClock(to: TrustedTimePropertyTests.skew(&random))
      }
      let snapshot = try CustomerInfoSnapshot(
        TrustedTimePropertyTests.snapshot(at: trueNow, &random))
      try cache.store(snapshot, for: scope)
      let boot = clock.bootInstant
      refresh = Refresh(info: snapshot.customerInfo, trueTime: trueNow, skew: skew, boot: boot)
      bookkeeping = ScopeBookkeeping(
        storedAt: deviceNow, serverTime: trueNow, lastRefreshAttemptAt: deviceNow,
        deviceHighWaterMark: deviceNow, refreshBootInstant: boot)
      trace.append(
        "\(Self.at(trueNow)): refresh stored, device \(Self.interval(skew)) off, "
          + "entitlements \(Self.describe(snapshot.customerInfo))")
    }

    /// A refresh attempt that fails: a write at the device's time, which raises the mark.
    mutating func refreshFails() throws {
      try cache.recordRefreshFailure(for: scope, reason: "offline")
      bookkeeping.lastRefreshAttemptAt = deviceNow
      bookkeeping.lastRefreshFailedAt = deviceNow
      observe()
      trace.append("\(Self.at(trueNow)): refresh failed")
    }

    /// The app goes to the background (flush), or its cache is released (which flushes too),
    /// and a new process opens the same file: it has nothing in memory but what the file holds.
    mutating func reopen() throws {
      let explicit = random.chance(0.5)
      if explicit { try cache.flush() }
      // The old instance is released by this assignment, before the new one reads anything.
      cache = try Self.openCache(in: directory, clock: clock)
      try expectFileBookkeeping(explicit ? "after flush() and reopening" : "after the release")
      trace.append("\(Self.at(trueNow)): \(explicit ? "flushed and reopened" : "reopened")")
    }

    /// The device restarts: a new boot session, the wall clock unchanged.
    mutating func reboot() {
      boots += 1
      clock.reboot(session: "boot-\(boots)")
      trace.append("\(Self.at(trueNow)): rebooted")
    }

    /// The file's bookkeeping after a flush, which persisted every mark reads raised, is the
    /// model's. `load(_:)` decodes the stored JSON, the costliest read there is, so only a
    /// reopen checks it; every read after one checks the file's marks through its decisions.
    func expectFileBookkeeping(_ when: String) throws {
      var stored = try cache.load(scope)?.bookkeeping
      stored?.lastRefreshFailureReason = nil
      stored?.snapshotSize = nil
      stored?.snapshotSHA256 = nil
      check(
        stored == bookkeeping,
        "\(when): the file holds \(String(describing: stored)), expected \(bookkeeping)")
    }

    /// A read raises the mark to the device's time, or in the refresh's boot session to the
    /// device time the boot clock measured since the refresh, whatever the wall clock says.
    mutating func observe() {
      var seen = deviceNow
      if let boot = bookkeeping.refreshBootInstant, let now = clock.bootInstant,
        now.session == boot.session, let storedAt = bookkeeping.storedAt
      {
        seen = storedAt.addingTimeInterval(max(0, now.sinceBoot - boot.sinceBoot))
      }
      bookkeeping.deviceHighWaterMark = max(bookkeeping.deviceHighWaterMark, seen)
    }

    // MARK: Reads

    /// Whether the property covers a read now: the refresh's boot session, or a device time
    /// seen since the refresh (this read's included) that under the refresh's skew is a true
    /// time at or after now.
    func coverage() -> Coverage {
      guard let refresh else { return Coverage(covered: false, inSession: false, exact: false) }
      let inSession =
        refresh.boot != nil && clock.bootInstant?.session == refresh.boot?.session
      let seen = max(bookkeeping.deviceHighWaterMark, deviceNow).addingTimeInterval(-refresh.skew)
      return Coverage(
        covered: inSession || seen >= trueNow, inSession: inSession, exact: inSession || rightClock)
    }

    /// The truth: the snapshot asked at the true server time, no skew, no boot clock.
    func truth(_ key: String, _ policy: OfflinePolicy, _ refresh: Refresh) -> AccessDecision {
      EntitlementEvaluator.decision(
        for: key, in: refresh.info, bookkeeping: Self.trueBookkeeping(refresh), now: trueNow,
        policy: policy)
    }

    static func trueBookkeeping(_ refresh: Refresh) -> ScopeBookkeeping {
      ScopeBookkeeping(storedAt: refresh.trueTime, serverTime: refresh.trueTime)
    }

    /// The rule before 1b3047b, for the tally only: boundaries compared with
    /// `max(now, mark)`, the mark raised with `requestDate` as well as device times.
    func legacy(_ key: String, _ refresh: Refresh) -> AccessDecision {
      let mark = max(refresh.trueTime, bookkeeping.deviceHighWaterMark)
      return EntitlementEvaluator.decision(
        for: key, in: refresh.info,
        bookkeeping: ScopeBookkeeping(
          storedAt: refresh.trueTime, serverTime: refresh.trueTime, deviceHighWaterMark: mark),
        now: deviceNow, policy: .conservative)
    }

    /// One read step: every key through `access(to:)`, and sometimes the key listing and the
    /// evaluated view, in a random order, under both presets.
    mutating func read() throws {
      guard let refresh else { return }
      let coverage = coverage()
      trace.append(
        "\(Self.at(trueNow)): read, device \(Self.interval(skew)) off, covered "
          + "\(coverage.covered), in session \(coverage.inSession)")
      if coverage.inSession { tally.inSession += 1 }
      // The evaluated view decodes the stored JSON, the costliest read: one preset at a time.
      var kinds = [0, 1, 2].filter { $0 == 0 || random.chance($0 == 1 ? 0.4 : 0.1) }
      kinds.shuffle(using: &random)
      for kind in kinds {
        var policies = TrustedTimePropertyTests.policies
        if kind == 2 { policies = [random.pick(policies)] }
        for (name, policy) in policies {
          switch kind {
          case 0: readEachKey(policy, name, refresh, coverage)
          case 1: readKeyListing(policy, name, refresh, coverage)
          default: try readEvaluatedView(policy, name, refresh, coverage)
          }
        }
      }
    }

    mutating func readEachKey(
      _ policy: OfflinePolicy, _ name: String, _ refresh: Refresh, _ coverage: Coverage
    ) {
      for key in TrustedTimePropertyTests.keys.shuffled(using: &random) {
        let memory = EntitlementEvaluator.decision(
          for: key, in: refresh.info, bookkeeping: bookkeeping, now: deviceNow,
          bootInstant: clock.bootInstant, policy: policy)
        let cached = cache.access(to: key, for: scope, policy: policy)
        observe()
        check(cached == memory, "\(key), \(name): SQLite \(cached) vs memory \(memory)")
        judge(cached, key, policy, name, refresh, coverage)
      }
    }

    mutating func readKeyListing(
      _ policy: OfflinePolicy, _ name: String, _ refresh: Refresh, _ coverage: Coverage
    ) {
      let memory = EntitlementEvaluator.evaluate(
        refresh.info, bookkeeping: bookkeeping, now: deviceNow, bootInstant: clock.bootInstant,
        policy: policy)
      let keys = cache.activeEntitlementKeys(for: scope, policy: policy)
      observe()
      check(
        keys == memory.activeEntitlementKeys,
        "\(name): SQLite lists \(keys), memory \(memory.activeEntitlementKeys)")
      guard coverage.covered else { return }
      for key in keys {
        check(truth(key, policy, refresh).isGranted, "\(key), \(name): listed, the truth denies")
      }
    }

    mutating func readEvaluatedView(
      _ policy: OfflinePolicy, _ name: String, _ refresh: Refresh, _ coverage: Coverage
    ) throws {
      let memory = EntitlementEvaluator.evaluate(
        refresh.info, bookkeeping: bookkeeping, now: deviceNow, bootInstant: clock.bootInstant,
        policy: policy)
      let evaluated = try #require(try cache.evaluatedCustomerInfo(for: scope, policy: policy))
      observe()
      check(
        evaluated.decisions == memory.decisions && evaluated.customerInfo == memory.customerInfo
          && evaluated.freshness == memory.freshness
          && evaluated.estimatedServerTime == memory.estimatedServerTime,
        "\(name): SQLite view \(evaluated) vs memory \(memory)")
      guard coverage.covered else { return }
      let truth = EntitlementEvaluator.evaluate(
        refresh.info, bookkeeping: Self.trueBookkeeping(refresh), now: trueNow, policy: policy)
      for (key, decision) in evaluated.decisions {
        check(
          !decision.isGranted || truth.decisions[key]?.isGranted == true,
          "\(key), \(name): the view grants, the truth is "
            + String(describing: truth.decisions[key]?.state))
      }
      // What the evaluated CustomerInfo shows is access too: an entitlement still `active`,
      // an access context still there.
      for (key, entitlement) in truth.customerInfo.entitlements
      where entitlement.status == .known(.expired) {
        check(
          evaluated.customerInfo.entitlements[key]?.status == .known(.expired),
          "\(key), \(name): the view shows it unexpired, the truth expired")
      }
      check(
        truth.customerInfo.accessContext != nil || evaluated.customerInfo.accessContext == nil,
        "\(name): the view keeps the access context, the truth removed it")
      if coverage.exact {
        check(
          evaluated.customerInfo == truth.customerInfo && evaluated.estimatedServerTime == trueNow,
          "\(name): the view is not the truth's: \(evaluated) vs \(truth)")
      }
    }

    /// The property for one decision the cache gave.
    mutating func judge(
      _ cached: AccessDecision, _ key: String, _ policy: OfflinePolicy, _ name: String,
      _ refresh: Refresh, _ coverage: Coverage
    ) {
      guard coverage.covered else {
        tally.uncovered += 1
        return
      }
      let truth = truth(key, policy, refresh)
      func what() -> String { "\(key), \(name): \(cached.state) where the truth is \(truth.state)" }
      if cached.isGranted { tally.coveredGrants += 1 } else { tally.coveredDenials += 1 }
      check(!cached.isGranted || truth.isGranted, what())
      // Entitled but blocked on this device is a claim of entitlement too.
      check(!Self.isEntitled(cached) || Self.isEntitled(truth), what())
      let estimate = cached.evidence.estimatedServerTime ?? .distantPast
      check(estimate >= trueNow, "\(what()): estimated server time \(estimate)")
      if cached.isGranted, truth.isGranted {
        // Both in server time, from the same snapshot: the same instant.
        check(
          cached.evidence.validUntil == truth.evidence.validUntil,
          "\(what()): valid until \(String(describing: cached.evidence.validUntil)), truly "
            + "\(String(describing: truth.evidence.validUntil))")
      }
      if coverage.exact {
        tally.exact += 1
        check(
          cached.state == truth.state && estimate == trueNow,
          "\(what()): not exact, estimated server time \(estimate)")
      }
      if !truth.isGranted {
        if policy == .conservative, legacy(key, refresh).isGranted { tally.legacyFalseGrants += 1 }
        if refresh.skew <= -20 * .day { tally.setBackBeforeRefreshDenials += 1 }
      }
    }

    /// Records an issue with the steps so far when `condition` is false. Hundreds of thousands
    /// of checks run, so the message and the trace are built only for a failure.
    func check(
      _ condition: Bool, _ message: @autoclosure () -> String,
      sourceLocation: SourceLocation = #_sourceLocation
    ) {
      guard !condition else { return }
      Issue.record(
        Comment(rawValue: "\(message())\n\(failureTrace)"), sourceLocation: sourceLocation)
    }

    static func isEntitled(_ decision: AccessDecision) -> Bool {
      switch decision.state {
      case .granted, .deviceBlocked: true
      case .denied, .offlineUnavailable: false
      }
    }

    /// The trace, only built when an expectation fails (comments are autoclosures).
    var failureTrace: String { trace.joined(separator: "\n") }

    static func at(_ date: Date) -> String {
      "T+\(interval(date.timeIntervalSince(Fixture.t0)))"
    }

    static func interval(_ seconds: TimeInterval) -> String {
      "\(Int(seconds)) s"
    }

    static func describe(_ info: CustomerInfo) -> String {
      let entitlements = info.entitlements.sorted { $0.key < $1.key }.map { key, value in
        "\(key) \(value.status.rawValue) until \(value.expiresAt.map(at) ?? "-") grace "
          + "\(value.gracePeriodExpiresAt.map(at) ?? "-") verified "
          + "\(value.verifiedAt.map(at) ?? "-")"
      }
      let device = info.deviceAccess.map { device in
        "\(device.status.rawValue) until \(device.expiresAt.map(at) ?? "-")"
      }
      return entitlements.joined(separator: "; ") + "; device \(device ?? "-")"
        + "; context until \(info.accessContext.map { at($0.expiresAt) } ?? "-")"
    }
  }
}
