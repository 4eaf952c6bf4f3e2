import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Opens the two connections of a cache: checks the file is a database of a schema this build
/// knows before changing anything, moves a damaged file aside when configured to, then sets up
/// WAL and migrates.
struct DatabaseOpener {
  let path: String
  let configuration: CacheConfiguration
  let clock: CacheClock

  /// Both connections, and the writer's `data_version` when they opened, so a write by
  /// another connection before the first check is noticed too.
  struct Opened {
    var writer: StoreWriter
    var reader: StoreReader
    var dataVersion: Int64
    var damage: DamageReport?
    /// Set when the file is from a newer schema that this build can still read: every
    /// write is refused with it, and nothing was migrated.
    var readOnly: SQLiteCacheError?
  }

  private enum Failure: Error {
    case damaged(SQLiteError)
    case other(CacheError)
  }

  func open() throws(CacheError) -> Opened {
    switch DatabaseFile.presence(path) {
    case .file:
      break
    case .absent:
      guard configuration.createIfMissing else { throw .sqlite(.open, .missing(path: path)) }
      try DatabaseFile.createPrivately(at: path, protection: configuration.fileProtection)
    case .notAFile:
      // A device opens as an empty database, and migrating it would create a journal beside
      // it (`/dev/null-journal`); a directory or a pipe is a mistake that waiting cannot mend.
      throw .sqlite(
        .open, .fileSystem(path: path, reason: "not a regular file, where the database file goes"))
    case .refused(let code):
      // Never created over, never called missing: waited for like a file refused by its own
      // permissions.
      throw .sqlite(.open, DatabaseFile.refused(errno: code))
    case .unknown(let code):
      throw .sqlite(.open, DatabaseFile.statFailed(path, errno: code))
    }
    switch connect() {
    case .success(let opened): return opened
    case .failure(.other(let error)): throw error
    case .failure(.damaged(let cause)): return try replaceDamaged(cause)
    }
  }

  /// Moves the damaged file and its companions aside (never erasing them) and opens a new,
  /// empty database in its place. Every connection to the old file must be closed first, or
  /// its close would touch the new file's companions.
  ///
  /// - Throws: ``SQLiteCacheError/damaged(path:movedTo:cause:)`` when the configuration says
  ///   to fail instead, or the new file is damaged too.
  func replaceDamaged(_ cause: SQLiteError) throws(CacheError) -> Opened {
    guard configuration.damageHandling == .moveAside else {
      throw .sqlite(.open, .damaged(path: path, movedTo: nil, cause: cause))
    }
    let movedTo = try DatabaseFile.moveAside(path, at: clock.now())
    try DatabaseFile.createPrivately(at: path, protection: configuration.fileProtection)
    switch connect() {
    case .success(var opened):
      opened.damage = DamageReport(movedTo: movedTo, cause: cause)
      return opened
    case .failure(.other(let error)): throw error
    case .failure(.damaged(let again)):
      throw .sqlite(.open, .damaged(path: path, movedTo: movedTo, cause: again))
    }
  }

