import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Schema 7 to 8: migration 8 builds the scope table
/// again with an import's two columns before the body, copying every row as it is.
@Suite("Schema upgrade from version 7")
struct SchemaVersion7UpgradeTests {
  @Test func aVersion7FileUpgradesKeepingEverySnapshotWithTheBodyLast() throws {
    try Self.upgradeKeepsEverySnapshot(fromVersion: 7)
  }

  /// Writes a file at `version` with two scopes, opens it with this build, and checks what
  /// every upgrade from version 6 on must leave: the current schema version, the body as the
  /// scope row's last column, no import on a row written before migration 8, no foreign key
  /// broken, the read floor's row, every value kept, and each snapshot read and decided as
  /// it was written.
  static func upgradeKeepsEverySnapshot(fromVersion version: Int) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try SchemaVersion3UpgradeTests.writeVersion3File(path, version: version)
    let before = try DatabaseFingerprint.read(path)
    #expect(before.tables["scope"]?.count == 2)

    let cache = try Fixture.cache(
      in: directory, clock: ManualClock(Fixture.date("2026-12-01T12:00:00Z")))
    let raw = try StoreTest.connection(path, readOnly: true)
    #expect(
      try raw.scalarInt("PRAGMA user_version")
        == Int64(SQLiteCustomerInfoCache.supportedSchemaVersion))
    #expect(
      try raw.scalarText("SELECT name FROM pragma_table_info('scope') ORDER BY cid DESC")
        == "snapshot")
    #expect(
      try raw.scalarInt(
        "SELECT count(*) FROM scope WHERE import_label IS NOT NULL OR imported_at IS NOT NULL")
        == 0)
    #expect(try raw.scalarInt("SELECT count(*) FROM pragma_foreign_key_check") == 0)
    let after = try DatabaseFingerprint.read(path, columnsOf: before)
    #expect(after.tables["schema_compatibility"] == ["1,6"])
    #expect(after.keepsEveryValue(of: before), "\(after.difference(from: before))")
    for scope in [Fixture.scopeA, Fixture.scopeB] {
      let loaded = try #require(try cache.load(scope))
      #expect(loaded.snapshot?.jsonData == Data(SchemaVersion2UpgradeTests.snapshot.utf8))
      #expect(loaded.bookkeeping.origin == .refresh)
    }
    // Decided from the upgraded rows as before the upgrade.
    #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .granted)
  }

  /// Migration 8 builds the scope and entitlement tables again: every index and trigger of
  /// the version 7 file is there after it, word for word, and every column with its type,
  /// constraint, default and generation, plus the import's two.
  @Test func theRebuiltTablesKeepEveryIndexTriggerAndColumn() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try SchemaVersion3UpgradeTests.writeVersion3File(path, version: 7)
    func objects() throws -> String? {
      try StoreTest.connection(path, readOnly: true).scalarText(
        "SELECT group_concat(type || ' ' || name || ': ' || ifnull(sql, ''), char(10)) FROM "
          + "(SELECT * FROM sqlite_schema WHERE type IN ('index', 'trigger') ORDER BY type, name)")
    }
    func columns(_ table: String) throws -> Set<String> {
      let text = try StoreTest.connection(path, readOnly: true).scalarText(
        "SELECT group_concat(name || ' ' || type || ' ' || \"notnull\" || ' ' "
          + "|| ifnull(dflt_value, '-') || ' ' || pk || ' ' || hidden, char(10)) "
          + "FROM pragma_table_xinfo('\(table)')")
      return Set((text ?? "").split(separator: "\n").map(String.init))
    }
    let objectsBefore = try #require(try objects())
    let scopeBefore = try columns("scope")
    let entitlementBefore = try columns("entitlement")
    #expect(objectsBefore.contains("trigger purchase_queue_count_insert"))
    #expect(objectsBefore.contains("index scope_by_last_used"))

    // Migration 8 alone: what a later migration adds, a column or an index, is its own test's.
    try Migrator(migrations: Array(Migrator.embedded.migrations.prefix(8)))
      .migrate(try SQLiteConnection(path: path))
    #expect(try StoreTest.connection(path, readOnly: true).scalarInt("PRAGMA user_version") == 8)
    #expect(try objects() == objectsBefore)
    #expect(try columns("entitlement") == entitlementBefore)
    #expect(
      try columns("scope")
        == scopeBefore.union(["import_label TEXT 0 - 0 0", "imported_at INTEGER 0 - 0 0"]))
  }
}
