import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

@Suite("The same decision read from SQLite as evaluated in memory")
struct SQLiteEquivalenceTests {

  static let seeds: ClosedRange<UInt64> = 1...150

  static func scope(_ seed: UInt64) -> CacheScope {
    Fixture.scope(user: "user-\(seed)")
  }

  /// Writes every scenario to its own scope, the failed refresh included, as an SDK would.
  static func storeAll(_ harness: CacheHarness) throws {
    for seed in seeds {
      let scenario = Scenario(seed: seed)
      try harness.store(scenario.info, for: scope(seed), at: scenario.storedAt)
      if let failedAt = scenario.failedAt {
        harness.clock.set(failedAt)
        try harness.cache.recordRefreshFailure(for: scope(seed), reason: "timeout")
      }
    }
  }

  @Test("random snapshots: point reads, key listing and the evaluated view, clock forward and back")
  func randomScenarios() throws {
    let harness = try CacheHarness()
    try Self.storeAll(harness)
    // A fresh instance has nothing resident: its reads go through SQL (point reads first, then
    // full reads). The writing instance answers from what the write left in memory.
    let fromFile = try harness.secondInstance()
    for seed in Self.seeds {
      let scenario = Scenario(seed: seed)
      let scope = Self.scope(seed)
      let stored = try #require(try fromFile.load(scope)).bookkeeping
      // The file's bookkeeping is what the pure evaluator is given in the scenario.
      var expected = scenario.bookkeeping()
      expected.lastRefreshFailureReason = scenario.failedAt == nil ? nil : "timeout"
      expected.snapshotSize = stored.snapshotSize
      expected.snapshotSHA256 = stored.snapshotSHA256
      #expect(stored == expected, "\(scenario)")

      var random = ScenarioRNG(seed: ~seed)
      let first = scenario.instant(&random)
      let second = first.addingTimeInterval(random.seconds(0...(10 * .day)))
      let back = second.addingTimeInterval(-random.seconds(1...(40 * .day)))
      var mark = stored.deviceHighWaterMark
      var previous: [String: AccessDecision] = [:]
      for now in [first, second, back] {
        harness.clock.set(now)
        var bookkeeping = stored
        bookkeeping.deviceHighWaterMark = mark
        let context = Comment(rawValue: "\(scenario) at \(now)")
        for key in Scenario.keys {
          let memory = EntitlementEvaluator.decision(
            for: key, in: scenario.info, bookkeeping: bookkeeping, now: now, policy: scenario.policy
          )
          #expect(fromFile.access(to: key, for: scope, policy: scenario.policy) == memory, context)
          #expect(
            harness.cache.access(to: key, for: scope, policy: scenario.policy) == memory, context)
          if let before = previous[key], !before.isGranted {
            #expect(!memory.isGranted, "\(context): \(key) denied before the clock went back")
          }
          previous[key] = memory
        }
        // The reads above raised the mark to `now`; the evaluated view reports it.
        mark = max(mark, now)
        bookkeeping.deviceHighWaterMark = mark
        let memory = EntitlementEvaluator.evaluate(
          scenario.info, bookkeeping: bookkeeping, now: now, policy: scenario.policy)
        #expect(
          fromFile.activeEntitlementKeys(for: scope, policy: scenario.policy)
            == memory.activeEntitlementKeys, context)
        let evaluated = try #require(
          try fromFile.evaluatedCustomerInfo(for: scope, policy: scenario.policy))
        #expect(evaluated == memory, context)
      }
    }
  }

  @Test(
    "the server's own bytes (the example snapshot), every key, across its boundaries",
    arguments: Preset.allCases)
  func sampleSnapshot(_ preset: Preset) throws {
    let snapshot = try Fixture.snapshot()
    let harness = try CacheHarness()
    try harness.cache.store(snapshot, for: Fixture.scopeA)
    var bookkeeping = try #require(try harness.cache.load(Fixture.scopeA)).bookkeeping
    let instants = [
      0, 14 * .minute, 15 * .minute, 2 * .day, 7 * .day - 1,
      7 * .day, 30 * .day,
    ].map(Fixture.at)
    let reader = try harness.secondInstance()
    for now in instants {
      harness.clock.set(now)
      // Reads raise the mark; the instants only move forward, so it is `now` from here on.
      bookkeeping.deviceHighWaterMark = max(bookkeeping.deviceHighWaterMark, now)
      let memory = EntitlementEvaluator.evaluate(
        snapshot.customerInfo, bookkeeping: bookkeeping, now: now, policy: preset.policy)
      for key in ["pro", "lifetime", "gold"] {
        let expected = EntitlementEvaluator.decision(
          for: key, in: snapshot.customerInfo, bookkeeping: bookkeeping, now: now,
          policy: preset.policy)
        #expect(reader.access(to: key, for: Fixture.scopeA, policy: preset.policy) == expected)
        if let fromView = memory.decisions[key] {
          #expect(fromView == expected)
        }
      }
      let evaluated = try reader.evaluatedCustomerInfo(for: Fixture.scopeA, policy: preset.policy)
      #expect(evaluated == memory)
      // The evaluator is the code under test too: the states are also held to the rules as
      // written out by hand, so a change of both cannot pass unseen.
      let index = try #require(instants.firstIndex(of: now))
      for (key, state) in Self.sampleStates(preset)[index] {
        #expect(
          reader.access(to: key, for: Fixture.scopeA, policy: preset.policy).state == state,
          "\(preset) at T+\(now.timeIntervalSince(Fixture.t0)) s: \(key)")
      }
    }
  }

  /// What the sample's keys read at each instant of ``sampleSnapshot(_:)``, by the offline
  /// rules: `pro` runs to T+30 d, `lifetime` has no expiry and was verified at T (so the
  /// 30-day offline window ends it at T+30 d), `gold` is not in the snapshot, and the device's
  /// access ends at T+7 d. `serverSnapshot` stops deciding at the 2-day snapshot age.
  static func sampleStates(_ preset: Preset) -> [[String: AccessState]] {
    let deviceExpired = AccessState.offlineUnavailable(.deviceAccessExpired)
    let notEntitled = AccessState.denied(.notEntitled)
    switch preset {
    case .conservative:
      return [
        ["pro": .granted, "lifetime": .granted, "gold": notEntitled],  // T
        ["pro": .granted, "lifetime": .granted, "gold": notEntitled],  // T+14 min
        ["pro": .granted, "lifetime": .granted, "gold": notEntitled],  // T+15 min
        ["pro": .granted, "lifetime": .granted, "gold": notEntitled],  // T+2 d
        ["pro": .granted, "lifetime": .granted, "gold": notEntitled],  // T+7 d - 1 s
        ["pro": deviceExpired, "lifetime": deviceExpired, "gold": notEntitled],  // T+7 d
        [
          "pro": .denied(.expired), "lifetime": .denied(.offlineWindowElapsed),
          "gold": notEntitled,
        ],  // T+30 d
      ]
    case .serverSnapshot:
      let tooOld = AccessState.offlineUnavailable(.snapshotTooOld)
      return [
        ["pro": .granted, "lifetime": .granted, "gold": notEntitled],
        ["pro": .granted, "lifetime": .granted, "gold": notEntitled],
        ["pro": .granted, "lifetime": .granted, "gold": notEntitled],
        ["pro": tooOld, "lifetime": tooOld, "gold": tooOld],
        ["pro": tooOld, "lifetime": tooOld, "gold": tooOld],
        ["pro": tooOld, "lifetime": tooOld, "gold": tooOld],
        ["pro": tooOld, "lifetime": tooOld, "gold": tooOld],
      ]
    }
  }
}