  private func connect() -> Result<Opened, Failure> {
    var options = SQLiteConnection.Options()
    options.busyTimeoutMilliseconds = busyTimeoutMilliseconds
    options.vfs = configuration.vfsName
    options.extraFlags = configuration.fileProtection.openFlags
    let writer: SQLiteConnection
    let file: DatabaseFile.FileSchema
    do {
      writer = try SQLiteConnection(path: path, options: options)
    } catch {
      return .failure(classify(error, .open))
    }
    // SQLite opens a file its permissions keep from writing read-only, and says so before
    // reading it. A cache that writes on its own (retention at open, read marks) cannot run on
    // it: refused then, before the first read creates a `-wal` and `-shm` with the file's
    // read-only mode, which would keep it refused after its permissions are mended. One that
    // writes only when asked (the support tool) reads it and refuses each write.
    if sqlite3_db_readonly(writer.handle, "main") == 1,
      configuration.pruneOnOpen || configuration.persistsReadTimeBookkeeping
    {
      return .failure(.other(.sqlite(.open, DatabaseFile.notWritable)))
    }
    do {
      // Before anything is written to it.
      file = try DatabaseFile.schema(on: writer)
    } catch {
      return .failure(classify(error, .open, closing: writer))
    }
    let version = file.version
    if DatabaseFile.isForeign(file) {
      // Refused before anything is written, and never moved aside: not damage of ours.
      leaveUntouchedOnClose(writer)
      return .failure(.other(.sqlite(.open, DatabaseFile.foreign(path))))
    }
    if let table = file.missingTable {
      // The cache's own file with a table another tool dropped or renamed: damaged, so moved
      // aside before anything is written to it, as SQLite's own finding of damage is.
      leaveUntouchedOnClose(writer)
      return .failure(
        .damaged(
          SQLiteError(
            operation: "open", extendedResultCode: SQLITE_ERROR,
            message: "no such table: \(table)")))
    }
    let supported = Migrator.embedded.latestVersion
    if version > supported {
      return openNewer(writer, version: version, options: options)
    }
    do {
      try configure(writer)
    } catch {
      return .failure(classify(error, .open, closing: writer))
    }
    do {
      try Migrator.embedded.migrate(writer)
    } catch {
      switch error {
      case .schemaTooNew(let found, _):
        // Migrated by a newer build between the check above and the migration.
        return openNewer(writer, version: found, options: options)
      case .storage(let error):
        return .failure(classify(error, .migrate, closing: writer))
      }
    }
    do {
      let reader = try SQLiteConnection(path: path, options: options)
      // The reader only reads; query_only turns a stray write into an error.
      try reader.execute("PRAGMA query_only = 1")
      let store = StoreWriter(writer)
      return .success(
        Opened(writer: store, reader: StoreReader(reader), dataVersion: try store.dataVersion()))
    } catch {
      return .failure(classify(error, .open))
    }
  }

  /// Opens a file a newer build wrote, for reading only, when its read floor
  /// (`schema_compatibility.read_version`) is at or below this build's version: nothing is
  /// migrated or written (both connections are `query_only`), and a log the newer build left
  /// is not checkpointed when they close; an empty one has nothing to copy. Beyond the
  /// floor, or with none recorded, the file is refused, untouched. A failure to read the floor
  /// (the file refused for now, a lock) is that failure, never a refusal of the schema, and
  /// never read as damage: a newer build's file is never moved aside.
  private func openNewer(
    _ writer: SQLiteConnection, version: Int, options: SQLiteConnection.Options
  ) -> Result<Opened, Failure> {
    let supported = Migrator.embedded.latestVersion
    let newer = SQLiteCacheError.newerSchema(path: path, found: version, supported: supported)
    leaveUntouchedOnClose(writer)
    let floor: Int?
    do {
      floor = try DatabaseFile.readFloor(on: writer)
    } catch {
      return .failure(.other(.sqlite(.open, error)))
    }
    // The same judgement `doctor` makes of the file (CacheInspector), so the two never differ.
    guard DatabaseFile.isReadable(version: version, floor: floor, supported: supported) else {
      return .failure(.other(.sqlite(.open, newer)))
    }
    do {
      try writer.execute("PRAGMA query_only = 1")
      let reader = try SQLiteConnection(path: path, options: options)
      try reader.execute("PRAGMA query_only = 1")
      leaveUntouchedOnClose(reader)
      let store = StoreWriter(writer)
      return .success(
        Opened(
          writer: store, reader: StoreReader(reader), dataVersion: try store.dataVersion(),
          readOnly: newer))
    } catch {
      return .failure(.other(.sqlite(.open, error)))
    }
  }

  private func classify(
    _ error: SQLiteError, _ operation: CacheOperation, closing connection: SQLiteConnection? = nil
  ) -> Failure {
    guard error.isDamage else { return .other(.sqlite(operation, error)) }
    if let connection { leaveUntouchedOnClose(connection) }
    return .damaged(error)
  }

