import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Read marks, the boot clock and a read's policy at the edges: a reboot, a cache that must not
/// write, a closed cache, a flush with nothing to persist. Each failed once.
@Suite("Read marks, the boot clock and a read's policy at the edges")
struct ReadMarkEdgeCaseTests {

  @Test("evaluatedCustomerInfo keeps the boot clock's measure past a reboot, as access does")
  func evaluatedViewRaisesTheBootMeasuredMark() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.t0, bootSession: "boot-1")
    let cache = try Fixture.cache(in: directory, clock: clock)
    let daily = Fixture.info([
      "pro": Fixture.entitlement(.active, expiresAt: Fixture.at(.day))
    ])
    try cache.store(try CustomerInfoSnapshot(daily), for: Fixture.scopeA)
    clock.set(Fixture.at(-20 * .day))
    clock.advance(by: .seconds(2 * .day))
    let view = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(view.decisions["pro"]?.state == .denied(.expired))
    try cache.flush()
    clock.reboot(session: "boot-2")
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    #expect(
      try Fixture.cache(in: directory, clock: clock).access(to: "pro", for: Fixture.scopeA).state
        == .denied(.expired))
  }

  @Test("a cache that must not persist read marks does not, not even with its next write")
  func readMarksStayInMemoryWhenTheConfigurationSaysSo() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.t0)
    let app = try Fixture.cache(in: directory, clock: clock)
    try app.store(
      try CustomerInfoSnapshot(Fixture.info(["pro": Fixture.monthly])), for: Fixture.scopeA)
    let toolClock = ManualClock(Fixture.at(365 * .day))
    let tool = try Fixture.cache(in: directory, clock: toolClock) {
      $0.persistsReadTimeBookkeeping = false
    }
    #expect(tool.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    try tool.recordRefreshFailure(for: Fixture.scopeB, reason: nil)
    try tool.flush()
    try tool.close()
    #expect(try app.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark == Fixture.t0)
    clock.advance(by: .seconds(.minute))
    let decision = try Fixture.cache(in: directory, clock: clock).access(
      to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .granted)
    #expect(!decision.evidence.clockRollbackSuspected)
  }

  @Test("a clock of the app's own keeps the system boot clock unless told otherwise")
  func customClockKeepsTheBootClock() {
    let custom = CacheClock(now: { Date() })
    #if os(Linux)
      #expect(custom.bootInstant() != nil)
    #endif
    #expect(CacheClock.fixed(Fixture.t0).bootInstant() == nil)
    #expect(CacheClock(now: { Date() }, bootInstant: { nil }).bootInstant() == nil)
  }

  @Test("a policy passed to a read is checked: out of range it fails closed, never open")
  func perCallPolicyIsChecked() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.t0)
    let cache = try Fixture.cache(in: directory, clock: clock)
    let lifetime = Fixture.info(["pro": Fixture.entitlement(.active)])
    try cache.store(try CustomerInfoSnapshot(lifetime), for: Fixture.scopeA)
    var broken = OfflinePolicy.conservative
    broken.nonExpiringMaxOfflineAge = .nan
    clock.advance(by: .seconds(400 * .day))
    let decision = cache.access(to: "pro", for: Fixture.scopeA, policy: broken)
    #expect(decision.state == .offlineUnavailable(.unreadable))
    #expect(
      cache.lastReadFailure?.error
        == .invalidConfiguration(
          field: "policy.nonExpiringMaxOfflineAge", problem: "must be a finite number of seconds"))
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA, policy: broken).isEmpty)
    #expect(throws: CacheError.self) {
      try cache.evaluatedCustomerInfo(for: Fixture.scopeA, policy: broken)
    }
    #expect(throws: CacheError.self) { try cache.purgeUnusable(policy: broken) }
    #expect(throws: CacheError.self) {
      try CacheInspector(cache).scopeSummaries(policy: broken)
    }
    #expect(try cache.load(Fixture.scopeA) != nil, "nothing was purged")
  }

  @Test("after close the inspector says closed, never that the file is empty")
  func inspectorAfterCloseThrows() throws {
    let directory = try TemporaryDirectory()
    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.t0))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try cache.close()
    #expect(throws: CacheError.closed) { try CacheInspector(cache).scopeSummaries() }
    #expect(throws: InspectionError.cache(.closed)) {
      try CacheInspector(cache).removeScope(hashPrefix: Fixture.scopeA.key.hexPrefix)
    }
  }

  @Test("flushing with nothing to persist opens no transaction, so another writer cannot block it")
  func emptyFlushOpensNoTransaction() throws {
    let directory = try TemporaryDirectory()
    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.t0)) {
      $0.busyTimeout = 0
    }
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    let otherProcess = try StoreTest.connection(cache.path)
    try otherProcess.execute("BEGIN IMMEDIATE")
    try cache.flush()
    try cache.close()
    try otherProcess.execute("ROLLBACK")
  }
}
