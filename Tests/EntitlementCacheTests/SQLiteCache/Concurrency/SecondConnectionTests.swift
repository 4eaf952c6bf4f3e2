import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Two caches on one file stand in for an app and its extension: each sees the other's
/// committed writes, at once with a check interval of zero and within the interval otherwise.
@Suite("Second connection")
struct SecondConnectionTests {
  static func pair(
    _ directory: TemporaryDirectory, clock: ManualClock, interval: TimeInterval
  ) throws -> (SQLiteCustomerInfoCache, SQLiteCustomerInfoCache) {
    let first = try Fixture.cache(in: directory, clock: clock) {
      $0.changeCheckInterval = .seconds(interval)
    }
    let second = try Fixture.cache(in: directory, clock: clock) {
      $0.changeCheckInterval = .seconds(interval)
    }
    return (first, second)
  }

  @Test func rawConnectionSeesACommittedWrite() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    let raw = try StoreTest.connection(cache.path, readOnly: true)
    #expect(try raw.scalarInt("SELECT count(*) FROM scope") == 0)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(try raw.scalarInt("SELECT count(*) FROM scope") == 1)
    #expect(try raw.scalarInt("SELECT count(*) FROM entitlement") == 2)
  }

  @Test func writeIsVisibleToTheOtherCacheOnItsNextReadWithZeroInterval() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let (app, widget) = try Self.pair(directory, clock: clock, interval: 0)

    // The widget has the scope resident, as "nothing stored".
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    #expect(widget.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    try app.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(widget.activeEntitlementKeys(for: Fixture.scopeA) == ["pro", "lifetime"])

    // A replacement, a refresh failure and a removal each show up the same way.
    clock.advance(by: .minute)
    try app.store(try StoreTest.snapshot(status: "revoked"), for: Fixture.scopeA)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .denied(.revoked))
    try app.recordRefreshFailure(for: Fixture.scopeA, reason: nil)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).evidence.freshness == .offline)
    try app.remove(Fixture.scopeA)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))

    // And the other way round.
    try widget.store(try Fixture.snapshot(), for: Fixture.scopeB)
    #expect(app.access(to: "pro", for: Fixture.scopeB).state == .granted)
  }

  @Test func pruneByOneCacheIsSeenByTheOther() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let (app, widget) = try Self.pair(directory, clock: clock, interval: 0)
    try app.store(try StoreTest.snapshot(status: "expired"), for: Fixture.scopeA)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    #expect(try app.purgeUnusable() == 1)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
  }

  @Test func writeIsVisibleAfterTheCheckInterval() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let interval = 0.001
    let (app, widget) = try Self.pair(directory, clock: clock, interval: interval)
    // The first read comes right after opening, before any check was due.
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    try app.store(try Fixture.snapshot(), for: Fixture.scopeA)
    StoreTest.spin(seconds: interval)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .granted)
  }

  @Test func residentCopyIsKeptUntilTheIntervalPasses() throws {
    // A read within the interval is answered from memory, without asking the file: that is
    // what keeps the hot path free of I/O. Every read answers from the one resident copy, so
    // load() agrees with access(to:); asking for the change mark checks at once.
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let (app, widget) = try Self.pair(directory, clock: clock, interval: .hour)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    try app.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    #expect(try widget.load(Fixture.scopeA) == nil)
    #expect(try widget.evaluatedCustomerInfo(for: Fixture.scopeA) == nil)
    _ = widget.changeMark()
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(try widget.load(Fixture.scopeA)?.snapshot != nil)
  }

  /// A snapshot entitling `pro` with `status` and `extra` active, at the fixture's request date.
  static func twoKeys(pro status: String) throws -> CustomerInfoSnapshot {
    try Fixture.snapshot(
      """
      {"requestDate": "2026-11-30T12:00:00Z", "verification": "verified",
       "entitlements": {
         "pro": {"status": "\(status)", "expiresAt": "2026-12-30T12:00:00Z",
           "verifiedAt": "2026-11-30T12:00:00Z", "source": "purchase"},
         "extra": {"status": "active", "expiresAt": "2026-12-30T12:00:00Z",
           "verifiedAt": "2026-11-30T12:00:00Z", "source": "purchase"}}}
      """)
  }

  /// Two snapshots written at the same instant for the same server response time: only the
  /// row's revision tells them apart, and a scope read key by key must not mix them.
  @Test func aRewriteAtTheSameInstantIsNotMixedIntoAPartlyReadScope() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let (app, widget) = try Self.pair(directory, clock: clock, interval: .hour)
    try app.store(try Self.twoKeys(pro: "active"), for: Fixture.scopeA)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .granted)

    try app.store(try Self.twoKeys(pro: "revoked"), for: Fixture.scopeA)
    // "extra" is not resident yet, so the widget reads the row, now at a later revision: the
    // whole resident is replaced rather than "extra" added beside the old "pro".
    #expect(widget.access(to: "extra", for: Fixture.scopeA).state == .granted)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .denied(.revoked))
  }

  /// A scope removed and written again can get its old row id back; its revision comes from the
  /// file's counter, so a scope read key by key still never mixes the two snapshots.
  @Test func aRemovedAndRewrittenScopeIsNotMixedIntoAPartlyReadScope() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let (app, widget) = try Self.pair(directory, clock: clock, interval: .hour)
    try app.store(try Self.twoKeys(pro: "active"), for: Fixture.scopeA)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .granted)

    try app.remove(Fixture.scopeA)
    try app.store(try Self.twoKeys(pro: "revoked"), for: Fixture.scopeA)
    #expect(widget.access(to: "extra", for: Fixture.scopeA).state == .granted)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .denied(.revoked))
  }

  /// Another tool deleting the revision counter's row costs nothing: the row comes back past
  /// every revision in the file, and no scope is lost to a "damaged" verdict.
  @Test func aDeletedRevisionCounterRowIsRestored() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let (app, widget) = try Self.pair(directory, clock: clock, interval: .hour)
    try app.store(try Self.twoKeys(pro: "active"), for: Fixture.scopeA)
    try app.store(try Fixture.snapshot(), for: Fixture.scopeB)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .granted)
    try StoreTest.connection(app.path).execute("DELETE FROM revision_counter")

    try app.store(try Self.twoKeys(pro: "revoked"), for: Fixture.scopeA)
    #expect(app.damageReport == nil)
    #expect(app.access(to: "pro", for: Fixture.scopeB).state == .granted)
    // The new revision is past the old one, so the widget's partial resident is not reused.
    #expect(widget.access(to: "extra", for: Fixture.scopeA).state == .granted)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .denied(.revoked))
    let raw = try StoreTest.connection(app.path, readOnly: true)
    #expect(try raw.scalarInt("SELECT value FROM revision_counter") == 3)
  }

  /// A counter edited to the largest integer, or to text, moves nowhere: the write is refused
  /// and the snapshot before it stays. SQLite turned `value + 1` past 2^63 - 1 into a REAL, and
  /// every later write shared one revision, which readers tell versions of a row apart by.
  @Test(arguments: ["9223372036854775807", "'seven'"])
  func anExhaustedRevisionCounterRefusesTheWrite(value: String) throws {
    let directory = try TemporaryDirectory()
    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate))
    try cache.store(try Self.twoKeys(pro: "active"), for: Fixture.scopeA)
    try StoreTest.connection(cache.path).execute("UPDATE revision_counter SET value = \(value)")

    #expect(throws: CacheError.self) {
      try cache.store(try Self.twoKeys(pro: "revoked"), for: Fixture.scopeA)
    }
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    let raw = try StoreTest.connection(cache.path, readOnly: true)
    #expect(try raw.scalarText("SELECT typeof(value) FROM revision_counter") != "real")
    #expect(cache.damageReport == nil)
  }

  /// Keys read one by one all stay in memory: the file changing under them (unseen within the
  /// interval) does not change their answers, so none of them was read from it again.
  @Test func keysReadOneByOneAllStayResident() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock) {
      $0.changeCheckInterval = .hour
    }
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    cache.dropResidentState(for: Fixture.scopeA)
    let keys = ["pro", "lifetime", "absent"]
    let first = keys.map { cache.access(to: $0, for: Fixture.scopeA).state }
    #expect(first == [.granted, .granted, .denied(.notEntitled)])

    let raw = try StoreTest.connection(cache.path)
    try raw.execute("UPDATE entitlement SET status = 'revoked'")
    try raw.execute("DELETE FROM scope")
    for _ in 0..<2 {
      #expect(keys.map { cache.access(to: $0, for: Fixture.scopeA).state } == first)
      #expect(
        keys.reversed().map { cache.access(to: $0, for: Fixture.scopeA).state } == first.reversed())
    }
  }

  @Test func ownWritesAreSeenAtOnceWhateverTheInterval() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock) {
      $0.changeCheckInterval = .hour
    }
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    try cache.remove(Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
  }

  /// The default cache checks for other connections' writes every 50 ms: not again right
  /// after a check, and again once 50 ms have passed on the monotonic clock (spun, not slept).
  @Test func defaultIntervalIsFiftyMilliseconds() throws {
    let directory = try TemporaryDirectory()
    let cache = try SQLiteCustomerInfoCache(
      path: directory.path("cache.sqlite"), clock: ManualClock(Fixture.requestDate).cacheClock)
    let seam = cache.testingSeam
    #expect(seam.crossConnectionCheckInterval == 50_000_000)
    StoreTest.spin(seconds: 0.06)
    #expect(seam.isCrossConnectionCheckDue)
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    StoreTest.spin(seconds: 0.06)
    #expect(seam.isCrossConnectionCheckDue)
  }
}

