import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// Data protection classes are set through Foundation's file attributes, which only the full
// Foundation of Apple's SDKs has.
#if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
  import Foundation
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// File-system steps around the database file that SQLite does not do for us.
enum DatabaseFile {
  /// The files SQLite keeps beside the database in WAL mode.
  static let companionSuffixes = ["-wal", "-shm"]

  /// Creates an empty file readable and writable by its owner only (0600), in the data
  /// protection class `protection` where the platform has classes, unless it exists.
  ///
  /// SQLite creates its `-wal` and `-shm` files with the permissions of the database file, so
  /// creating this one first keeps all three private. `O_EXCL` makes a concurrent creator lose
  /// cleanly instead of truncating. SQLite gives the class of its open flags only to the files
  /// it creates itself, the companions: the class of this one is set here, or it would be the
  /// app's default.
  static func createPrivately(
    at path: String, protection: CacheConfiguration.FileProtection
  ) throws(CacheError) {
    let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
    if descriptor >= 0 {
      close(descriptor)
      try protect(path, protection)
      return
    }
    let code = errno
    // A symbolic link to a file not there yet is "existing" to O_EXCL, and SQLite would then
    // create its target with the process's default permissions: the target is created here
    // instead, privately, the same way.
    if code == EEXIST, let target = danglingTarget(of: path) {
      return try createPrivately(at: target, protection: protection)
    }
    guard code != EEXIST else { return }
    throw .sqlite(.open, .fileSystem(path: path, reason: String(cString: strerror(code))))
  }

  /// The file `path` links to when it is a symbolic link whose target does not exist, a
  /// relative target taken from the link's directory; nil otherwise, and for a target that is
  /// no UTF-8 path. A target that is such a link itself is followed the same way; a loop of
  /// links is not dangling (`ELOOP`), and SQLite reports it.
  private static func danglingTarget(of path: String) -> String? {
    var status = stat()
    guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFLNK,
      stat(path, &status) != 0, errno == ENOENT
    else { return nil }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    guard
      let target = String(validatingUTF8Bytes: buffer[..<count].map { UInt8(bitPattern: $0) })
    else { return nil }
    guard !target.hasPrefix("/"), let slash = path.lastIndex(of: "/") else { return target }
    return String(path[...slash]) + target
  }

  /// The tables a cache's file holds from the schema version that created each one on (see
  /// `Migrations/`): a cache's file at a version without one of them lost it to another tool.
  static let tablesSinceVersion: [(table: String, version: Int)] = [
    ("scope", 1), ("entitlement", 1), ("revision_counter", 2), ("purchase_queue", 4),
    ("schema_compatibility", 7), ("file_identity", 9), ("merged_file", 9),
  ]

  /// The columns every version's `scope` table has and that name a cache's scope: no other
  /// program's table of that name is likely to have all four.
  static let scopeIdentityColumns = ["scope_key", "sdk_key_hash", "user_hash", "installation_hash"]

  /// Whether `file` is another program's database: objects and no schema version, which this
  /// library sets in the transaction that creates its first tables; a version below zero,
  /// which it never writes; or a version this build knows and no `scope` table with the
  /// cache's identity columns (another program's own `user_version`, and maybe a table of a
  /// common name such as `scope`). Opened as a cache it would gain this library's tables and a
  /// new journal mode; moved aside as damaged it would be taken from its program. So it is
  /// refused as it is: a cache's own file that lost its `scope` table too, which only a person
  /// does, is left for them. A newer build's version is not judged here: its read floor says
  /// whether this build reads it.
  static func isForeign(_ file: FileSchema) -> Bool {
    if file.version < 0 || (file.version == 0 && file.schemaObjects > 0) { return true }
    return file.isKnownVersion && !file.hasScopeIdentity
  }

  /// What a file's schema says of whose it is, before anything is written to it.
  struct FileSchema {
    /// `PRAGMA user_version`.
    var version: Int
    /// How many tables, indexes and the like it holds.
    var schemaObjects: Int
    /// Whether its `scope` table has every one of ``scopeIdentityColumns``; only looked at for
    /// a version this build knows.
    var hasScopeIdentity = false
    /// The first table a cache's file at this version has and this one lacks: another tool
    /// dropped or renamed it, so the file is damaged. Nil when none is missing, and for a
    /// version this build does not know.
    var missingTable: String?

    /// A version some build of this library writes and this one knows: 1 to this build's.
    var isKnownVersion: Bool { version > 0 && version <= Migrator.embedded.latestVersion }
  }

