import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The raw handle of a database connection. Owned by exactly one ``SQLiteConnection``.
typealias SQLiteConnectionHandle = OpaquePointer

/// One SQLite connection with its statement cache.
///
/// A connection is used from one thread at a time: owners keep it inside a `Locked`. It is
/// deliberately not `Sendable`.
final class SQLiteConnection {
  /// How the connection opens its file.
  struct Options {
    /// Open without write access; the file must exist.
    var readOnly = false
    /// How long a statement waits for another connection's lock before failing with BUSY.
    var busyTimeoutMilliseconds: Int32 = 5_000
    /// The registered VFS to open through; nil for the default.
    var vfs: String?
    /// Further `SQLITE_OPEN_*` flags, such as a file protection class.
    var extraFlags: Int32 = 0
  }

  let handle: SQLiteConnectionHandle
  let path: String
  /// Tells this connection from every other one the process opened, even one at the same
  /// address after this one is gone.
  let serial = SQLiteConnection.serials.withLock { count in
    count += 1
    return count
  }
  private var statementCache: [String: SQLiteStatement] = [:]
  /// Whether one of ``writeTransaction(_:)`` and ``readTransaction(_:)`` is running: any
  /// other transaction open on the connection was abandoned by a failed rollback.
  var isInTransaction = false

  /// Opens (and, unless read-only, creates) the database at `path`.
  ///
  /// Opening reads nothing from the file: a file that is not a database is only detected by the
  /// first statement, which callers run before changing anything.
  init(path: String, options: Options = Options()) throws(SQLiteError) {
    var handle: SQLiteConnectionHandle?
    // NOMUTEX: callers serialize access with their own lock, so SQLite's per-connection mutex
    // would be a second lock on every call.
    var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | options.extraFlags
    flags |= options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
    let code = sqlite3_open_v2(path, &handle, flags, options.vfs)
    guard code == SQLITE_OK, let handle else {
      // "Whether or not an error occurs when it is opened, resources associated with the
      // database connection handle should be released by passing it to sqlite3_close()."
      let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      Self.close(handle)
      throw SQLiteError(operation: "open", extendedResultCode: code, message: message)
    }
    self.handle = handle
    self.path = path
    // SQLITE_OPEN_EXRESCODE already turned extended codes on; this says so for SQLite builds
    // that predate the flag, and a failure here is a misuse worth reporting.
    let extended = sqlite3_extended_result_codes(handle, 1)
    let timeout =
      extended == SQLITE_OK
      ? sqlite3_busy_timeout(handle, options.busyTimeoutMilliseconds) : extended
    guard timeout == SQLITE_OK else {
      let error = self.error(
        operation: extended == SQLITE_OK ? "busy_timeout" : "extended_result_codes",
        code: timeout)
      Self.close(handle)
      throw error
    }
  }

  private static let serials = Locked<UInt64>(0)

  deinit {
    // Statements must be finalized before the connection closes; emptying the cache does it.
    statementCache.removeAll()
    Self.close(handle)
  }

  /// Closes `handle`, the one place a connection handle is released.
  ///
  /// The result is checked but can only be reported as a misuse: `sqlite3_close_v2` "returns
  /// SQLITE_OK" even with statements still open ("the database connection becomes an unusable
  /// zombie which will automatically be deallocated when the last prepared statement is
  /// finalized"), so anything else means the handle was not a connection. Nothing is lost
  /// either way: every write committed before the close.
  private static func close(_ handle: SQLiteConnectionHandle?) {
    let code = sqlite3_close_v2(handle)
    assert(code == SQLITE_OK, "sqlite3_close_v2 returned \(code)")
  }

  /// Runs one or more statements that take no parameters.
  func execute(_ sql: String) throws(SQLiteError) {
    var message: UnsafeMutablePointer<CChar>?
    let code = sqlite3_exec(handle, sql, nil, nil, &message)
    guard code == SQLITE_OK else {
      let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
      sqlite3_free(message)
      throw SQLiteError(
        operation: "execute", extendedResultCode: sqlite3_extended_errcode(handle), message: text,
        sql: sql)
    }
  }

  /// Returns the cached statement for `sql`, preparing it on first use.
  ///
  /// The statement comes back reset with no bindings. Callers must not keep it beyond the
  /// closure that owns the connection.
  func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
    if let statement = statementCache[sql] {
      return statement
    }
    let statement = try SQLiteStatement(connection: self, sql: sql, persistent: true)
    statementCache[sql] = statement
    return statement
  }

  /// Runs `body` with the cached statement for `sql`, then resets it for the next user.
  ///
  /// A statement whose use failed is evicted, so a statement left in an unknown state is never
  /// handed out again.
  func withStatement<T>(
    _ sql: String, _ body: (SQLiteStatement) throws(SQLiteError) -> T
  ) throws(SQLiteError) -> T {
    try endAbandonedTransaction()
    let statement = try cachedStatement(sql)
    defer { statement.reset() }
    do {
      return try body(statement)
    } catch {
      statementCache[sql] = nil
      throw error
    }
  }

  /// The single integer returned by a query such as `PRAGMA user_version`.
  func scalarInt(_ sql: String) throws(SQLiteError) -> Int64 {
    try withStatement(sql) { statement throws(SQLiteError) in
      guard try statement.step() else {
        throw SQLiteError(
          operation: "read", extendedResultCode: SQLITE_MISUSE, message: "no row", sql: sql)
      }
      return statement.int64(0)
    }
  }

  /// The single text value returned by a query such as `PRAGMA journal_mode`.
  func scalarText(_ sql: String) throws(SQLiteError) -> String? {
    try withStatement(sql) { statement throws(SQLiteError) in
      try statement.step() ? statement.string(0) : nil
    }
  }

  /// Sets how long a statement waits for another connection's lock before failing with BUSY.
  func setBusyTimeout(milliseconds: Int32) throws(SQLiteError) {
    let code = sqlite3_busy_timeout(handle, milliseconds)
    guard code == SQLITE_OK else { throw error(operation: "busy_timeout", code: code) }
  }

  /// Leaves the write-ahead log as it is when this connection closes.
  ///
  /// SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE: "when a database in wal mode is closed [...] it performs
  /// a checkpoint operation before closing the connection. This option may be used to override
  /// this behaviour." Without that checkpoint SQLite does not delete the log either, so a file
  /// that is refused or moved aside keeps its bytes and its log.
  func skipCheckpointOnClose() throws(SQLiteError) {
    let code = csqlite_db_config_int(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    guard code == SQLITE_OK else { throw error(operation: "db_config", code: code) }
  }

  /// Rows changed by the latest INSERT, UPDATE or DELETE on this connection.
  var changes: Int { Int(sqlite3_changes64(handle)) }

  /// An error built from this connection's latest error state.
  func error(operation: String, code: Int32, sql: String? = nil) -> SQLiteError {
    let extended = sqlite3_extended_errcode(handle)
    // sqlite3_errmsg describes the latest failure on the connection; when that is a different
    // failure than `code` (say, an API misuse detected before any call), use the code's text.
    guard (extended & 0xFF) == (code & 0xFF) else {
      return SQLiteError(
        operation: operation, extendedResultCode: code,
        message: String(cString: sqlite3_errstr(code)), sql: sql)
    }
    return SQLiteError(
      operation: operation, extendedResultCode: extended,
      message: String(cString: sqlite3_errmsg(handle)), sql: sql)
  }

}