/// The invalidation rule itself, without waiting for any clock, through the store's testing
/// seam.
@Suite("Cross-connection invalidation")
struct CrossConnectionInvalidationTests {
  /// A cache holding one snapshot for scope A, whose own reads do not check in the test's
  /// time unless `checkInterval` is 0, and the writer's `data_version` it recorded at open.
  static func cache(
    _ directory: TemporaryDirectory, checkInterval: TimeInterval = .hour
  ) throws -> (SQLiteCustomerInfoCache, baseline: Int64) {
    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate)) {
      $0.changeCheckInterval = .seconds(checkInterval)
    }
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let baseline = try cache.testingSeam.withWriter { try $0.scalarInt("PRAGMA data_version") }
    return (cache, baseline)
  }

  @Test func checkIsDueOnlyAfterTheInterval() throws {
    let directory = try TemporaryDirectory()
    let (always, _) = try Self.cache(directory, checkInterval: 0)
    #expect(always.testingSeam.isCrossConnectionCheckDue)
    let (hourly, _) = try Self.cache(directory, checkInterval: .hour)
    #expect(!hourly.testingSeam.isCrossConnectionCheckDue)
    _ = hourly.access(to: "pro", for: Fixture.scopeA)
    #expect(!hourly.testingSeam.isCrossConnectionCheckDue)
  }

  @Test func firstCheckComparesWithTheVersionRecordedAtOpen() throws {
    // Residents read before the first check are judged against the baseline from open: a
    // commit by another connection in between must drop them.
    let directory = try TemporaryDirectory()
    let (cache, baseline) = try Self.cache(directory)
    let seam = cache.testingSeam
    try seam.readIntoMemory(Fixture.scopeA)
    #expect(seam.isResident(Fixture.scopeA))
    seam.observe(dataVersion: baseline + 1)
    #expect(seam.residentCount == 0)
  }

  @Test func unchangedVersionKeepsResidentsAndAChangeDropsThem() throws {
    let directory = try TemporaryDirectory()
    let (cache, baseline) = try Self.cache(directory)
    let seam = cache.testingSeam
    seam.observe(dataVersion: baseline)
    try seam.readIntoMemory(Fixture.scopeA)
    seam.observe(dataVersion: baseline)
    #expect(seam.isResident(Fixture.scopeA))
    seam.observe(dataVersion: baseline + 1)
    #expect(seam.residentCount == 0)
  }

  /// A version read from a writer since replaced (the file was damaged and moved aside while
  /// a read waited for the reads lock) is not recorded against the new writer.
  @Test func aVersionFromAReplacedWriterIsIgnored() throws {
    let directory = try TemporaryDirectory()
    let (cache, baseline) = try Self.cache(directory)
    let seam = cache.testingSeam
    try seam.readIntoMemory(Fixture.scopeA)
    seam.observeFromAnotherWriter(dataVersion: baseline + 7)
    #expect(seam.isResident(Fixture.scopeA))
    // The baseline is still the writer's own: its unchanged version keeps the residents.
    seam.observe(dataVersion: baseline)
    #expect(seam.isResident(Fixture.scopeA))
  }

  @Test func droppedResidentsKeepTheirUnpersistedReadTime() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock) {
      $0.changeCheckInterval = .hour
    }
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let seam = cache.testingSeam
    let later = Fixture.requestDate.addingTimeInterval(.hour)
    clock.set(later)
    _ = cache.access(to: "pro", for: Fixture.scopeA)
    seam.observe(dataVersion: nil)
    #expect(seam.residentCount == 0)
    let marks = try #require(seam.unpersistedMarks[Fixture.scopeA.key])
    #expect(marks.highWaterMark == later && marks.lastUsedAt == later)
    #expect(marks.refreshRevision != nil)
  }
}
