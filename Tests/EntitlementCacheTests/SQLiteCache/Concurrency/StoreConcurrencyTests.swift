import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// One writer, readers that never wait for it, and no reader ever sees half a snapshot.
@Suite("Store concurrency")
struct StoreConcurrencyTests {
  /// Both entitlements granted, or both revoked: a reader seeing exactly one saw a torn write.
  static func pair(active: Bool) throws -> CustomerInfoSnapshot {
    let status = active ? "active" : "revoked"
    return try Fixture.snapshot(
      """
      {"requestDate": "2026-11-30T12:00:00Z", "entitlements": {
        "pro": {"status": "\(status)", "expiresAt": "2026-12-30T12:00:00Z"},
        "gold": {"status": "\(status)", "expiresAt": "2026-12-30T12:00:00Z"}}}
      """)
  }

  @Test func readersInThisAndAnotherCacheNeverSeeATornWrite() async throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let writer = try Fixture.cache(in: directory, clock: clock)
    let other = try Fixture.cache(in: directory, clock: clock) {
      $0.changeCheckInterval = .zero
    }
    let granted = try Self.pair(active: true)
    let revoked = try Self.pair(active: false)
    try writer.store(granted, for: Fixture.scopeA)

    // Each task returns (torn reads, completed writes); a write that failed would otherwise
    // leave the readers nothing to tear and the test passing vacuously.
    let (torn, writes) = await withTaskGroup(of: (Int, Int).self) { group in
      group.addTask {
        var written = 0
        for round in 0..<200 {
          do {
            try writer.store(round.isMultiple(of: 2) ? revoked : granted, for: Fixture.scopeA)
            written += 1
          } catch {
            Issue.record("write \(round) failed: \(error)")
          }
        }
        return (0, written)
      }
      for cache in [writer, other, writer, other] {
        group.addTask {
          var torn = 0
          for _ in 0..<500 {
            let keys = cache.activeEntitlementKeys(for: Fixture.scopeA)
            if keys != [] && keys != ["pro", "gold"] { torn += 1 }
          }
          return (torn, 0)
        }
      }
      return await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
    }
    #expect(writes == 200)
    #expect(torn == 0)
    // The last write (round 199) stored the granted pair; both caches agree.
    #expect(writer.activeEntitlementKeys(for: Fixture.scopeA) == ["pro", "gold"])
    #expect(other.activeEntitlementKeys(for: Fixture.scopeA) == ["pro", "gold"])
  }

  @Test func writeBlockedByAnotherProcessFailsAndReadsStillAnswer() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    // No busy wait, so the test does not sleep; the error is the same after any timeout.
    let cache = try Fixture.cache(in: directory, clock: clock) { $0.busyTimeout = 0 }
    let good = try Fixture.snapshot()
    try cache.store(good, for: Fixture.scopeA)

    let otherProcess = try StoreTest.connection(cache.path)
    try otherProcess.execute("BEGIN IMMEDIATE")
    let error = try #require(throws: CacheError.self) {
      try cache.store(try StoreTest.snapshot(status: "revoked"), for: Fixture.scopeA)
    }
    guard case .storage(.store, _) = error else {
      Issue.record("expected a storage error, got \(error)")
      return
    }
    #expect(error.sqliteCause?.isBusy == true)
    // WAL: the lock holder does not block reads, and nothing of the failed write is visible.
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(try cache.load(Fixture.scopeA)?.snapshot?.jsonData == good.jsonData)

    try otherProcess.execute("ROLLBACK")
    try cache.store(try StoreTest.snapshot(status: "revoked"), for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.revoked))
  }
}