  /// The file's schema version and its number of tables, indexes and the like, read in one
  /// statement so both come from one version of the file: another process opening the same
  /// new file commits its first tables and their version together, and two statements could
  /// see the tables without the version between them. Reading them also finds a file that is
  /// not a database, or whose first pages are damaged. For a version this build knows, which
  /// of the cache's tables and identity columns it has is then asked of SQLite's parsed
  /// schema, by preparing statements that name them, which SQLite answers from the schema it
  /// parsed already, where a query of the schema table's definitions reads and compares text.
  static func schema(on connection: SQLiteConnection) throws(SQLiteError) -> FileSchema {
    let sql =
      "SELECT (SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_schema)"
    var file = try connection.withStatement(sql) { statement throws(SQLiteError) in
      guard try statement.step() else {
        throw SQLiteError(
          operation: "open", extendedResultCode: SQLITE_ERROR,
          message: "the schema version read no row", sql: sql)
      }
      return FileSchema(
        version: Int(clamping: statement.int64(0)), schemaObjects: Int(statement.int64(1)))
    }
    guard file.isKnownVersion else { return file }
    let identity = "SELECT \(scopeIdentityColumns.joined(separator: ", ")) FROM scope"
    let tables = tablesSinceVersion.filter { $0.version <= file.version }.map(\.table)
    // One statement names all of it, as a healthy file has it; only a file that fails it is
    // asked part by part, so a cold open prepares one statement more, not one per table.
    let whole = identity + ", " + tables.filter { $0 != "scope" }.joined(separator: ", ")
    if try prepares(whole, on: connection) {
      file.hasScopeIdentity = true
      return file
    }
    file.hasScopeIdentity = try prepares(identity, on: connection)
    for table in tables where try !prepares("SELECT NULL FROM \(table)", on: connection) {
      file.missingTable = table
      break
    }
    return file
  }

  /// The read floor recorded in the file (`schema_compatibility.read_version`): the oldest
  /// schema version that still reads it correctly. Nil when none counts: the file predates the
  /// table (schema 6 or earlier), holds no row, or records a value that is no whole number
  /// or is below 1.
  ///
  /// Every migration records at least 1 (the table's own check), so a value below 1 was
  /// written by hand and says nothing of what any build reads. The opener and the inspector
  /// (`doctor`) both read the floor here and judge it with
  /// ``isReadable(version:floor:supported:)``, so the file a cache refuses is never one
  /// `doctor` calls readable.
  static func readFloor(on connection: SQLiteConnection) throws(SQLiteError) -> Int? {
    let hasTable =
      try connection.scalarInt(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
          + "AND name = 'schema_compatibility'") > 0
    guard hasTable,
      let recorded = try connection.scalarText(
        "SELECT read_version FROM schema_compatibility WHERE id = 1"),
      let floor = Int(recorded), floor >= 1
    else { return nil }
    return floor
  }

  /// Whether a build that writes schema `supported` reads a file of schema `version` whose
  /// read floor is `floor`, as ``readFloor(on:)`` returns it: its own schema or an older one
  /// (migrated when a cache opens it), or a newer one whose floor is at or below `supported`.
  /// A newer file with no floor is refused.
  static func isReadable(version: Int, floor: Int?, supported: Int) -> Bool {
    guard version > supported else { return true }
    guard let floor else { return false }
    return floor <= supported
  }

  /// Whether `sql` prepares on `connection`: false when it names a table or column the file
  /// lacks; any other failure is thrown.
  private static func prepares(
    _ sql: String, on connection: SQLiteConnection
  ) throws(SQLiteError) -> Bool {
    do {
      _ = try SQLiteStatement(connection: connection, sql: sql, persistent: false)
      return true
    } catch  where error.isMissingSchema {
      return false
    }
  }

  /// Why another program's database (``isForeign(_:)``) is refused: a
  /// file not in this storage's format, as SQLite calls one that is no database at all.
  static let foreignCause = SQLiteError(
    operation: "open", extendedResultCode: SQLITE_NOTADB,
    message: "another program's SQLite database, not a cache's")

  /// Why a file its permissions keep from writing is refused for now, as one they keep from
  /// reading is: storage not there yet, tried again, never damage.
  static let notWritable = SQLiteError(
    operation: "open", extendedResultCode: SQLITE_READONLY,
    message: "the file's permissions do not let this process write it")

  /// The error that refuses another program's database at `path`: `damaged`, with nothing
  /// moved.
  static func foreign(_ path: String) -> SQLiteCacheError {
    .damaged(path: path, movedTo: nil, cause: foreignCause)
  }

  /// Moves a damaged database and its companions to `PATH.damaged-<UTC time>`, never erasing
  /// anything, and returns the new path of the database file.
  static func moveAside(_ path: String, at date: Date) throws(CacheError) -> String {
    let stamp = ISO8601.format(date).filter { $0.isNumber || $0 == "T" || $0 == "Z" }
    var target = "\(path).damaged-\(stamp)"
    var attempt = 1
    while FileManager.default.fileExists(atPath: target) {
      attempt += 1
      target = "\(path).damaged-\(stamp)-\(attempt)"
    }
    for suffix in [""] + companionSuffixes {
      let source = path + suffix
      guard FileManager.default.fileExists(atPath: source) else { continue }
      guard rename(source, target + suffix) == 0 else {
        throw .sqlite(.open, .fileSystem(path: source, reason: String(cString: strerror(errno))))
      }
    }
    return target
  }

