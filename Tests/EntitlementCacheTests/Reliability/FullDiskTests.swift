import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A disk with no room left: every write the file needs fails with `SQLITE_FULL`, as the
/// fault VFS makes it, for as long as the test says.
@Suite("A full disk loses nothing")
struct FullDiskTests {
  @Test(
    "every write fails typed as full, the snapshot and its grant stay, and the read marks flush later"
  )
  func everyWriteKeepsWhatWasThere() throws {
    let directory = try TemporaryDirectory()
    let vfs = try TestVFS()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let cache = try Fixture.cache(in: directory, clock: clock) { $0.vfsName = vfs.name }
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let stored = try #require(try cache.load(Fixture.scopeA)?.snapshot?.jsonData)
    clock.advance(by: .hour)
    // A read an hour later raises the high-water mark in memory.
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    let markInMemory = try #require(try cache.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark)

    vfs.armFault(.write, at: 1, code: SQLITE_FULL, persistent: true)
    let expired = try StoreTest.snapshot(status: "expired")
    var failures: [(String, CacheError?)] = []
    func attempt(_ name: String, _ body: () throws -> Void) {
      do {
        try body()
        Issue.record("\(name) succeeded on a full disk")
      } catch {
        failures.append((name, error as? CacheError))
      }
    }
    attempt("store") { try cache.store(expired, for: Fixture.scopeA) }
    attempt("refresh failure") { try cache.recordRefreshFailure(for: Fixture.scopeA) }
    attempt("enqueue") {
      _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    }
    attempt("flush") { try cache.flush() }
    vfs.disarm()

    for (name, error) in failures {
      guard case .storage(_, let failure)? = error else {
        Issue.record("\(name): expected a storage failure, got \(error)")
        continue
      }
      #expect(failure.kind == .full, "\(name): \(error)")
    }
    #expect(failures.count == 4)
    // Nothing changed: the snapshot, its grant, the queue, and the mark memory holds.
    #expect(try cache.load(Fixture.scopeA)?.snapshot?.jsonData == stored)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(try cache.queuedPurchases(observedBy: Fixture.scopeA).isEmpty)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.deviceHighWaterMark == markInMemory)
    #expect(try StoreTest.persistedHighWaterMark(cache.path, Fixture.scopeA) != markInMemory)
    // Room again: the marks kept in memory reach the file.
    try cache.flush()
    #expect(try StoreTest.persistedHighWaterMark(cache.path, Fixture.scopeA) == markInMemory)
  }
}
