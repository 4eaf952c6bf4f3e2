import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// An import stores a previous cache's snapshot as of its save: each rule of adopting the cache
/// on an installed base, on every cache that offers the import.
@Suite("Import as of the save")
final class ImportTests {
  /// Where the SQLite caches' files go; removed with the suite's instance, after each test.
  let directory: TemporaryDirectory
  private var files = 0

  init() throws {
    directory = try TemporaryDirectory()
  }

  /// The device's clock now: 2026-12-05T12:00:00Z.
  static let now = Fixture.date("2026-12-05T12:00:00Z")
  /// The previous cache saved its snapshot 10 days before: 2026-11-25T12:00:00Z.
  static let savedAt = Fixture.date("2026-11-25T12:00:00Z")

  /// A snapshot answered at the save, `pro` ending `days` after it, as the body says `verified`.
  static func snapshot(proEndsDaysAfterSave days: Int, requestDate: Date = savedAt) throws
    -> CustomerInfoSnapshot
  {
    let request = ISO8601.format(requestDate)
    let expires = ISO8601.format(savedAt.addingTimeInterval(Double(days) * .day))
    return try Fixture.snapshot(SampleSnapshot.single(requestDate: request, expiresAt: expires))
  }

  /// Each cache that imports, on a manual clock at ``now``, with `policy` and trust roots
  /// (which `requireVerified` needs).
  enum Kind: String, CaseIterable, Sendable { case inMemory, sqlite }

  func openCache(
    _ kind: Kind, clock: ManualClock, policy: OfflinePolicy = .conservative
  ) throws -> any CustomerInfoImporting {
    switch kind {
    case .inMemory:
      return InMemoryCustomerInfoCache(
        policy: policy, clock: clock.cacheClock, trustRoots: try TestSigner.roots())
    case .sqlite:
      var configuration = CacheConfiguration()
      configuration.policy = policy
      configuration.pruneOnOpen = false
      configuration.trustRoots = try TestSigner.roots()
      configuration.changeCheckInterval = .zero
      files += 1
      return try SQLiteCustomerInfoCache(
        path: directory.path("cache-\(files).sqlite"), configuration: configuration,
        clock: clock.cacheClock)
    }
  }

  static func request(
    _ snapshot: CustomerInfoSnapshot, savedAt: Date? = savedAt, label: String = "legacy-blob"
  ) -> SnapshotImport {
    SnapshotImport(snapshot: snapshot, savedAt: savedAt, label: label)
  }

  @Test(
    "access that lapsed since the save is denied, where a store now would grant it",
    arguments: Kind.allCases)
  func lapsedSinceTheSave(_ kind: Kind) throws {
    // A boot clock too: the import records no boot reading, or time would be measured from
    // the import instead of the save.
    let clock = ManualClock(Self.now, bootSession: "boot-1")
    let cache = try openCache(kind, clock: clock)
    let snapshot = try Self.snapshot(proEndsDaysAfterSave: 7)
    #expect(try cache.importSnapshot(Self.request(snapshot), for: Fixture.scopeA) == .imported)
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.estimatedServerTime == Self.now)
    #expect(decision.evidence.freshness == .stale)
    #expect(decision.evidence.storedAt == Self.savedAt)
    #expect(decision.evidence.clockOffset == 0)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.refreshBootInstant == nil)
    clock.advance(by: .minute)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    #expect(decision.evidence.origin == .imported(label: "legacy-blob", importedAt: Self.now))

