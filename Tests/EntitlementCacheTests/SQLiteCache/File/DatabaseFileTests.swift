import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The file itself: private, in WAL mode, migrated from nothing, and never overwritten when it
/// is newer, damaged or not a database at all.
@Suite("Database file")
struct DatabaseFileTests {
  @Test func fileAndCompanionsArePrivate() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    for suffix in ["", "-wal", "-shm"] {
      #expect(try StoreTest.mode(cache.path + suffix) == 0o600, "\(suffix)")
    }
  }

  @Test func openSetsWALAndTheConfiguredDurability() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let normal = try Fixture.cache(in: directory, clock: clock)
    let full = try Fixture.cache(in: directory, name: "full.sqlite", clock: clock) {
      $0.durability = .full
    }
    for (cache, level) in [(normal, 1), (full, 2)] {
      let (mode, synchronous, foreignKeys) = try cache.testingSeam.withWriter { connection in
        (
          try connection.scalarText("PRAGMA journal_mode"),
          try connection.scalarInt("PRAGMA synchronous"),
          try connection.scalarInt("PRAGMA foreign_keys")
        )
      }
      #expect(mode == "wal")
      #expect(synchronous == level)
      #expect(foreignKeys == 1)
      // WAL is a property of the file: a tool opening it later sees it too.
      #expect(try StoreTest.connection(cache.path).scalarText("PRAGMA journal_mode") == "wal")
    }
    #expect(try CacheInspector.health(path: normal.path).journalMode == "wal")
  }

  @Test func readerConnectionCannotWrite() throws {
    let directory = try TemporaryDirectory()
    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate))
    let error = try cache.testingSeam.withReader { reader in
      try #require(throws: SQLiteError.self) { try reader.execute("DELETE FROM scope") }
    }
    #expect(error.resultCode == SQLITE_READONLY)
  }

  @Test func emptyFileIsMigratedToTheCurrentSchema() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("empty.sqlite")
    #expect(FileManager.default.createFile(atPath: path, contents: Data()))
    let cache = try Fixture.cache(
      in: directory, name: "empty.sqlite", clock: ManualClock(Fixture.requestDate))
    #expect(cache.damageReport == nil)
    let raw = try StoreTest.connection(path, readOnly: true)
    #expect(
      try raw.scalarInt("PRAGMA user_version")
        == Int64(SQLiteCustomerInfoCache.supportedSchemaVersion))
    #expect(
      try raw.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name IN ('scope', 'entitlement')")
        == 2)
    let health = try CacheInspector.health(path: path)
    #expect(health.isHealthy)
    #expect(health.scopeCount == 0)
  }

  @Test func opensWithNoMigrationsFolderAnywhereNearTheFile() throws {
    // The schema comes from the binary: a database in a fresh directory far from the package
    // root is created complete.
    let directory = try TemporaryDirectory()
    #expect(!FileManager.default.fileExists(atPath: directory.path("Migrations")))
    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(try StoreTest.scopeCount(cache.path) == 1)
  }

  @Test func missingFileIsAnErrorWhenCreationIsOff() throws {
    let directory = try TemporaryDirectory()
    let error = try #require(throws: CacheError.self) {
      _ = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate)) {
        $0.createIfMissing = false
      }
    }
    guard case .storage(.open, let failure) = error else {
      Issue.record("expected a storage error, got \(error)")
      return
    }
    #expect(failure.kind == .missing)
    #expect(error.sqliteCacheError == .missing(path: directory.path("cache.sqlite")))
    #expect(!FileManager.default.fileExists(atPath: directory.path("cache.sqlite")))
  }

  @Test func missingDirectoryIsAFileSystemError() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("absent/cache.sqlite")
    let error = try #require(throws: CacheError.self) {
      _ = try SQLiteCustomerInfoCache(
        path: path, clock: ManualClock(Fixture.requestDate).cacheClock)
    }
    guard case .storage(.open, _) = error,
      case .fileSystem(let reported, let reason)? = error.sqliteCacheError
    else {
      Issue.record("expected a file-system error, got \(error)")
      return
    }
    #expect(reported == path)
    #expect(reason.lowercased().contains("no such file"))
  }

  // MARK: Newer schema

  /// A file a future build wrote: the current schema, a higher version, a row of data.
  static func futureFile(_ path: String, version: Int, wal: Bool) throws {
    let connection = try SQLiteConnection(path: path)
    if wal { _ = try connection.scalarText("PRAGMA journal_mode = WAL") }
    try connection.execute("CREATE TABLE future (x TEXT); INSERT INTO future VALUES ('data')")
    try connection.execute("PRAGMA user_version = \(version)")
  }

  /// Opens a cache on a file from a newer schema beyond its read floor: reads answer
  /// `newerSchema`, and a write's error names both versions.
  static func refusedNewerFile(
    in directory: TemporaryDirectory
  ) throws -> CacheError {
    let cache = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate))
    #expect(
      cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.newerSchema))
    let error = try #require(throws: CacheError.self) {
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    }
    try cache.close()
    return error
  }

  @Test(arguments: [false, true])
  func newerSchemaIsRefusedNamingBothVersionsAndTheFileIsUnchanged(wal: Bool) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try Self.futureFile(path, version: 42, wal: wal)
    let before = try #require(StoreTest.bytes(path))

    let error = try Self.refusedNewerFile(in: directory)
    let supported = SQLiteCustomerInfoCache.supportedSchemaVersion
    guard case .storage(.store, let failure) = error else {
      Issue.record("expected a storage error, got \(error)")
      return
    }
    #expect(failure.kind == .newerSchema)
    #expect(error.sqliteCacheError == .newerSchema(path: path, found: 42, supported: supported))
    #expect(error.description.contains("schema version 42"))
    #expect(error.description.contains("this build's \(supported)"))

    #expect(StoreTest.bytes(path) == before)
    // SQLite may create -wal/-shm to read a WAL-mode file, and removes them when the last
    // connection closes; either way nothing is left beside the file.
    for suffix in ["-wal", "-shm", "-journal"] {
      #expect(!FileManager.default.fileExists(atPath: path + suffix), "\(suffix)")
    }
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
    #expect(names == ["cache.sqlite"])
    #expect(try StoreTest.connection(path).scalarInt("PRAGMA user_version") == 42)
  }

  @Test func newerSchemaWithAPendingLogIsRefusedWithoutCheckpointingIt() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try Self.crashLeftovers(at: path, in: directory) { connection in
      try connection.execute("PRAGMA user_version = 42")
    }
    let before = try #require(StoreTest.bytes(path))
    let log = try #require(StoreTest.bytes(path + "-wal"))

    _ = try Self.refusedNewerFile(in: directory)
    // Closing the connection that read the version would otherwise copy the log into the file
    // and delete it. SQLite's rebuildable index (-shm) may remain beside them.
    #expect(StoreTest.bytes(path) == before)
    #expect(StoreTest.bytes(path + "-wal") == log)
  }

  /// The database and write-ahead log a process leaves when it stops without closing: the log
  /// holds one committed transaction that only touched page 2, so page 1 is read from the file.
  static func crashLeftovers(
    at path: String, in directory: TemporaryDirectory,
    before: (SQLiteConnection) throws -> Void = { _ in }
  ) throws {
    let scratch = directory.path("scratch.sqlite")
    let connection = try SQLiteConnection(path: scratch)
    _ = try connection.scalarText("PRAGMA journal_mode = WAL")
    try connection.execute("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('one')")
    try before(connection)
    try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    try connection.execute("INSERT INTO t VALUES ('two')")
    // Copied while the connection is open, so the log is not checkpointed and deleted first.
    for suffix in ["", "-wal"] {
      try FileManager.default.copyItem(atPath: scratch + suffix, toPath: path + suffix)
    }
    #expect((StoreTest.bytes(path + "-wal")?.count ?? 0) > 32)
    withExtendedLifetime(connection) {}
    try FileManager.default.removeItem(atPath: scratch)
  }

  // MARK: Damage

  static let notADatabase = Data(
    String(repeating: "this is a text file, not SQLite. ", count: 200).utf8)

  @Test func notADatabaseIsMovedAsideWithItsBytesIntact() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try Self.notADatabase.write(to: URL(fileURLWithPath: path))
    let clock = ManualClock(Fixture.requestDate)

    let cache = try Fixture.cache(in: directory, clock: clock)
    let report = try #require(cache.damageReport)
    #expect(report.cause.resultCode == SQLITE_NOTADB)
    #expect(report.movedTo.hasPrefix(path + ".damaged-20261130T120000"))
    #expect(StoreTest.bytes(report.movedTo) == Self.notADatabase)

    // A new, private, working database took its place; nothing is readable until a refresh.
    #expect(try StoreTest.mode(path) == 0o600)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
    #expect(StoreTest.bytes(report.movedTo) == Self.notADatabase)
  }

  @Test func secondDamagedFileAtTheSameMomentGetsItsOwnName() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    let clock = ManualClock(Fixture.requestDate)
    var moved: [String] = []
    for round in 0..<2 {
      try Data("garbage \(round) ".utf8 + Self.notADatabase).write(to: URL(fileURLWithPath: path))
      let cache = try Fixture.cache(in: directory, clock: clock)
      moved.append(try #require(cache.damageReport?.movedTo))
    }
    #expect(Set(moved).count == 2)
    #expect(StoreTest.bytes(moved[0])?.starts(with: Data("garbage 0".utf8)) == true)
    #expect(StoreTest.bytes(moved[1])?.starts(with: Data("garbage 1".utf8)) == true)
  }

  @Test func damagedSchemaPageIsMovedAsideWithItsLogUnmerged() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try Self.crashLeftovers(at: path, in: directory)
    // Keep the SQLite header, overwrite the schema's b-tree page header on page 1.
    var bytes = try #require(StoreTest.bytes(path))
    bytes.replaceSubrange(100..<200, with: Data(repeating: 0xA5, count: 100))
    try bytes.write(to: URL(fileURLWithPath: path))
    let log = try #require(StoreTest.bytes(path + "-wal"))

    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    let report = try #require(cache.damageReport)
    #expect(report.cause.isDamage)
    // Both exactly as found: the log was not checkpointed into the damaged file, nor deleted.
    #expect(StoreTest.bytes(report.movedTo) == bytes)
    #expect(StoreTest.bytes(report.movedTo + "-wal") == log)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
  }

  /// Writes a snapshot, then overwrites the `scope` table's root page, which the open-time
  /// probe (header and schema only) does not read. Returns the damaged bytes.
  static func damageDataPage(
    at path: String, clock: ManualClock, in directory: TemporaryDirectory
  )
    throws -> Data
  {
    do {
      let cache = try Fixture.cache(in: directory, clock: clock)
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    }
    let (root, pageSize) = try {
      let raw = try StoreTest.connection(path, readOnly: true)
      return (
        Int(try raw.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'scope'")),
        Int(try raw.scalarInt("PRAGMA page_size"))
      )
    }()
    var bytes = try #require(StoreTest.bytes(path))
    let start = (root - 1) * pageSize
    bytes.replaceSubrange(start..<start + pageSize, with: Data(repeating: 0xA5, count: pageSize))
    try bytes.write(to: URL(fileURLWithPath: path))
    return bytes
  }

  @Test func damageFoundAfterOpenFailsClosedUntilARefreshMovesItAside() throws {
    // A damaged data page is found by the first statement that reads it. Reads must then
    // answer "unavailable", never a guess; the next write moves the file aside, bytes intact,
    // and lands on a new database, so a refresh brings the cache back.
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    let clock = ManualClock(Fixture.requestDate)
    let damaged = try Self.damageDataPage(at: path, clock: clock, in: directory)

    let cache = try Fixture.cache(in: directory, clock: clock)
    #expect(cache.damageReport == nil)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.unreadable))
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    let loadError = try #require(throws: CacheError.self) { _ = try cache.load(Fixture.scopeA) }
    #expect(loadError.sqliteCause?.isDamage == true)

    try cache.store(try Fixture.snapshot(), for: Fixture.scopeB)
    let report = try #require(cache.damageReport)
    #expect(report.cause.isDamage)
    #expect(StoreTest.bytes(report.movedTo) == damaged)
    #expect(cache.access(to: "pro", for: Fixture.scopeB).state == .granted)
    // The new file knows nothing of the damaged one's scopes.
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
    #expect(try StoreTest.mode(path) == 0o600)
    let reopened = try Fixture.cache(in: directory, clock: clock)
    #expect(reopened.access(to: "pro", for: Fixture.scopeB).state == .granted)
  }

  @Test func damageFoundAfterOpenIsReportedWhenConfiguredToFail() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    let clock = ManualClock(Fixture.requestDate)
    let damaged = try Self.damageDataPage(at: path, clock: clock, in: directory)
    let cache = try Fixture.cache(in: directory, clock: clock) { $0.damageHandling = .fail }
    let storeError = try #require(throws: CacheError.self) {
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    }
    #expect(storeError.sqliteCause?.isDamage == true)
    #expect(cache.damageReport == nil)
    #expect(StoreTest.bytes(path) == damaged)
  }

  @Test func inspectReturnsTheIntegrityLinesOfADamagedTablePage() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    let damaged = try Self.damageDataPage(
      at: path, clock: ManualClock(Fixture.requestDate), in: directory)
    let health = try CacheInspector.health(path: path)
    #expect(!health.isHealthy)
    #expect(health.integrity.contains { $0.hasPrefix("Page ") })
    #expect(health.integrity.last?.hasPrefix("integrity check stopped:") == true)
    #expect(StoreTest.bytes(path) == damaged)
  }

  @Test func damageHandlingFailThrowsAndLeavesTheFileInPlace() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try Self.notADatabase.write(to: URL(fileURLWithPath: path))
    let error = try #require(throws: CacheError.self) {
      _ = try Fixture.cache(in: directory, clock: ManualClock(Fixture.requestDate)) {
        $0.damageHandling = .fail
      }
    }
    guard case .damaged(let reported, nil, let cause)? = error.sqliteCacheError else {
      Issue.record("expected a damaged file left in place, got \(error)")
      return
    }
    #expect(reported == path)
    #expect(cause.resultCode == SQLITE_NOTADB)
    #expect(error.description == "open: \(path): damaged (\(cause.message))")
    #expect(StoreTest.bytes(path) == Self.notADatabase)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["cache.sqlite"])
  }

  @Test func inspectReportsDamageWithoutMovingIt() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    try Self.notADatabase.write(to: URL(fileURLWithPath: path))
    let error = try #require(throws: CacheError.self) {
      _ = try CacheInspector.health(path: path)
    }
    guard case .damaged(_, nil, _)? = error.sqliteCacheError else {
      Issue.record("expected a damaged file, got \(error)")
      return
    }
    #expect(StoreTest.bytes(path) == Self.notADatabase)
  }

  // MARK: Raw identities

  @Test func rawIdentitiesNeverReachTheFileTheLogOrTheIndex() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let sdkKey = "appl_RawSdkKey_5f1e9c"
    let user = "raw.user.7731@example.com"
    let installation = "RAW-INSTALLATION-0b7d"
    let scopes = StoreEnvironment.allCases.map {
      Fixture.scope(sdkKey: sdkKey, installation: installation, environment: $0, user: user)
    }
    let cache = try Fixture.cache(in: directory, clock: clock)
    for scope in scopes {
      try cache.store(try Fixture.snapshot(), for: scope)
      _ = cache.access(to: "pro", for: scope)
      clock.advance(by: .seconds(10))
      try cache.recordRefreshFailure(for: scope, reason: "offline")
    }
    try cache.flush()
    try cache.prune()

    // While open, the newest pages are in the WAL and the index in the SHM.
    for suffix in ["", "-wal", "-shm"] {
      let bytes = try #require(StoreTest.bytes(cache.path + suffix), "\(suffix)")
      for raw in [sdkKey, user, installation] {
        #expect(!StoreTest.contains(bytes, raw), "\(raw) in \(suffix)")
      }
    }
    // The file does hold the scope hashes, so the check above looked at real content.
    let walAndFile = [cache.path, cache.path + "-wal"].compactMap(StoreTest.bytes).reduce(Data(), +)
    #expect(walAndFile.range(of: Data(scopes[0].key.bytes)) != nil)
  }
}
