import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Moving the cache file (into an App Group container, when a widget arrives): the old file is
/// merged into the new one, scope by scope and purchase by purchase, then removed.
@Suite("Moving the cache file")
struct RelocationTests {
  let directory: TemporaryDirectory
  let fixture: RelocationFixture

  init() throws {
    directory = try TemporaryDirectory()
    fixture = try RelocationFixture(directory: directory)
  }

  typealias Fixture = RelocationFixture

  @Test("the newer snapshot of each scope wins, with its age, and every purchase is queued once")
  func mergesIntoAFileAWidgetCreated() throws {
    let cache = try fixture.openCache(at: fixture.newPath)
    let outcome = try cache.relocate(from: fixture.oldPath)
    var expected = RelocationSummary()
    expected.snapshotsMoved = 1
    expected.snapshotsKept = 1
    expected.purchasesMoved = 2
    expected.purchasesAlreadyQueued = 1
    #expect(outcome == .moved(expected))

    // A: the widget's answer, newer, stays. B: the old file's, stored on day 0, whose `pro`
    // ended on day 1: still past, as it would be had the file never moved.
    let a = cache.access(to: "pro", for: EntitlementCacheTests.Fixture.scopeA)
    #expect(a.state == .granted)
    #expect(a.evidence.storedAt == Fixture.day2)
    let b = cache.access(to: "pro", for: EntitlementCacheTests.Fixture.scopeB)
    #expect(b.state == .denied(.expired))
    #expect(b.evidence.storedAt == Fixture.day0)
    #expect(b.evidence.estimatedServerTime == Fixture.oldB.requestDate + 2 * .day)
    // B's purchase still to post moved with it, and the scope says so.
    #expect(b.evidence.pendingPurchase)
    let c = try #require(try cache.load(Fixture.scopeC))
    #expect(c.snapshot == nil)
    #expect(c.bookkeeping.lastRefreshFailureReason == "offline")

    try cache.close()
    let contents = try #require(try fixture.contents(of: fixture.newPath))
    #expect(contents.purchases == ["t-1": "pending", "t-2": "synced", "t-3": "pending"])
    for suffix in ["", "-wal", "-shm", "-journal"] {
      #expect(!FileManager.default.fileExists(atPath: fixture.oldPath + suffix), "\(suffix)")
    }
  }

