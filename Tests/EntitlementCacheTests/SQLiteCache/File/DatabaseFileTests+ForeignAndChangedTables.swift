import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A file that is not the cache's, or whose tables another tool changed: refused as it is, or
/// moved aside as damage.
extension DatabaseFileTests {
  /// How another tool can change the cache's tables without changing its schema version.
  enum TableEdit: String, CaseIterable, Sendable {
    case columnRenamed = "ALTER TABLE entitlement RENAME COLUMN status TO stat"
    case tableDropped = "DROP TABLE entitlement"
  }

  /// Tables another tool changed under the cache's own schema version are damage too: SQLite
  /// says only `SQLITE_ERROR` ("no such column"), and before, reads answered `unreadable` and
  /// every write threw kind `other`, for good. Now the file is moved aside as damage, bytes
  /// intact: at open when a table is missing, else by the next write (or retention at open)
  /// that meets the change.
  @Test(arguments: TableEdit.allCases, [false, true])
  func tablesAnotherToolChangedAreMovedAsideAsDamage(_ edit: TableEdit, pruneOnOpen: Bool) throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let first = try Fixture.cache(in: directory, clock: clock)
    try first.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try first.close()
    try SQLiteConnection(path: first.path).execute(edit.rawValue)
    let edited = try #require(StoreTest.bytes(first.path))
    let told = Locked<[String]>([])

    let cache = try Fixture.cache(in: directory, clock: clock) {
      $0.pruneOnOpen = pruneOnOpen
      $0.onDiagnostic = { diagnostic in told.withLock { $0.append(diagnostic.event.name) } }
    }
    if edit == .columnRenamed {
      // Retention touches no renamed column: the first statement that names it finds it.
      #expect(cache.damageReport == nil)
      #expect(
        cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.unreadable))
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeB)
    }
    let report = try #require(cache.damageReport)
    #expect(report.cause.isMissingSchema, "\(report.cause)")
    #expect(StoreTest.bytes(report.movedTo) == edited)
    #expect(told.withLock { $0 }.contains("storage_damaged"))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeB)
    #expect(cache.access(to: "pro", for: Fixture.scopeB).isGranted)
  }

  /// A cache pointed at another program's SQLite database (tables, and no schema version of
  /// this library; a version below zero; or a version of this library's without its `scope`
  /// table, which is the other program's own `user_version`, even with tables named as the
  /// cache's) refuses it as it is: migrating would add the cache's tables to it and switch its
  /// journal to WAL, and moving it aside, as damage is, would take it from its program. The
  /// inspector refuses it too.
  @Test(arguments: [0, -5, 1, 3, 6, SQLiteCustomerInfoCache.supportedSchemaVersion])
  func anotherProgramsDatabaseIsRefusedAndLeftAsItIs(version: Int) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    do {
      let other = try SQLiteConnection(path: path)
      // Tables of common names, one the cache's own: only its identity columns make a
      // `scope` table the cache's.
      try other.execute(
        "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me'); "
          + "CREATE TABLE scope (name TEXT); CREATE TABLE entitlement (key TEXT)")
      try other.execute("PRAGMA user_version = \(version)")
    }
    let before = try #require(StoreTest.bytes(path))
    for handling in [CacheConfiguration.DamageHandling.moveAside, .fail] {
      let error = try #require(throws: CacheError.self) {
        _ = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate)) {
          $0.damageHandling = handling
        }
      }
      guard case .damaged(let reported, nil, let cause)? = error.sqliteCacheError else {
        Issue.record("expected the file refused in place, got \(error)")
        return
      }
      #expect(reported == path)
      #expect(cause.resultCode == SQLITE_NOTADB)
      if case .storage(_, let failure) = error { #expect(failure.kind == .damaged) }
      #expect(StoreTest.bytes(path) == before)
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["cache.sqlite"])
    }
    let inspected = try #require(throws: CacheError.self) {
      _ = try CacheInspector.health(path: path)
    }
    #expect(inspected.sqliteCacheError == DatabaseFile.foreign(path))
    #expect(StoreTest.bytes(path) == before)
  }
}