    // The obvious import, a store now, restarts the server's clock at the old requestDate.
    let naive = try openCache(kind, clock: clock)
    #expect(try naive.storeAnswer(snapshot, for: Fixture.scopeA) == .stored)
    #expect(naive.access(to: "pro", for: Fixture.scopeA).state == .granted)
  }

  @Test(
    "access still valid at the import grants, never verified nor high trust",
    arguments: Kind.allCases)
  func stillValidGrantsWithoutTrust(_ kind: Kind) throws {
    let cache = try openCache(kind, clock: ManualClock(Self.now))
    let snapshot = try Self.snapshot(proEndsDaysAfterSave: 30)
    #expect(try cache.importSnapshot(Self.request(snapshot), for: Fixture.scopeA) == .imported)
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .granted)
    #expect(decision.evidence.validUntil == Self.savedAt.addingTimeInterval(30 * .day))
    #expect(decision.evidence.verification == .known(.notRequested))
    #expect(!decision.isHighTrust)
    let evaluated = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.customerInfo.verification == .known(.notRequested))
    #expect(evaluated.bookkeeping.origin.importLabel == "legacy-blob")
  }

  @Test("a second import, or one after a refresh, changes nothing", arguments: Kind.allCases)
  func onlyIntoAnEmptyScope(_ kind: Kind) throws {
    let clock = ManualClock(Self.now)
    let cache = try openCache(kind, clock: clock)
    let first = try Self.snapshot(proEndsDaysAfterSave: 30)
    #expect(try cache.importSnapshot(Self.request(first), for: Fixture.scopeA) == .imported)
    let before = try cache.load(Fixture.scopeA)
    clock.advance(by: .minute)
    let second = try Self.snapshot(proEndsDaysAfterSave: 60)
    #expect(
      try cache.importSnapshot(Self.request(second, label: "other"), for: Fixture.scopeA)
        == .scopeAlreadyFilled)
    #expect(try cache.load(Fixture.scopeA) == before)

    #expect(try cache.storeAnswer(try Fixture.snapshot(), for: Fixture.scopeB) == .stored)
    #expect(
      try cache.importSnapshot(Self.request(second), for: Fixture.scopeB) == .scopeAlreadyFilled)
    #expect(try cache.load(Fixture.scopeB)?.bookkeeping.origin == .refresh)
  }

  @Test(
    "the first refresh replaces the import; a failed one marks it offline",
    arguments: Kind.allCases)
  func theFirstRefreshReplacesIt(_ kind: Kind) throws {
    let clock = ManualClock(Self.now)
    let cache = try openCache(kind, clock: clock)
    #expect(
      try cache.importSnapshot(
        Self.request(try Self.snapshot(proEndsDaysAfterSave: 30)), for: Fixture.scopeA)
        == .imported)
    try cache.recordRefreshFailure(for: Fixture.scopeA, reason: "transient")
    let offline = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(offline.evidence.freshness == .offline)
    #expect(offline.state == .granted)
    #expect(offline.evidence.origin?.importLabel == "legacy-blob")

    // An answer whose body says `failed` replaces it too: an import was never verified.
    let answer = try Self.snapshot(proEndsDaysAfterSave: 40, requestDate: Self.now)
    #expect(try cache.storeAnswer(answer, for: Fixture.scopeA) == .stored)
    let refreshed = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(refreshed.evidence.origin == .refresh)
    #expect(refreshed.evidence.freshness == .fresh)
    #expect(refreshed.evidence.storedAt == Self.now)
  }

  @Test(
    "a save ahead of the device's clock beyond the tolerance is refused; within it, now",
    arguments: Kind.allCases)
  func aSaveAheadOfTheClock(_ kind: Kind) throws {
    let cache = try openCache(kind, clock: ManualClock(Self.now))
    let snapshot = try Self.snapshot(proEndsDaysAfterSave: 30, requestDate: Self.now)
    let ahead = Self.request(snapshot, savedAt: Self.now.addingTimeInterval(6 * .minute))
    #expect(try cache.importSnapshot(ahead, for: Fixture.scopeA) == .refused(.savedAfterNow))
    #expect(try cache.load(Fixture.scopeA) == nil)

    let slightly = Self.request(snapshot, savedAt: Self.now.addingTimeInterval(4 * .minute))
    #expect(try cache.importSnapshot(slightly, for: Fixture.scopeA) == .imported)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.storedAt == Self.now)
  }

  @Test("without a save time the save is taken at the requestDate", arguments: Kind.allCases)
  func noSaveTime(_ kind: Kind) throws {
    let cache = try openCache(kind, clock: ManualClock(Self.now))
    let snapshot = try Self.snapshot(proEndsDaysAfterSave: 7)
    #expect(
      try cache.importSnapshot(Self.request(snapshot, savedAt: nil), for: Fixture.scopeA)
        == .imported)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.storedAt == Self.savedAt)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
  }

  @Test(
    "a requestDate ahead of the device's clock, with no save time: saved now, the offset kept",
    arguments: Kind.allCases)
  func noSaveTimeAndAServerAhead(_ kind: Kind) throws {
    let cache = try openCache(kind, clock: ManualClock(Self.now))
    // The device's clock is two hours behind the server's.
    let snapshot = try Self.snapshot(
      proEndsDaysAfterSave: 30, requestDate: Self.now.addingTimeInterval(2 * .hour))
    #expect(
      try cache.importSnapshot(Self.request(snapshot, savedAt: nil), for: Fixture.scopeA)
        == .imported)
    let bookkeeping = try #require(try cache.load(Fixture.scopeA)?.bookkeeping)
    #expect(bookkeeping.storedAt == Self.now)
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.evidence.clockOffset == 7_200)
    #expect(decision.evidence.estimatedServerTime == Self.now.addingTimeInterval(2 * .hour))
  }

  @Test(
    "lifetime access's offline window and the snapshot's age count from the save",
    arguments: Kind.allCases)
  func windowsCountFromTheSave(_ kind: Kind) throws {
    // Lifetime access, verified at the save ten days ago.
    let lifetime = try Fixture.snapshot(
      SampleSnapshot.single(requestDate: ISO8601.format(Self.savedAt), expiresAt: nil))
    var week = OfflinePolicy.conservative
    week.nonExpiringMaxOfflineAge = 7 * .day
    let closed = try openCache(kind, clock: ManualClock(Self.now), policy: week)
    #expect(try closed.importSnapshot(Self.request(lifetime), for: Fixture.scopeA) == .imported)
    let elapsed = closed.access(to: "pro", for: Fixture.scopeA)
    #expect(elapsed.state == .denied(.offlineWindowElapsed))
    #expect(elapsed.evidence.validUntil == Self.savedAt.addingTimeInterval(7 * .day))

    var fortnight = OfflinePolicy.conservative
    fortnight.nonExpiringMaxOfflineAge = 14 * .day
    let open = try openCache(kind, clock: ManualClock(Self.now), policy: fortnight)
    #expect(try open.importSnapshot(Self.request(lifetime), for: Fixture.scopeA) == .imported)
    let granted = open.access(to: "pro", for: Fixture.scopeA)
    #expect(granted.state == .granted)
    #expect(granted.evidence.validUntil == Self.savedAt.addingTimeInterval(14 * .day))

    // A snapshot may be at most a week old: ten days since the save is too old.
    var young = OfflinePolicy.conservative
    young.maxSnapshotAge = 7 * .day
    let aged = try openCache(kind, clock: ManualClock(Self.now), policy: young)
    let running = try Self.snapshot(proEndsDaysAfterSave: 30)
    #expect(try aged.importSnapshot(Self.request(running), for: Fixture.scopeA) == .imported)
    #expect(
      aged.access(to: "pro", for: Fixture.scopeA).state
        == .offlineUnavailable(.snapshotTooOld))
  }

  @Test("two processes import into one file: the second finds the scope filled")
  func twoProcessesImport() throws {
    let clock = ManualClock(Self.now)
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    // Each read asks whether the other wrote, rather than within 50 ms of real time.
    configuration.changeCheckInterval = .zero
    let path = directory.path("shared.sqlite")
    // Both open before either imports, as an app and its widget launched at once.
    let app = try SQLiteCustomerInfoCache(
      path: path, configuration: configuration, clock: clock.cacheClock)
    let widget = try SQLiteCustomerInfoCache(
      path: path, configuration: configuration, clock: clock.cacheClock)
    let first = Self.request(try Self.snapshot(proEndsDaysAfterSave: 30), label: "app")
    let second = Self.request(try Self.snapshot(proEndsDaysAfterSave: 60), label: "widget")
    #expect(widget.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    #expect(try app.importSnapshot(first, for: Fixture.scopeA) == .imported)
    // The widget's read found nothing stored; its import decides in the write transaction.
    #expect(try widget.importSnapshot(second, for: Fixture.scopeA) == .scopeAlreadyFilled)
    let origin = SnapshotOrigin.imported(label: "app", importedAt: Self.now)
    #expect(widget.access(to: "pro", for: Fixture.scopeA).evidence.origin == origin)
    #expect(app.access(to: "pro", for: Fixture.scopeA).evidence.origin == origin)
  }

  @Test("a clock set back after the import gains nothing", arguments: Kind.allCases)
  func aClockSetBackAfterTheImport(_ kind: Kind) throws {
    let clock = ManualClock(Self.now)
    let cache = try openCache(kind, clock: clock)
    let snapshot = try Self.snapshot(proEndsDaysAfterSave: 7)
    #expect(try cache.importSnapshot(Self.request(snapshot), for: Fixture.scopeA) == .imported)
    // Back to the day after the save, when the subscription was still running.
    clock.set(Self.savedAt.addingTimeInterval(.day))
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .denied(.expired))
    #expect(decision.evidence.clockRollbackSuspected)
  }

  @Test("an invalid label is refused", arguments: Kind.allCases)
  func invalidLabels(_ kind: Kind) throws {
    let cache = try openCache(kind, clock: ManualClock(Self.now))
    let snapshot = try Self.snapshot(proEndsDaysAfterSave: 30)
    for label in [
      "", String(repeating: "x", count: SnapshotImport.labelLimit + 1), "a\nb", "a\u{202E}b",
    ] {
      #expect(
        try cache.importSnapshot(Self.request(snapshot, label: label), for: Fixture.scopeA)
          == .refused(.invalidLabel))
    }
    #expect(try cache.load(Fixture.scopeA) == nil)
  }

  @Test(
    "requireVerified refuses an import unless the policy accepts one for a while",
    arguments: Kind.allCases)
  func requireVerified(_ kind: Kind) throws {
    let clock = ManualClock(Self.now)
    var strict = OfflinePolicy.conservative
    strict.requireVerified = true
    let snapshot = try Self.snapshot(proEndsDaysAfterSave: 30)
    let refusing = try openCache(kind, clock: clock, policy: strict)
    #expect(try refusing.importSnapshot(Self.request(snapshot), for: Fixture.scopeA) == .imported)
    #expect(
      refusing.access(to: "pro", for: Fixture.scopeA).state
        == .offlineUnavailable(.unverified))

    var accepting = strict
    accepting.acceptsImportedSnapshotsFor = .day
    let cache = try openCache(kind, clock: clock, policy: accepting)
    #expect(try cache.importSnapshot(Self.request(snapshot), for: Fixture.scopeA) == .imported)
    let granted = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(granted.state == .granted)
    #expect(!granted.isHighTrust)
    // Bounded by the window's end, in server time: the day after the import.
    #expect(granted.evidence.validUntil == Self.now.addingTimeInterval(.day))
    clock.advance(by: .day)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.unverified))
  }
}
