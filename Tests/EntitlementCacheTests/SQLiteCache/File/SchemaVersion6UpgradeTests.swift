import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Schema 6 to the current one: migration 7 adds the read floor's
/// table and changes no row, so every snapshot reads as it was written.
@Suite("Schema upgrade from version 6")
struct SchemaVersion6UpgradeTests {
  @Test func aVersion6FileUpgradesKeepingEverySnapshot() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try SchemaVersion3UpgradeTests.writeVersion3File(path, version: 6)
    let before = try DatabaseFingerprint.read(path)
    #expect(before.tables["scope"]?.count == 2)

    let cache = try Fixture.cache(
      in: directory, clock: ManualClock(Fixture.date("2026-12-01T12:00:00Z")))
    let raw = try StoreTest.connection(path, readOnly: true)
    #expect(
      try raw.scalarInt("PRAGMA user_version")
        == Int64(SQLiteCustomerInfoCache.supportedSchemaVersion))
    // Migration 8's import columns are NULL on every row written before it.
    #expect(
      try StoreTest.connection(path, readOnly: true).scalarInt(
        "SELECT count(*) FROM scope WHERE import_label IS NOT NULL OR imported_at IS NOT NULL")
        == 0)
    let after = try DatabaseFingerprint.read(path, columnsOf: before)
    #expect(after.tables["schema_compatibility"] == ["1,6"])
    #expect(after.keepsEveryValue(of: before), "\(after.difference(from: before))")
    for scope in [Fixture.scopeA, Fixture.scopeB] {
      let loaded = try #require(try cache.load(scope))
      #expect(loaded.snapshot?.jsonData == Data(SchemaVersion2UpgradeTests.snapshot.utf8))
    }
    // Decided from the upgraded rows as before the upgrade.
    #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .granted)
  }
}
