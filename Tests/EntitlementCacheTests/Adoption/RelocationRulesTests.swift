import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The rules of a move where the two files disagree, and what it owes the disk: each case an
/// outside review of the first version found broken.
@Suite("Moving the cache file: when the files disagree")
struct RelocationRulesTests {
  let directory: TemporaryDirectory
  let fixture: RelocationFixture

  init() throws {
    directory = try TemporaryDirectory()
    fixture = try RelocationFixture(directory: directory)
  }

  typealias Fixture = RelocationFixture
  static let scopeB = EntitlementCacheTests.Fixture.scopeB

  static func trusted(_ configuration: inout CacheConfiguration) {
    configuration.trustRoots = try? TestSigner.roots()
  }

  /// Stores `snapshot` for B in the file at `path`, through a cache configured by `configure`.
  func store(
    _ snapshot: CustomerInfoSnapshot, at path: String,
    configure: (inout CacheConfiguration) -> Void = { _ in }
  ) throws {
    let cache = try fixture.openCache(at: path, configure: configure)
    try cache.store(snapshot, for: Self.scopeB)
    try cache.close()
  }

  func move(configure: (inout CacheConfiguration) -> Void = { _ in }) throws
    -> SQLiteCustomerInfoCache
  {
    let cache = try fixture.openCache(at: fixture.newPath, configure: configure)
    guard case .moved = try cache.relocate(from: fixture.oldPath) else {
      Issue.record("not moved")
      return cache
    }
    return cache
  }

  @Test("a power cut right after the move loses nothing, whatever the durability")
  func durableBeforeTheOldFileGoes() throws {
    let vfs = try TestVFS()
    let cache = try fixture.openCache(at: fixture.newPath) { $0.vfsName = vfs.name }
    guard case .moved = try cache.relocate(from: fixture.oldPath) else {
      Issue.record("not moved")
      return
    }
    try vfs.cutPower(.dropAll)
    try? cache.close()
    #expect(try fixture.contents(of: fixture.newPath) == RelocationKillTests.moved)
    #expect(!FileManager.default.fileExists(atPath: fixture.oldPath))
  }

  @Test("with trust roots, a verdict is checked again: a verified row edited since loses")
  func editedVerifiedRowLoses() throws {
    let signed = { (requestDate: Date) throws -> CustomerInfoSnapshot in
      try TrustFixture.signed(
        Fixture.snapshot(requestDate: requestDate, proUntil: Fixture.day2 + .day).jsonData,
        for: Self.scopeB)
    }
    try store(signed(Fixture.day2 - 2 * .hour), at: fixture.newPath, configure: Self.trusted)
    try store(signed(Fixture.day2 - .hour), at: fixture.oldPath, configure: Self.trusted)
    // The old row now claims a day later than it was signed for.
    try StoreTest.connection(fixture.oldPath).execute(
      "UPDATE scope SET server_time = server_time + 86400000")
    let cache = try move(configure: Self.trusted)
    let b = cache.access(to: "pro", for: Self.scopeB)
    #expect(b.evidence.verification == .known(.verified))
    #expect(
      try cache.load(Self.scopeB)?.snapshot?.customerInfo.requestDate == Fixture.day2 - 2 * .hour)
  }

  @Test("with trust roots, of two snapshots neither verified, the newer still wins")
  func unverifiedNewerKept() throws {
    try store(
      Fixture.snapshot(requestDate: Fixture.day2, proUntil: Fixture.day2 + 30 * .day),
      at: fixture.newPath, configure: Self.trusted)
    let cache = try move(configure: Self.trusted)
    #expect(try cache.load(Self.scopeB)?.snapshot?.customerInfo.requestDate == Fixture.day2)
    #expect(cache.access(to: "pro", for: Self.scopeB).state == .granted)
  }

  @Test("a snapshot as new as the moving one is kept")
  func tieKeepsTheFilesOwn() throws {
    try store(
      Fixture.snapshot(requestDate: Fixture.oldB.requestDate, proUntil: Fixture.day2 + .day),
      at: fixture.newPath)
    let cache = try move()
    let b = try #require(try cache.load(Self.scopeB))
    #expect(b.bookkeeping.storedAt == Fixture.day2)
    #expect(cache.access(to: "pro", for: Self.scopeB).state == .granted)
  }

  @Test("a transaction both files queued keeps the state that went further")
  func postedStateWins() throws {
    // The widget queued t-2 too; the old file had posted it.
    let widget = try fixture.openCache(at: fixture.newPath)
    _ = try widget.enqueue(
      PurchaseFixture.purchase("t-2"), observedBy: EntitlementCacheTests.Fixture.scopeA)
    try widget.close()
    let cache = try move()
    let entries = try cache.queuedPurchases(observedBy: EntitlementCacheTests.Fixture.scopeA)
    #expect(entries.map(\.transactionID) == ["t-1", "t-2"])
    #expect(entries.first { $0.transactionID == "t-2" }?.state == .synced)
    #expect(try cache.unsentPurchases(observedBy: EntitlementCacheTests.Fixture.scopeA).count == 1)
  }

  @Test("entries are posted in the order they were observed, across both files")
  func observationOrderAcrossFiles() throws {
    // The widget observed w-1 for B on day 2; the old file's t-3 was observed on day 0.
    let widget = try fixture.openCache(at: fixture.newPath)
    _ = try widget.enqueue(PurchaseFixture.purchase("w-1"), observedBy: Self.scopeB)
    try widget.close()
    let cache = try move()
    #expect(
      try cache.unsentPurchases(observedBy: Self.scopeB).map(\.transactionID) == ["t-3", "w-1"])
  }

  @Test("an old path that is a link: the file it names goes, with the link")
  func linkedOldFile() throws {
    let link = directory.path("Library/link.sqlite")
    try FileManager.default.createSymbolicLink(
      atPath: link, withDestinationPath: fixture.oldPath)
    let cache = try fixture.openCache(at: fixture.newPath)
    guard case .moved = try cache.relocate(from: link) else {
      Issue.record("not moved")
      return
    }
    #expect(!FileManager.default.fileExists(atPath: fixture.oldPath))
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == nil)
    #expect(try cache.relocate(from: link) == .nothingToMove)
  }

  @Test("a closed cache touches nothing of the old file")
  func closedCacheTouchesNothing() throws {
    let cache = try fixture.openCache(at: fixture.newPath)
    try cache.close()
    let before = try Data(contentsOf: URL(fileURLWithPath: fixture.oldPath))
    #expect(throws: CacheError.closed) { try cache.relocate(from: fixture.oldPath) }
    #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.oldPath)) == before)
  }
}
