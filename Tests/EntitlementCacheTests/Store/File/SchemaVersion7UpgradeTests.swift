import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Schema 7 to 8, the previous schema to the current one: migration 8 builds the scope table
/// again with an import's two columns before the body, copying every row as it is.
@Suite("Schema upgrade from version 7")
struct SchemaVersion7UpgradeTests {
  @Test func aVersion7FileUpgradesKeepingEverySnapshotWithTheBodyLast() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try SchemaVersion3UpgradeTests.writeVersion3File(path, version: 7)
    let before = try DatabaseFingerprint.read(path)
    #expect(before.tables["scope"]?.count == 2)

    let cache = try Fixture.cache(
      in: directory, clock: ManualClock(Fixture.date("2026-12-01T12:00:00Z")))
    let raw = try StoreTest.connection(path, readOnly: true)
    #expect(try raw.scalarInt("PRAGMA user_version") == 8)
    #expect(
      try raw.scalarText("SELECT name FROM pragma_table_info('scope') ORDER BY cid DESC")
        == "snapshot")
    #expect(
      try raw.scalarInt(
        "SELECT count(*) FROM scope WHERE import_label IS NOT NULL OR imported_at IS NOT NULL")
        == 0)
    #expect(try raw.scalarInt("SELECT count(*) FROM pragma_foreign_key_check") == 0)
    let after = try DatabaseFingerprint.read(path, ignoring: ["import_label", "imported_at"])
    #expect(after == DatabaseFingerprint(schemaVersion: 8, tables: before.tables))
    for scope in [Fixture.scopeA, Fixture.scopeB] {
      let loaded = try #require(try cache.load(scope))
      #expect(loaded.snapshot?.jsonData == Data(SchemaVersion2UpgradeTests.snapshot.utf8))
      #expect(loaded.bookkeeping.origin == .refresh)
    }
    #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .granted)
  }
}
