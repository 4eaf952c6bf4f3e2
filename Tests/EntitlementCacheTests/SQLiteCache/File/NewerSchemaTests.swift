import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A file a newer version of the app wrote, met by this build after a rollback (TestFlight, a
/// phased release, a restored backup): read when that version recorded that this build still
/// reads it correctly, never written, never migrated, moved or erased.
@Suite("A file from a newer schema")
struct NewerSchemaTests {
  static let supported = SQLiteCustomerInfoCache.supportedSchemaVersion

  /// A file holding a snapshot that grants `pro`, then changed as a build one version newer
  /// would: a column and a table added, the version raised, and the read floor set to
  /// `readFloor`.
  static func newerFile(
    in directory: TemporaryDirectory, clock: ManualClock, readFloor: Int
  ) throws -> String {
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try cache.close()
    let connection = try SQLiteConnection(path: cache.path)
    try connection.execute(
      """
      ALTER TABLE scope ADD COLUMN loyalty_tier TEXT;
      CREATE TABLE loyalty (scope_id INTEGER, points INTEGER);
      UPDATE schema_compatibility SET read_version = \(readFloor);
      PRAGMA user_version = \(supported + 1);
      """)
    return cache.path
  }

  @Test("a newer file whose read floor this build meets is read, and never written")
  func readableNewerFile() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try Self.newerFile(in: directory, clock: clock, readFloor: Self.supported)
    let before = try #require(StoreTest.bytes(path))
    clock.advance(by: .minute)

    let cache = try Fixture.cache(in: directory, clock: clock)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(
      try cache.evaluatedCustomerInfo(for: Fixture.scopeA)?.decisions["pro"]?.isGranted == true)
    #expect(try cache.load(Fixture.scopeA)?.snapshot != nil)
    #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .offlineUnavailable(.noSnapshot))

    let refused = try #require(throws: CacheError.self) {
      try cache.store(try StoreTest.snapshot(status: "expired"), for: Fixture.scopeA)
    }
    guard case .storage(.store, let failure) = refused else {
      Issue.record("expected a storage failure, got \(refused)")
      return
    }
    #expect(failure.kind == .newerSchema)
    #expect(
      failure.underlying as? SQLiteCacheError
        == .newerSchema(path: path, found: Self.supported + 1, supported: Self.supported))
    #expect(throws: CacheError.self) { try cache.recordRefreshFailure(for: Fixture.scopeA) }
    #expect(throws: CacheError.self) { try cache.remove(Fixture.scopeA) }
    // What reads learned stays in memory: no flush, no error.
    try cache.flush()
    try cache.close()
    #expect(StoreTest.bytes(path) == before)
    let check = try SQLiteConnection(path: path)
    #expect(try check.scalarInt("PRAGMA user_version") == Int64(Self.supported + 1))
  }

  @Test("a newer file that changed what this build reads answers newer_schema, untouched")
  func unreadableNewerFile() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try Self.newerFile(in: directory, clock: clock, readFloor: Self.supported + 1)
    let before = try #require(StoreTest.bytes(path))
    let cache = try Fixture.cache(in: directory, clock: clock)
    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    // Never "no snapshot", never a grant from rows whose meaning changed.
    #expect(decision.state == .offlineUnavailable(.newerSchema))
    #expect(cache.lastReadFailure != nil)
    let error = try #require(throws: CacheError.self) {
      try cache.recordRefreshFailure(for: Fixture.scopeA)
    }
    try cache.close()
    guard case .storage(.recordRefreshFailure, let failure) = error else {
      Issue.record("expected a storage failure, got \(error)")
      return
    }
    #expect(failure.kind == .newerSchema)
    #expect(StoreTest.bytes(path) == before)
  }

  /// Another process's newer build (an App Clip, a second app in the App Group) migrates the
  /// file while this cache has it open, changing a column this build writes. The write that
  /// meets the change is refused as a newer build's file, and the file is never moved aside as
  /// damage, as a missing column on this build's own version would be.
  @Test("a file a newer build migrates while this cache has it open is refused, never moved")
  func migratedByANewerBuildWhileOpen() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try SQLiteConnection(path: cache.path).execute(
      """
      ALTER TABLE entitlement RENAME COLUMN status TO state;
      UPDATE schema_compatibility SET read_version = \(Self.supported + 1);
      PRAGMA user_version = \(Self.supported + 1);
      """)
    let refused = try #require(throws: CacheError.self) {
      try cache.store(try StoreTest.snapshot(status: "expired"), for: Fixture.scopeB)
    }
    #expect(refused.storageFailureKind == .newerSchema, "\(refused)")
    #expect(cache.damageReport == nil)
    #expect(throws: CacheError.self) { try cache.recordRefreshFailure(for: Fixture.scopeA) }
    try cache.close()
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["cache.sqlite"])
    let check = try SQLiteConnection(path: cache.path)
    #expect(try check.scalarInt("PRAGMA user_version") == Int64(Self.supported + 1))
  }

  /// A floor below 1 was written by hand (the table's own check refuses it): it is no floor,
  /// so the file is refused as one with none recorded, and the inspector (`doctor`) judges it
  /// the same way.
  @Test("a recorded floor below 1 is none: the file answers newer_schema", arguments: [0, -1])
  func floorBelowOne(floor: Int) throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try Self.newerFile(in: directory, clock: clock, readFloor: Self.supported)
    try SQLiteConnection(path: path).execute(
      """
      DROP TABLE schema_compatibility;
      CREATE TABLE schema_compatibility (id INTEGER PRIMARY KEY, read_version INTEGER);
      INSERT INTO schema_compatibility VALUES (1, \(floor));
      """)
    let health = try CacheInspector.health(path: path)
    #expect(!health.isReadable && !health.isHealthy)
    #expect(health.readableFrom == nil)
    let cache = try Fixture.cache(in: directory, clock: clock)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.newerSchema))
    try cache.close()
  }

  @Test("after every migration from the floor's own on, the file records a floor at or below it")
  func everyMigrationLeavesAFloor() throws {
    let directory = try TemporaryDirectory()
    let connection = try SQLiteConnection(path: directory.path("steps.sqlite"))
    let migrations = Migrator.embedded.migrations
    let floorMigration = try #require(migrations.first { $0.name == "schema_compatibility" })
    for count in 1...migrations.count {
      try Migrator(migrations: Array(migrations.prefix(count))).migrate(connection)
      let version = migrations[count - 1].version
      guard version >= floorMigration.version else { continue }
      let floor = try connection.scalarInt(
        "SELECT read_version FROM schema_compatibility WHERE id = 1")
      #expect(floor >= 1 && floor <= Int64(version), "after \(version): floor \(floor)")
    }
  }

  @Test(
    "a readable newer file whose log holds the newer build's last write: both left as they were")
  func readableNewerFileWithAPendingLog() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let scratch = try Self.newerFile(in: directory, clock: clock, readFloor: Self.supported)
    // The newer build's last write is still in its log when it stops, uncheckpointed.
    let connection = try SQLiteConnection(path: scratch)
    _ = try connection.scalarText("PRAGMA journal_mode = WAL")
    try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    try connection.execute("INSERT INTO loyalty VALUES (1, 250)")
    let other = try TemporaryDirectory()
    let path = other.path("cache.sqlite")
    for suffix in ["", "-wal"] {
      try FileManager.default.copyItem(atPath: scratch + suffix, toPath: path + suffix)
    }
    withExtendedLifetime(connection) {}
    let file = try #require(StoreTest.bytes(path))
    let log = try #require(StoreTest.bytes(path + "-wal"))
    #expect(log.count > 32)

    let cache = try Fixture.cache(in: other, clock: clock)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    try cache.close()
    #expect(StoreTest.bytes(path) == file)
    #expect(StoreTest.bytes(path + "-wal") == log)
  }
}
