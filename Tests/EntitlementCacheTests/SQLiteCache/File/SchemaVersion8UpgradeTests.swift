import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Schema 8 to 9: migration 9 adds the file's identity and the record of files merged into
/// it (moving the cache file), and changes no row.
@Suite("Schema upgrade from version 8")
struct SchemaVersion8UpgradeTests {
  @Test func aVersion8FileUpgradesKeepingEveryRowAndGainsAnIdentityOfItsOwn() throws {
    let directory = try TemporaryDirectory()
    var identities: Set<Data> = []
    for name in ["first.sqlite", "second.sqlite"] {
      let path = directory.path(name)
      try SchemaVersion3UpgradeTests.writeVersion3File(path, version: 8)
      let before = try DatabaseFingerprint.read(path)

      let cache = try Fixture.cache(
        in: directory, name: name, clock: ManualClock(Fixture.date("2026-12-01T12:00:00Z")))
      let raw = try StoreTest.connection(path, readOnly: true)
      #expect(
        try raw.scalarInt("PRAGMA user_version")
          == Int64(SQLiteCustomerInfoCache.supportedSchemaVersion))
      #expect(try raw.scalarInt("SELECT read_version FROM schema_compatibility") == 6)
      #expect(try raw.scalarInt("SELECT count(*) FROM merged_file") == 0)
      let identity = try raw.withStatement("SELECT value FROM file_identity") {
        statement throws(SQLiteError) in
        try statement.step() ? statement.data(0) : nil
      }
      #expect(identity?.count == 16)
      identities.formUnion([identity].compactMap { $0 })
      // The rows, with the columns version 8 had: what a later migration adds is left out.
      let after = try DatabaseFingerprint.read(path, columnsOf: before)
      for table in ["scope", "entitlement", "purchase_queue"] {
        #expect(after.tables[table] == before.tables[table], "\(table)")
        #expect(after.columns[table] == before.columns[table], "\(table)")
      }
      for scope in [Fixture.scopeA, Fixture.scopeB] {
        let loaded = try #require(try cache.load(scope))
        #expect(loaded.snapshot?.jsonData == Data(SchemaVersion2UpgradeTests.snapshot.utf8))
      }
      #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .granted)
    }
    // Two files, two identities: a move told one from the other.
    #expect(identities.count == 2)
  }
}