  /// Keeps a refused file (damaged, or from a newer schema) and its write-ahead log as they
  /// are when `connection` closes.
  ///
  /// Closing the last connection checkpoints the log into the database file and deletes it,
  /// which would change a damaged file before it is moved aside, or a newer build's file this
  /// build must not touch. Only a log with content needs this: an empty one, which merely
  /// reading a WAL-mode file creates, is better removed by the normal close.
  private func leaveUntouchedOnClose(_ connection: SQLiteConnection) {
    guard (DatabaseFile.size(path + "-wal") ?? 0) > 0 else { return }
    // If SQLite refuses, the close checkpoints as usual: the file is still refused and moved
    // or left where it is, only its log is merged. Nothing better is left to do here.
    try? connection.skipCheckpointOnClose()
  }

  private func configure(_ connection: SQLiteConnection) throws(SQLiteError) {
    try switchToWAL(connection)
    let synchronous = configuration.durability == .full ? "FULL" : "NORMAL"
    try connection.execute("PRAGMA synchronous = \(synchronous)")
    try connection.execute("PRAGMA foreign_keys = ON")
  }
}

extension DatabaseOpener {
  /// Puts the file in WAL mode: readers never block the writer nor wait for it, and a commit
  /// appends to the log instead of rewriting pages.
  ///
  /// On a file still in rollback mode (one just created, or left empty) the switch reads the
  /// header under a shared lock, then asks for the exclusive lock to rewrite it. When another
  /// process is switching the same file at that moment (an app and its widget on the first
  /// launch), SQLite refuses the upgrade at once with `SQLITE_BUSY` and never calls the busy
  /// handler: a connection that waits while holding a shared lock could deadlock with the
  /// other ("the presence of a busy handler does not guarantee that it will be invoked when
  /// there is lock contention", sqlite3_busy_handler). The failed statement holds no lock, so
  /// waiting here and trying again cannot deadlock: the other switch completes, and the next
  /// try finds the file in WAL mode already. It waits as long as the busy timeout allows,
  /// then throws the `SQLITE_BUSY`.
  func switchToWAL(_ connection: SQLiteConnection) throws(SQLiteError) {
    let budget = Int64(max(0, busyTimeoutMilliseconds))
    let start = MonotonicClock.nanoseconds()
    func left() -> Int64 { budget - Int64((MonotonicClock.nanoseconds() &- start) / 1_000_000) }
    var pauseMilliseconds: Int64 = 1
    // A retry's own lock waits (SQLite's busy handler) count against the same budget.
    defer { try? connection.setBusyTimeout(milliseconds: busyTimeoutMilliseconds) }
    while true {
      let mode: String?
      do {
        mode = try connection.scalarText("PRAGMA journal_mode = WAL")
      } catch  where error.resultCode == SQLITE_BUSY {
        guard left() > 0 else { throw error }
        pause(milliseconds: Int32(min(pauseMilliseconds, left())))
        pauseMilliseconds = min(pauseMilliseconds * 2, 20)
        try connection.setBusyTimeout(milliseconds: Int32(max(0, left())))
        continue
      }
      guard mode?.lowercased() == "wal" else {
        throw SQLiteError(
          operation: "journal_mode", extendedResultCode: SQLITE_ERROR,
          message: "cannot switch to WAL (journal mode is \(mode ?? "unknown"))")
      }
      return
    }
  }

  /// Waits through the VFS the file is opened with, as SQLite's own busy handler does, so a
  /// VFS that stands in for the platform's sees the wait.
  private func pause(milliseconds: Int32) {
    guard let vfs = sqlite3_vfs_find(configuration.vfsName), let sleep = vfs.pointee.xSleep
    else { return }
    _ = sleep(vfs, milliseconds * 1000)
  }

  /// The busy timeout in milliseconds. Validated at open: finite and within `Int32`
  /// milliseconds, so neither conversion traps.
  var busyTimeoutMilliseconds: Int32 { Int32(configuration.busyTimeout * 1000) }
}

extension CacheConfiguration.FileProtection {
  /// The `SQLITE_OPEN_FILEPROTECTION_*` flag of the class; 0 where the platform has none.
  var openFlags: Int32 {
    #if canImport(Darwin)
      // The values of Apple's sqlite3.h, which only Apple's SDKs define.
      switch self {
      case .complete: 0x0010_0000
      case .completeUnlessOpen: 0x0020_0000
      case .completeUntilFirstUserAuthentication: 0x0030_0000
      case .none: 0x0040_0000
      }
    #else
      0
    #endif
  }
}
