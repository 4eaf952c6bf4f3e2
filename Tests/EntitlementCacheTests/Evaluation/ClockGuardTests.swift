import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The device mark (<doc:Storage#Bookkeeping>), the time model (<doc:TimeModel>) and freshness
/// (<doc:OfflineRules>).
@Suite("Clock guard and freshness")
struct ClockGuardTests {

  /// A subscription that ends 90 minutes after T.
  static let info = Fixture.info([
    "pro": Fixture.entitlement(.active, expiresAt: Fixture.at(90 * .minute))
  ])

  // MARK: The guard itself

  /// The clock, the high-water mark, and whether rollback is suspected (tolerance 5 min).
  static let readings: [(TimeInterval, TimeInterval?, Bool)] = [
    (0, nil, false),
    (.hour, 0, false),
    (0, 0, false),
    (-5 * .minute, 0, false),
    (-5 * .minute - 0.001, 0, true),
    (-.day, 0, true),
  ]

  @Test(
    "effectiveNow = max(now, highWaterMark); suspected only beyond the tolerance",
    arguments: readings)
  func reading(_ now: TimeInterval, _ mark: TimeInterval?, _ suspected: Bool) {
    let reading = ClockReading(
      now: Fixture.at(now), deviceHighWaterMark: mark.map(Fixture.at), storedAt: nil,
      serverTime: nil,
      bootElapsed: nil, clockOffset: nil, tolerance: 5 * .minute)
    #expect(reading.effectiveDeviceNow == Fixture.at(max(now, mark ?? now)))
    #expect(reading.rollbackSuspected == suspected)
  }

  @Test("setting the clock back never extends access, in memory", arguments: Preset.allCases)
  func rollbackInMemory(_ preset: Preset) {
    // A read at T+2h raised the mark past the expiry; the clock now says T+1h.
    var bookkeeping = Fixture.bookkeeping(for: Self.info)
    bookkeeping.deviceHighWaterMark = Fixture.at(2 * .hour)
    let decision = EntitlementEvaluator.decision(
      for: "pro", in: Self.info, bookkeeping: bookkeeping, now: Fixture.at(.hour),
      policy: .conservative)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.clockRollbackSuspected)
    // Within the tolerance the flag stays down, and the mark still holds.
    let small = EntitlementEvaluator.decision(
      for: "pro", in: Self.info, bookkeeping: bookkeeping,
      now: Fixture.at(2 * .hour - .minute))
    #expect(small.state == .denied(.expired))
    #expect(!small.evidence.clockRollbackSuspected)
    // Lifetime access and the snapshot's own age are held to the mark just the same.
    let lifetime = Fixture.info(["pro": Fixture.entitlement(.active)])
    var late = Fixture.bookkeeping(for: lifetime)
    late.deviceHighWaterMark = Fixture.at(31 * .day)
    #expect(
      EntitlementEvaluator.decision(
        for: "pro", in: lifetime, bookkeeping: late, now: Fixture.t0, policy: preset.policy
      ).isGranted == false)
  }

  @Test("a clock set back with nothing passed grants, and says the clock looks wrong")
  func rollbackAloneNeverDenies() {
    var bookkeeping = Fixture.bookkeeping(for: Self.info)
    bookkeeping.deviceHighWaterMark = Fixture.at(.hour)
    let decision = EntitlementEvaluator.decision(
      for: "pro", in: Self.info, bookkeeping: bookkeeping, now: Fixture.at(-.day))
    #expect(decision.state == .granted)
    #expect(decision.evidence.clockRollbackSuspected)
    #expect(decision.evidence.validUntil == Fixture.at(90 * .minute))
  }

  // MARK: Through the SQLite cache

  @Test("reads raise the mark in memory: back from T+2h to T+1h is still denied")
  func readsRaiseTheMark() throws {
    let harness = try CacheHarness()
    try harness.store(Self.info)
    let cache = harness.cache
    harness.clock.set(Fixture.at(2 * .hour))
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))

    harness.clock.set(Fixture.at(.hour))
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.clockRollbackSuspected)
    #expect(!cache.hasActiveEntitlement("pro", for: Fixture.scopeA))
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    let evaluated = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.clockRollbackSuspected)
    #expect(evaluated.decisions["pro"] == decision)
    #expect(evaluated.customerInfo.entitlements["pro"]?.status == .known(.expired))
  }

  @Test("activeEntitlementKeys raises the mark too")
  func keyListingRaisesTheMark() throws {
    let harness = try CacheHarness()
    try harness.store(Self.info)
    harness.clock.set(Fixture.at(2 * .hour))
    #expect(harness.cache.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    harness.clock.set(Fixture.at(.hour))
    #expect(harness.cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
  }

  @Test("evaluatedCustomerInfo raises the mark too, and flush() persists it")
  func evaluatedViewRaisesTheMark() throws {
    let harness = try CacheHarness()
    try harness.store(Self.info)
    harness.clock.set(Fixture.at(2 * .hour))
    let late = try #require(try harness.cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(late.customerInfo.entitlements["pro"]?.status == .known(.expired))

    harness.clock.set(Fixture.at(.hour))
    let rolledBack = try #require(try harness.cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(rolledBack.clockRollbackSuspected)
    #expect(rolledBack.decisions["pro"]?.state == .denied(.expired))
    #expect(harness.cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    try harness.cache.flush()
    let reopened = try harness.secondInstance()
    #expect(reopened.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
  }

  @Test("the mark is persisted lazily: not by a read, by flush(); a reopened cache still denies")
  func flushPersistsTheMark() throws {
    let harness = try CacheHarness()
    try harness.store(Self.info)
    harness.clock.set(Fixture.at(2 * .hour))
    #expect(harness.cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))

    let path = harness.cache.path
    #expect(try StoreTest.persistedHighWaterMark(path, Fixture.scopeA) == Fixture.t0)
    try harness.cache.flush()
    #expect(
      try StoreTest.persistedHighWaterMark(path, Fixture.scopeA) == Fixture.at(2 * .hour))

    harness.clock.set(Fixture.at(.hour))
    let reopened = try harness.secondInstance()
    let decision = reopened.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.clockRollbackSuspected)
  }

  @Test("the next write, to any scope, persists the mark")
  func writePersistsTheMark() throws {
    let harness = try CacheHarness()
    try harness.store(Self.info)
    harness.clock.set(Fixture.at(2 * .hour))
    _ = harness.cache.access(to: "pro", for: Fixture.scopeA)
    let path = harness.cache.path
    #expect(try StoreTest.persistedHighWaterMark(path, Fixture.scopeA) == Fixture.t0)

    try harness.cache.recordRefreshFailure(for: Fixture.scopeB, reason: nil)
    #expect(
      try StoreTest.persistedHighWaterMark(path, Fixture.scopeA) == Fixture.at(2 * .hour))
    harness.clock.set(Fixture.at(.hour))
    #expect(
      try harness.secondInstance().access(to: "pro", for: Fixture.scopeA).state == .denied(.expired)
    )
  }

  @Test("a refresh at a clock set back is judged at the server's time: access is not extended")
  func refreshAtAClockSetBackExtendsNothing() throws {
    let harness = try CacheHarness()
    try harness.store(Self.info)
    harness.clock.set(Fixture.at(2 * .hour))
    _ = harness.cache.access(to: "pro", for: Fixture.scopeA)
    // The clock is set back an hour, then a refresh brings the server's time: T + 2 h.
    var later = Self.info
    later.requestDate = Fixture.at(2 * .hour)
    try harness.store(later, at: Fixture.at(.hour))
    let decision = harness.cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    // The refresh re-anchored the clocks: nothing looks set back, the offset says an hour.
    #expect(!decision.evidence.clockRollbackSuspected)
    #expect(decision.evidence.clockOffset == Int(TimeInterval.hour))
    #expect(decision.evidence.storedAt == Fixture.at(.hour))
    #expect(
      try harness.cache.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark
        == Fixture.at(.hour))
  }

  @Test("the mark survives another instance's write to the file")
  func markSurvivesCrossInstanceInvalidation() throws {
    let harness = try CacheHarness { $0.changeCheckInterval = .zero }
    try harness.store(Self.info)
    let other = try harness.secondInstance { $0.changeCheckInterval = .zero }
    harness.clock.set(Fixture.at(2 * .hour))
    #expect(harness.cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))

    // Another process writes (any scope): this instance drops what it holds in memory.
    try other.recordRefreshFailure(for: Fixture.scopeB, reason: nil)
    harness.clock.set(Fixture.at(.hour))
    let decision = harness.cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.clockRollbackSuspected)
    let evaluated = try #require(try harness.cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.decisions["pro"] == decision)
  }

  /// A refresh resets the device mark (<doc:TimeModel>), across processes: a mark one instance
  /// raised before another's refresh belongs to the older refresh. Persisting it later must not
  /// undo the reset, in the file or in the first instance's memory.
  @Test("a mark raised before another instance's refresh does not outlive that refresh")
  func markRaisedBeforeAnotherRefreshIsDropped() throws {
    let harness = try CacheHarness { $0.changeCheckInterval = .zero }
    try harness.store(Self.info)
    harness.clock.set(Fixture.at(2 * .hour))
    #expect(harness.cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))

    // The clock is put right and another process refreshes: the server says T + 1 h, and pro
    // now runs for a day.
    let other = try harness.secondInstance { $0.changeCheckInterval = .zero }
    var renewed = Fixture.info([
      "pro": Fixture.entitlement(.active, expiresAt: Fixture.at(25 * .hour))
    ])
    renewed.requestDate = Fixture.at(.hour)
    harness.clock.set(Fixture.at(.hour))
    try other.store(try CustomerInfoSnapshot(renewed), for: Fixture.scopeA)

    // The first instance notices the write and reads the new row, its old mark still pending
    // in memory; then it persists that mark with its next write.
    harness.clock.set(Fixture.at(.hour + .minute))
    let first = harness.cache.access(to: "pro", for: Fixture.scopeA)
    #expect(first.state == .granted)
    #expect(!first.evidence.clockRollbackSuspected)
    try harness.cache.flush()
    #expect(
      try other.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark
        == Fixture.at(.hour + .minute))

    for cache in [harness.cache, other, try harness.secondInstance()] {
      let decision = cache.access(to: "pro", for: Fixture.scopeA)
      #expect(decision.state == .granted)
      #expect(!decision.evidence.clockRollbackSuspected)
      #expect(decision.evidence.estimatedServerTime == Fixture.at(.hour + .minute))
    }
  }

  @Test("evaluatedCustomerInfo after another instance's write still sees the raised mark")
  func evaluatedSeesTheMarkAfterInvalidation() throws {
    let harness = try CacheHarness { $0.changeCheckInterval = .zero }
    try harness.store(Self.info)
    let other = try harness.secondInstance { $0.changeCheckInterval = .zero }
    harness.clock.set(Fixture.at(2 * .hour))
    _ = harness.cache.access(to: "pro", for: Fixture.scopeA)
    try other.recordRefreshFailure(for: Fixture.scopeB, reason: nil)
    // A read of another scope notices the write and drops every resident.
    _ = harness.cache.access(to: "pro", for: Fixture.scopeB)
    harness.clock.set(Fixture.at(.hour))
    let evaluated = try #require(try harness.cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.decisions["pro"]?.state == .denied(.expired))
    #expect(evaluated.clockRollbackSuspected)
  }

  // MARK: Freshness

  @Test("fresh, stale, offline; a later successful store clears offline")
  func freshness() throws {
    let harness = try CacheHarness()
    let cache = harness.cache
    try harness.store(Self.info)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.freshness == .fresh)
    harness.clock.set(Fixture.at(10 * .minute))
    let stale = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(stale.evidence.freshness == .stale)
    #expect(stale.isHighTrust, "stale is a refresh hint, not a trust problem")

    try cache.recordRefreshFailure(for: Fixture.scopeA, reason: "timeout")
    let offline = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(offline.state == .granted, "a failed refresh is not proof of no access")
    #expect(offline.evidence.freshness == .offline)
    #expect(offline.evidence.isComputedOffline == true)
    #expect(!offline.isHighTrust)
    let evaluated = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.isComputedOffline && evaluated.freshness == .offline)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.lastRefreshFailureReason == "timeout")

    try harness.store(Self.info, at: Fixture.at(20 * .minute))
    let fresh = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(fresh.evidence.freshness == .fresh)
    #expect(fresh.evidence.isComputedOffline == false)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.lastRefreshFailedAt == nil)
    #expect(try harness.secondInstance().access(to: "pro", for: Fixture.scopeA) == fresh)
  }

  @Test("offline within staleAfter: a failure right after a store is still offline")
  func offlineBeatsFresh() {
    let decision = Fixture.decide(
      "pro", in: Self.info, failedAt: Fixture.at(.minute),
      now: Fixture.at(2 * .minute))
    #expect(decision.evidence.freshness == .offline)
    #expect(decision.state == .granted)
  }
}