  /// What is at a cache's path, told apart as the cache answers for it.
  enum Presence: Equatable {
    /// Nothing: the path names no file (`ENOENT`, `ENOTDIR`), or a link to nothing.
    case absent
    /// A regular file (following a symbolic link).
    case file
    /// A directory, a device or a pipe: a mistake that waiting does not mend.
    case notAFile
    /// The system will not say: a folder on the way refuses this process (`EACCES`,
    /// `EPERM`), or links loop (`ELOOP`). A file may well be there, so it is never called
    /// missing: it is refused for now, as a file whose own permissions refuse this process.
    case refused(errno: Int32)
    /// `stat` failed otherwise (a name too long, an I/O error): neither there nor missing, a
    /// file-system error to report as it is.
    case unknown(errno: Int32)
  }

  /// What is at `path`, from one `stat`.
  static func presence(_ path: String) -> Presence {
    var info = stat()
    guard stat(path, &info) == 0 else {
      let code = errno
      switch code {
      case ENOENT, ENOTDIR: return .absent
      case EACCES, EPERM, ELOOP: return .refused(errno: code)
      default: return .unknown(errno: code)
      }
    }
    return (info.st_mode & S_IFMT) == S_IFREG ? .file : .notAFile
  }

  /// Why a path that `stat` could not examine for another reason is an error, as it is.
  static func statFailed(_ path: String, errno code: Int32) -> SQLiteCacheError {
    .fileSystem(path: path, reason: String(cString: strerror(code)))
  }

  /// Why a path whose folder refuses this process is refused for now: SQLite's own code for a
  /// file it cannot open (`SQLITE_CANTOPEN`, storage not there yet), with the system's reason.
  static func refused(errno code: Int32) -> SQLiteError {
    let reason =
      code == ELOOP
      ? "its symbolic links loop" : "\(String(cString: strerror(code))) on it or a folder above it"
    return SQLiteError(
      operation: "open", extendedResultCode: SQLITE_CANTOPEN,
      message: "unable to open database file: \(reason)")
  }

  /// What names one file under any of its paths: its device and inode, following links.
  struct FileNumber: Equatable {
    var device: UInt64
    var inode: UInt64
  }

  /// The file number of `path`; nil when `stat` fails.
  static func fileNumber(_ path: String) -> FileNumber? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return FileNumber(
      device: UInt64(truncatingIfNeeded: info.st_dev),
      inode: UInt64(truncatingIfNeeded: info.st_ino))
  }

  /// Removes a database file and its companions through the VFS the cache opens files with,
  /// so one that stands in for the platform's sees the removal: the companions first, so that
  /// while the database file is there its path still says what is left to remove. A name
  /// already gone is no error.
  static func remove(
    _ path: String, vfs vfsName: String?, operation: CacheOperation
  ) throws(CacheError) {
    guard let vfs = sqlite3_vfs_find(vfsName), let delete = vfs.pointee.xDelete else {
      throw .sqlite(operation, .fileSystem(path: path, reason: "no VFS to remove it with"))
    }
    for name in companionSuffixes.map({ path + $0 }) + [path] {
      // The directory is synced too: a removal that returned stays removed.
      let code = delete(vfs, name, 1)
      guard code == SQLITE_OK || code == deleteNoEntry else {
        throw .sqlite(
          operation,
          SQLiteError(
            operation: "delete", extendedResultCode: code, message: "cannot remove \(name)"))
      }
    }
  }

  /// `SQLITE_IOERR_DELETE_NOENT`, whose macro Swift cannot import: the name was not there.
  private static let deleteNoEntry = SQLITE_IOERR | (23 << 8)

  /// `path` with every symbolic link resolved; `path` itself when it cannot be resolved.
  static func resolvingLinks(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// The size of a file in bytes; nil when it does not exist.
  static func size(_ path: String) -> Int? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Int(info.st_size)
  }

  /// Gives the file just created the data protection class `protection`, where the platform
  /// has classes (iOS, tvOS, watchOS, visionOS). A failure removes the empty file, so that
  /// the next open creates it again rather than use a file in the wrong class.
  private static func protect(
    _ path: String, _ protection: CacheConfiguration.FileProtection
  ) throws(CacheError) {
    #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
      let type: FileProtectionType =
        switch protection {
        case .complete: .complete
        case .completeUnlessOpen: .completeUnlessOpen
        case .completeUntilFirstUserAuthentication: .completeUntilFirstUserAuthentication
        case .none: .none
        }
      do {
        try FileManager.default.setAttributes([.protectionKey: type], ofItemAtPath: path)
      } catch {
        unlink(path)
        throw .sqlite(
          .open,
          .fileSystem(path: path, reason: "cannot set its data protection class: \(error)"))
      }
    #endif
  }
}