  @Test("an old snapshot newer than the new file's replaces it, keeping its own bookkeeping")
  func newerOldSnapshotWins() throws {
    // The widget's file holds B answered before the old file's B.
    let widget = try fixture.openCache(at: fixture.newPath)
    let earlier = try Fixture.snapshot(
      requestDate: Fixture.oldB.requestDate - .day, proUntil: Fixture.day2 + .day)
    try widget.store(earlier, for: EntitlementCacheTests.Fixture.scopeB)
    try widget.close()

    let cache = try fixture.openCache(at: fixture.newPath)
    guard case .moved(let summary) = try cache.relocate(from: fixture.oldPath) else {
      Issue.record("not moved")
      return
    }
    #expect(summary.snapshotsMoved == 1)
    #expect(summary.snapshotsKept == 1)
    let b = try #require(try cache.load(EntitlementCacheTests.Fixture.scopeB))
    #expect(b.snapshot?.customerInfo.requestDate == Fixture.oldB.requestDate)
    #expect(b.bookkeeping.storedAt == Fixture.day0)
    #expect(
      cache.access(to: "pro", for: EntitlementCacheTests.Fixture.scopeB).state
        == .denied(.expired))
  }

  @Test("once moved, a call finds nothing to move, from this instance or a new one")
  func secondCallFindsNothing() throws {
    let cache = try fixture.openCache(at: fixture.newPath)
    guard case .moved = try cache.relocate(from: fixture.oldPath) else {
      Issue.record("not moved")
      return
    }
    #expect(try cache.relocate(from: fixture.oldPath) == .nothingToMove)
    try cache.close()
    let next = try fixture.openCache(at: fixture.newPath)
    #expect(try next.relocate(from: fixture.oldPath) == .nothingToMove)
    #expect(!FileManager.default.fileExists(atPath: fixture.oldPath))
  }

  @Test(
    "an old file still open elsewhere is merged and left; the next call removes it, merging nothing again"
  )
  func oldFileInUse() throws {
    let holder = try fixture.openCache(at: fixture.oldPath)
    // An open connection that has read the file, as another process's would have.
    _ = holder.access(to: "pro", for: EntitlementCacheTests.Fixture.scopeA)
    let cache = try fixture.openCache(at: fixture.newPath)
    guard case .mergedNotRemoved(let first) = try cache.relocate(from: fixture.oldPath) else {
      Issue.record("removed a file another connection had open")
      return
    }
    #expect(first.purchasesMoved == 2)
    #expect(FileManager.default.fileExists(atPath: fixture.oldPath))
    #expect(try fixture.contents(of: fixture.oldPath) != nil)

    // Meanwhile the new file posts t-3 and retention lets it go: a second merge would queue
    // it again, and post it twice.
    _ = try cache.updatePurchase(
      "t-3", observedBy: EntitlementCacheTests.Fixture.scopeB, to: .synced)
    try cache.testingSeam.withWriter { connection in
      try connection.execute("DELETE FROM purchase_queue WHERE transaction_id = 't-3'")
    }
    try holder.close()

    var again = RelocationSummary()
    again.mergedEarlier = true
    #expect(try cache.relocate(from: fixture.oldPath) == .moved(again))
    #expect(!FileManager.default.fileExists(atPath: fixture.oldPath))
    #expect(try cache.queuedPurchases(observedBy: EntitlementCacheTests.Fixture.scopeB).isEmpty)
  }

  @Test("a file never merged into itself: refused, and the file is as it was")
  func ownFileRefused() throws {
    let cache = try fixture.openCache(at: fixture.newPath)
    let before = try fixture.contents(of: fixture.newPath)
    for path in [fixture.newPath, directory.path("Group/../Group/entitlements.sqlite")] {
      #expect(
        throws: CacheError.invalidConfiguration(
          field: "oldPath", problem: "names this cache's own file")
      ) {
        try cache.relocate(from: path)
      }
    }
    #expect(try fixture.contents(of: fixture.newPath) == before)
  }

  @Test("a damaged old file is reported and left as it is; nothing is merged")
  func damagedOldFileLeft() throws {
    let garbage = Data(repeating: 0x5A, count: 8_192)
    try FileManager.default.removeItem(atPath: fixture.oldPath)
    try garbage.write(to: URL(fileURLWithPath: fixture.oldPath))
    let cache = try fixture.openCache(at: fixture.newPath)
    let before = try fixture.contents(of: fixture.newPath)
    do {
      _ = try cache.relocate(from: fixture.oldPath)
      Issue.record("a damaged file was moved")
    } catch {
      guard case .storage(.relocate, let failure) = error else {
        Issue.record("\(error)")
        return
      }
      #expect(failure.kind == .damaged)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.oldPath)) == garbage)
    #expect(try fixture.contents(of: fixture.newPath) == before)
  }

  @Test("a directory where the old file was is an error; a missing folder is nothing to move")
  func oddOldPaths() throws {
    let cache = try fixture.openCache(at: fixture.newPath)
    #expect(
      try cache.relocate(from: directory.path("Nowhere/entitlements.sqlite")) == .nothingToMove)
    #expect(throws: CacheError.self) { try cache.relocate(from: directory.path("Library")) }
  }

  @Test("with trust roots, a verified snapshot is never replaced by one that is not")
  func verifiedSnapshotKept() throws {
    let trusted: (inout CacheConfiguration) -> Void = { configuration in
      configuration.trustRoots = try? TestSigner.roots()
    }
    let scope = EntitlementCacheTests.Fixture.scopeB
    let signed = try TrustFixture.signed(
      Fixture.snapshot(requestDate: Fixture.day2 - .hour, proUntil: Fixture.day2 + .day)
        .jsonData, for: scope)
    let widget = try fixture.openCache(at: fixture.newPath, configure: trusted)
    try widget.store(signed, for: scope)
    try widget.close()
    // The old file's B is unsigned and, here, newer.
    let old = try fixture.openCache(at: fixture.oldPath)
    try old.store(
      Fixture.snapshot(requestDate: Fixture.day2, proUntil: Fixture.day2 + 90 * .day), for: scope)
    try old.close()

    let cache = try fixture.openCache(at: fixture.newPath, configure: trusted)
    guard case .moved = try cache.relocate(from: fixture.oldPath) else {
      Issue.record("not moved")
      return
    }
    let b = cache.access(to: "pro", for: scope)
    #expect(b.evidence.verification == .known(.verified))
    #expect(b.isHighTrust)
    #expect(try cache.load(scope)?.snapshot?.customerInfo.requestDate == Fixture.day2 - .hour)
  }

  @Test("a signed snapshot moves with its signature, and is verified again from the new file")
  func signedSnapshotMoves() throws {
    let trusted: (inout CacheConfiguration) -> Void = { configuration in
      configuration.trustRoots = try? TestSigner.roots()
    }
    let scope = Fixture.scopeC
    let old = try fixture.openCache(at: fixture.oldPath, configure: trusted)
    try old.store(
      TrustFixture.signed(
        Fixture.snapshot(requestDate: Fixture.day2 - .minute, proUntil: Fixture.day2 + .day)
          .jsonData, for: scope),
      for: scope)
    try old.close()
    let cache = try fixture.openCache(at: fixture.newPath, configure: trusted)
    guard case .moved = try cache.relocate(from: fixture.oldPath) else {
      Issue.record("not moved")
      return
    }
    let c = cache.access(to: "pro", for: scope)
    #expect(c.state == .granted)
    #expect(c.isHighTrust)
  }
}
