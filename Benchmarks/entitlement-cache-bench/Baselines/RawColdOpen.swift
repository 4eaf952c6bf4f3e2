import CSQLite
import EntitlementCache
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Baselines {
  /// What `cold_open_first_decision` is measured against: the same open, first decision and
  /// close, by hand with the C API. See ``RawColdOpen`` for exactly what it includes.
  func rawColdOpen(_ workload: Workload, samples: Int) throws -> TimedCase {
    guard let scope = workload.scopes.first else {
      throw BenchError.wrongAnswer("baseline_raw_c_cold_open: the workload holds no scope")
    }
    let open = RawColdOpen(path: workload.path, configuration: Workload.configuration)
    let key = scope.key.bytes
    let clock = CacheClock.fixed(Workload.now)
    var sink = Sink()
    var failure: (any Error)?
    return TimedCase(
      name: "baseline_raw_c_cold_open", samples: samples,
      batch: { count in
        for _ in 0..<count {
          let now = Int64((clock.now().timeIntervalSince1970 * 1_000).rounded(.down))
          do {
            sink.consume(granted: try open.firstDecision(key: key, now: now))
          } catch {
            failure = error
            sink.consume(granted: false)
          }
        }
      },
      result: { measurement in
        if let failure { throw failure }
        try RawColdOpen.checkClosedCleanly(workload.path, "baseline_raw_c_cold_open")
        return try CaseResult("baseline_raw_c_cold_open", workload, measurement, sink)
      })
  }
}

/// Opening a cache file and answering its first decision with the raw C API, doing what
/// `SQLiteCustomerInfoCache(path:configuration:clock:)` (DatabaseOpener and SQLiteConnection),
/// its first `access(to:for:)` and its release must do for an existing file of the current
/// schema, in the same order:
///
/// 1. `stat` the file: the cache checks that it exists before SQLite opens it, so that it can
///    create a missing one itself with mode 0600.
/// 2. The writer connection: `sqlite3_open_v2` read-write with create, no mutex and extended
///    result codes, `sqlite3_extended_result_codes` (as the library calls it, for SQLite
///    builds older than the open flag), and the configured busy timeout.
/// 3. `PRAGMA user_version`, which must be the schema version this build writes (newer is
///    refused, older would migrate), and `SELECT count(*) FROM sqlite_schema`, the read of the
///    header and the schema that finds a damaged file before anything is written to it.
/// 4. `PRAGMA journal_mode = WAL` (checked to answer `wal`), `PRAGMA synchronous` per the
///    configured durability, `PRAGMA foreign_keys = ON`.
/// 5. The reader connection, opened the same way, with `PRAGMA query_only = 1`.
/// 6. `PRAGMA data_version` on the writer: the cache reads it at open so that another
///    connection's write before its first check is noticed.
/// 7. The first decision on the reader: prepare ``Baselines/pointReadSQL``, bind, step once,
///    decide (``Baselines/decideRow(_:now:)``), finalize.
/// 8. Close the writer, then the reader; the last close checkpoints the write-ahead log and
///    deletes it and the shared-memory file, as the cache's release does.
///
/// Not included, because for this file the library does them without needing to: the
/// migrator reads `user_version` a second time; and releasing the cache persists its read
/// marks in a write transaction (`BEGIN IMMEDIATE`, an `UPDATE` raising the scope's
/// high-water mark and last use, `COMMIT`). Every read here is at the time the snapshot was
/// stored, so the file's marks already hold that time and the update changes nothing; the
/// library writes it because its point read does not fetch `last_used_at`, so a resident
/// never knows its last use is persisted. (The write costs a new log whose header and
/// directory are synced, and a checkpoint at close that syncs both files.) Pruning is not
/// included either: ``Workload/configuration`` turns `pruneOnOpen` off for every case.
struct RawColdOpen {
  let path: String
  let busyTimeoutMilliseconds: Int32
  let synchronous: String
  let schemaVersion: Int64

  init(path: String, configuration: CacheConfiguration) {
    self.path = path
    busyTimeoutMilliseconds = Int32(clamping: Int(configuration.busyTimeout * 1_000))
    synchronous = configuration.durability == .full ? "FULL" : "NORMAL"
    schemaVersion = Int64(SQLiteCustomerInfoCache.supportedSchemaVersion)
  }

  /// Steps 1–8 above for the scope `key`: whether `pro` is granted at `now` (milliseconds).
  func firstDecision(key: [UInt8], now: Int64) throws -> Bool {
    var info = stat()
    guard stat(path, &info) == 0 else {
      throw BenchError.wrongAnswer("\(path): \(String(cString: strerror(errno)))")
    }
    let writer = try ColdConnection(path: path, busyTimeout: busyTimeoutMilliseconds)
    let version = try writer.integer("PRAGMA user_version")
    guard version == schemaVersion else {
      throw BenchError.wrongAnswer("schema version \(version), this build writes \(schemaVersion)")
    }
    _ = try writer.integer("SELECT count(*) FROM sqlite_schema")
    guard try writer.text("PRAGMA journal_mode = WAL") == "wal" else {
      throw BenchError.wrongAnswer("journal_mode did not switch to WAL")
    }
    try writer.execute("PRAGMA synchronous = \(synchronous)")
    try writer.execute("PRAGMA foreign_keys = ON")
    let reader = try ColdConnection(path: path, busyTimeout: busyTimeoutMilliseconds)
    try reader.execute("PRAGMA query_only = 1")
    _ = try writer.integer("PRAGMA data_version")
    let granted = try reader.pointRead(key: key, now: now)
    try writer.close()
    try reader.close()
    return granted
  }

