import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A move of the cache file killed at every step: the process dies at the n-th call the move
/// makes to its files (open, read, write, sync, lock, shared memory, delete, ...), for every n
/// until the move completes, and the files keep what it wrote before, as SIGKILL leaves them.
/// Each time, every snapshot and queued purchase is in one of the two files, and the next call
/// completes the move.
@Suite("Moving the cache file: killed at every step")
struct RelocationKillTests {
  typealias Fixture = RelocationFixture

  /// What the new file holds once the move is complete.
  static let moved = Fixture.Contents(
    snapshots: [
      "A": (Fixture.widgetA.requestDate, Fixture.day2),
      "B": (Fixture.oldB.requestDate, Fixture.day0),
      "C": nil,
    ],
    purchases: ["t-1": "pending", "t-2": "synced", "t-3": "pending"])

  @Test(
    "each snapshot and queued purchase survives in one of the two files, and the next call completes the move"
  )
  func killedAtEveryCall() throws {
    var expected = RelocationSummary()
    expected.snapshotsMoved = 1
    expected.snapshotsKept = 1
    expected.purchasesMoved = 2
    expected.purchasesAlreadyQueued = 1
    var kills = 0
    var completedByRerun = 0
    for n in 1... {
      let directory = try TemporaryDirectory()
      let fixture = try Fixture(directory: directory)
      let vfs = try TestVFS()
      let cache = try fixture.openCache(at: fixture.newPath) { $0.vfsName = vfs.name }
      vfs.armKill(atCall: n)
      let outcome = Result { try cache.relocate(from: fixture.oldPath) }
      let killed = vfs.isDead
      // Only the move is killed, never the close after it; a dead process's connections go,
      // as its descriptors and locks would.
      if !killed { vfs.disarm() }
      try? cache.close()
      guard killed else {
        #expect(try outcome.get() == .moved(expected))
        #expect(try fixture.contents(of: fixture.newPath) == Self.moved)
        #expect(!FileManager.default.fileExists(atPath: fixture.oldPath))
        #expect(n > 20, "the move made only \(n - 1) calls: the kill reached no step")
        print(
          "relocation kill: \(kills) kills at every call of the move, \(completedByRerun) completed by the next call"
        )
        return
      }
      kills += 1
      #expect(throws: (any Error).self, "call \(n): the move went on after the kill") {
        try outcome.get()
      }
      try expectNothingLost(fixture, context: "killed at call \(n)")

      let rerun = try fixture.openCache(at: fixture.newPath)
      let second = try rerun.relocate(from: fixture.oldPath)
      try rerun.close()
      switch second {
      case .moved: completedByRerun += 1
      case .nothingToMove, .mergedNotRemoved:
        Issue.record("killed at call \(n): the next call answered \(second)")
      }
      #expect(try fixture.contents(of: fixture.newPath) == Self.moved, "killed at call \(n)")
      for suffix in ["", "-wal", "-shm", "-journal"] {
        #expect(
          !FileManager.default.fileExists(atPath: fixture.oldPath + suffix),
          "killed at call \(n): \(suffix) left")
      }
      #expect(n < 5_000, "the move never completes")
    }
  }

  /// Every snapshot that must survive, and every queued purchase, is in the old file or the
  /// new one, as it was.
  private func expectNothingLost(_ fixture: Fixture, context: String) throws {
    let old = try fixture.contents(of: fixture.oldPath)
    let new = try #require(try fixture.contents(of: fixture.newPath), "\(context): no new file")
    // A was the widget's and newer: it never leaves the new file.
    #expect(new.snapshots["A"]??.requestDate == Fixture.widgetA.requestDate, "\(context)")
    let b = [old?.snapshots["B"], new.snapshots["B"]].compactMap { $0 ?? nil }
    #expect(
      b.contains { $0.requestDate == Fixture.oldB.requestDate && $0.storedAt == Fixture.day0 },
      "\(context): B lost")
    for (transaction, state) in Self.moved.purchases {
      let found = [old?.purchases[transaction], new.purchases[transaction]].compactMap { $0 }
      #expect(!found.isEmpty, "\(context): \(transaction) lost")
      #expect(found.allSatisfy { $0 == state }, "\(context): \(transaction) is \(found)")
    }
  }
}
