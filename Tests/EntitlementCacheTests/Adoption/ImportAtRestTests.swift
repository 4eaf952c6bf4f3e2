import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// An import read back from the file with trust roots: never taken for tampering for want of
/// a signature, still found tampered when its rows were edited; and the rules a cache of your
/// own applies to it.
@Suite("Import at rest")
struct ImportAtRestTests {
  let directory: TemporaryDirectory
  let clock = ManualClock(ImportTests.now)
  let told = Locked<[String]>([])

  init() throws {
    directory = try TemporaryDirectory()
  }

  func open(policy: OfflinePolicy = .conservative) throws -> SQLiteCustomerInfoCache {
    var configuration = CacheConfiguration()
    configuration.policy = policy
    configuration.pruneOnOpen = false
    configuration.trustRoots = try TestSigner.roots()
    configuration.changeCheckInterval = .zero
    let told = told
    configuration.onDiagnostic = { diagnostic in told.withLock { $0.append(diagnostic.event.name) }
    }
    return try SQLiteCustomerInfoCache(
      path: directory.path("cache.sqlite"), configuration: configuration, clock: clock.cacheClock)
  }

  func importValid(into cache: SQLiteCustomerInfoCache) throws {
    let request = ImportTests.request(try ImportTests.snapshot(proEndsDaysAfterSave: 30))
    #expect(try cache.importSnapshot(request, for: Fixture.scopeA) == .imported)
  }

  @Test func anImportReopenedWithTrustRootsIsNotTampered() throws {
    let first = try open()
    try importValid(into: first)
    try first.close()

    let cache = try open()
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .granted)
    #expect(decision.evidence.verification == .known(.notRequested))
    #expect(decision.evidence.verificationFailure == nil)
    #expect(try cache.load(Fixture.scopeA)?.verdict == nil)
    #expect(try cache.verifySnapshot(for: Fixture.scopeA) == nil)
    try cache.recordRefreshFailure(for: Fixture.scopeA, reason: nil)
    let evaluated = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.verificationFailure == nil)
    #expect(evaluated.freshness == .offline)
    #expect(!told.withLock { $0 }.contains("snapshot_tampered"), "\(told.withLock { $0 })")
  }

  @Test func anEditedImportIsTamperedAndNoWindowAcceptsIt() throws {
    let first = try open()
    try importValid(into: first)
    try first.close()
    let raw = try StoreTest.connection(directory.path("cache.sqlite"))
    try raw.execute("UPDATE entitlement SET expires_at = expires_at + 86400000 * 365")

    var accepting = OfflinePolicy.conservative
    accepting.requireVerified = true
    accepting.acceptsImportedSnapshotsFor = 30 * .day
    let cache = try open(policy: accepting)
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .offlineUnavailable(.unverified))
    #expect(decision.evidence.verificationFailure == .tampered)
    #expect(try cache.verifySnapshot(for: Fixture.scopeA) == .failed(.tampered))
    #expect(told.withLock { $0 }.contains("snapshot_tampered"))
  }

  @Test func anImportRaisesTheMarkOfAScopeWithOnlyAFailedRefresh() throws {
    let cache = try open()
    try cache.recordRefreshFailure(for: Fixture.scopeA, reason: nil)
    // The clock set back a day after the failure: the import must not lower what was seen.
    clock.set(ImportTests.now.addingTimeInterval(-.day))
    let request = ImportTests.request(try ImportTests.snapshot(proEndsDaysAfterSave: 9))
    #expect(try cache.importSnapshot(request, for: Fixture.scopeA) == .imported)
    let bookkeeping = try #require(try cache.load(Fixture.scopeA)?.bookkeeping)
    #expect(bookkeeping.deviceHighWaterMark == ImportTests.now)
    // Ended 9 days after the save, a day before the latest time seen: denied.
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
  }

  /// The rule a cache of your own decides with: an answer whose body says `failed` replaces
  /// an import whose body says `verified`.
  @Test func theConditionalRuleLetsAnyAnswerReplaceAnImport() throws {
    let imported = try ImportTests.snapshot(proEndsDaysAfterSave: 30)
    var bookkeeping = try ImportTests.request(imported).bookkeeping(
      at: ImportTests.now, over: nil, policy: .conservative)
    bookkeeping.origin = .imported(label: "x", importedAt: ImportTests.now)
    let stored = CachedCustomerInfo(snapshot: imported, bookkeeping: bookkeeping)
    let failed = try CustomerInfoSnapshot(
      jsonData: Data(
        #"{"requestDate":"2026-12-05T12:00:00Z","verification":"failed","entitlements":{}}"#.utf8))
    #expect(StoreOutcome.deciding(failed, over: stored, at: ImportTests.now) == .stored)
    var refreshed = stored
    refreshed.bookkeeping.origin = .refresh
    #expect(
      StoreOutcome.deciding(failed, over: refreshed, at: ImportTests.now)
        == .refusedUnverified(nil))
  }
}