  /// Both sides of the comparison must leave the file as they found it: a write-ahead log
  /// left behind would mean one of them skipped the checkpoint at close.
  static func checkClosedCleanly(_ path: String, _ name: String) throws {
    for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
      throw BenchError.wrongAnswer("\(name) left \(path)\(suffix) behind")
    }
  }
}

/// One connection of the raw cold open. Non-copyable, so it is closed exactly once: by
/// ``close()``, which reports the result, or on an error path by `deinit`, where the error
/// being thrown is the one that matters.
private struct ColdConnection: ~Copyable {
  let handle: OpaquePointer

  init(path: String, busyTimeout: Int32) throws {
    var handle: OpaquePointer?
    let flags =
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
    let code = sqlite3_open_v2(path, &handle, flags, nil)
    guard code == SQLITE_OK, let handle else {
      sqlite3_close_v2(handle)
      throw RawSQLiteError(code: code, message: "cannot open \(path)")
    }
    let extended = sqlite3_extended_result_codes(handle, 1)
    guard extended == SQLITE_OK else {
      sqlite3_close_v2(handle)
      throw RawSQLiteError(code: extended, message: "extended_result_codes")
    }
    let timeout = sqlite3_busy_timeout(handle, busyTimeout)
    guard timeout == SQLITE_OK else {
      sqlite3_close_v2(handle)
      throw RawSQLiteError(code: timeout, message: "busy_timeout")
    }
    self.handle = handle
  }

  deinit {
    sqlite3_close_v2(handle)
  }

  consuming func close() throws {
    let code = sqlite3_close_v2(handle)
    discard self
    guard code == SQLITE_OK else {
      throw RawSQLiteError(code: code, message: String(cString: sqlite3_errstr(code)))
    }
  }

  func execute(_ sql: String) throws {
    let code = sqlite3_exec(handle, sql, nil, nil, nil)
    guard code == SQLITE_OK else { throw error(code, sql) }
  }

  func integer(_ sql: String) throws -> Int64 {
    try single(sql) { sqlite3_column_int64($0, 0) }
  }

  func text(_ sql: String) throws -> String? {
    try single(sql) { statement in sqlite3_column_text(statement, 0).map { String(cString: $0) } }
  }

  /// Prepares `sql`, steps it to its one row, reads it with `read`, and finalizes.
  private func single<T>(_ sql: String, _ read: (OpaquePointer) -> T) throws -> T {
    var prepared: OpaquePointer?
    let code = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
    guard code == SQLITE_OK, let statement = prepared else { throw error(code, sql) }
    let step = sqlite3_step(statement)
    let value = step == SQLITE_ROW ? read(statement) : nil
    let finalized = sqlite3_finalize(statement)
    guard step == SQLITE_ROW else {
      throw step == SQLITE_DONE
        ? RawSQLiteError(code: step, message: "\(sql): no row") : error(step, sql)
    }
    guard finalized == SQLITE_OK, let value else { throw error(finalized, sql) }
    return value
  }

  /// The first decision: ``Baselines/pointReadSQL`` prepared, bound, stepped once and
  /// finalized.
  func pointRead(key: [UInt8], now: Int64) throws -> Bool {
    var prepared: OpaquePointer?
    let code = sqlite3_prepare_v2(handle, Baselines.pointReadSQL, -1, &prepared, nil)
    guard code == SQLITE_OK, let statement = prepared else {
      throw error(code, Baselines.pointReadSQL)
    }
    // The key is bound without a copy, so the statement is finalized while its bytes are
    // still borrowed.
    let outcome: Result<Bool, RawSQLiteError> = key.withUnsafeBytes { bytes in
      var code = sqlite3_bind_blob(
        statement, 1, bytes.baseAddress, Int32(bytes.count), csqlite_static())
      if code == SQLITE_OK {
        code = sqlite3_bind_text(statement, 2, Workload.entitlement, -1, csqlite_transient())
      }
      var granted = false
      if code == SQLITE_OK {
        code = sqlite3_step(statement)
        if code == SQLITE_ROW {
          granted = Baselines.decideRow(statement, now: now)
          code = SQLITE_OK
        } else if code == SQLITE_DONE {
          code = SQLITE_OK
        }
      }
      let failure = code == SQLITE_OK ? nil : error(code, Baselines.pointReadSQL)
      let finalized = sqlite3_finalize(statement)
      if let failure { return .failure(failure) }
      guard finalized == SQLITE_OK else {
        return .failure(error(finalized, Baselines.pointReadSQL))
      }
      return .success(granted)
    }
    return try outcome.get()
  }

  private func error(_ code: Int32, _ sql: String) -> RawSQLiteError {
    RawSQLiteError(code: code, message: "\(String(cString: sqlite3_errmsg(handle))): \(sql)")
  }
}
