import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The raw handle of a prepared statement. Owned by exactly one ``SQLiteStatement``.
typealias SQLiteStatementHandle = OpaquePointer

/// A prepared statement: `init` prepares it, `deinit` finalizes it.
///
/// A statement belongs to the connection that prepared it and must be used from one thread at a
/// time, like the connection itself; it is deliberately not `Sendable`.
final class SQLiteStatement {
  let handle: SQLiteStatementHandle
  let sql: String
  private unowned let connection: SQLiteConnection

  init(connection: SQLiteConnection, sql: String, persistent: Bool) throws(SQLiteError) {
    var handle: SQLiteStatementHandle?
    // SQLITE_PREPARE_PERSISTENT tells SQLite the statement is long-lived (it comes from the
    // statement cache), so it avoids the lookaside allocator meant for short-lived objects.
    let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
    let code = sqlite3_prepare_v3(connection.handle, sql, -1, flags, &handle, nil)
    guard code == SQLITE_OK, let handle else {
      // On failure sqlite3_prepare_v3 sets the handle to NULL: nothing to finalize.
      throw connection.error(operation: "prepare", code: code, sql: sql)
    }
    self.handle = handle
    self.sql = sql
    self.connection = connection
  }

  deinit {
    // Its result is deliberately not checked: sqlite3_finalize "returns the error code of the
    // most recent evaluation of the statement", a failure that `step` already reported when it
    // happened; finalizing itself cannot fail, and the handle is released either way.
    _ = sqlite3_finalize(handle)
  }

  // MARK: Binding. Parameters are numbered from 1, as in SQLite.

  func bind(_ value: Int64?, at index: Int32) throws(SQLiteError) {
    let code =
      if let value { sqlite3_bind_int64(handle, index, value) } else {
        sqlite3_bind_null(handle, index)
      }
    try check(code, "bind")
  }

  func bind(_ value: Int?, at index: Int32) throws(SQLiteError) {
    try bind(value.map(Int64.init), at: index)
  }

  func bind(_ value: String?, at index: Int32) throws(SQLiteError) {
    guard var value else { return try check(sqlite3_bind_null(handle, index), "bind") }
    // SQLITE_TRANSIENT: SQLite copies the text, because the Swift string's storage is only
    // borrowed for the duration of this call. The explicit byte count keeps text after a NUL
    // (JSON allows "\u0000" in keys), which a C-string length of -1 would cut off.
    let code = value.withUTF8 { bytes in
      // An empty buffer may have no base address, which SQLite would bind as NULL.
      guard let base = bytes.baseAddress, !bytes.isEmpty else {
        return sqlite3_bind_text(handle, index, "", 0, csqlite_transient())
      }
      return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
        sqlite3_bind_text64(
          handle, index, text, UInt64(bytes.count), csqlite_transient(), UInt8(SQLITE_UTF8))
      }
    }
    try check(code, "bind")
  }

  func bind(_ bytes: some ContiguousBytes, at index: Int32) throws(SQLiteError) {
    let code = bytes.withUnsafeBytes { buffer in
      // An empty buffer may have no base address, which SQLite would bind as NULL.
      guard let base = buffer.baseAddress, !buffer.isEmpty else {
        return sqlite3_bind_zeroblob(handle, index, 0)
      }
      return sqlite3_bind_blob64(handle, index, base, UInt64(buffer.count), csqlite_transient())
    }
    try check(code, "bind")
  }

  /// Runs `body` with `blob` bound at `index` without SQLite copying it, then resets the
  /// statement and binds NULL there, so SQLite never holds the borrowed pointer past `body`.
  /// Every other binding stays for the next run; `othersKept` is set false when they could not
  /// (binding NULL failed, and every binding was cleared instead).
  ///
  /// For the read-through, whose scope key changes from call to call while its entitlement key
  /// mostly repeats: SQLITE_TRANSIENT costs an allocation and a copy per value, SQLITE_STATIC
  /// nothing while the buffer lives, and clearing every binding makes the next run bind them all.
  func withBorrowedBlob<Result>(
    _ blob: UnsafeRawBufferPointer, at index: Int32, othersKept: inout Bool,
    _ body: () throws(SQLiteError) -> Result
  ) throws(SQLiteError) -> Result {
    defer {
      // Its result repeats the last step's error, which `step()` already reported.
      _ = sqlite3_reset(handle)
      if sqlite3_bind_null(handle, index) != SQLITE_OK {
        // Always SQLITE_OK; it drops the borrowed pointer with every other binding.
        _ = sqlite3_clear_bindings(handle)
        othersKept = false
      }
    }
    try check(bindBorrowed(blob, at: index), "bind")
    return try body()
  }

  /// Binds without copying (SQLITE_STATIC); an empty buffer, which may have no address, is
  /// copied instead so it binds as an empty value rather than NULL.
  private func bindBorrowed(
    _ buffer: UnsafeRawBufferPointer, at index: Int32, asText: Bool = false
  ) -> Int32 {
    guard let base = buffer.baseAddress, !buffer.isEmpty else {
      return asText
        ? sqlite3_bind_text(handle, index, "", 0, csqlite_transient())
        : sqlite3_bind_zeroblob(handle, index, 0)
    }
    // The 64-bit forms take any length: past SQLite's limit they answer SQLITE_TOOBIG, which
    // `check` reports, where an Int32 conversion of the count would trap.
    let count = UInt64(buffer.count)
    return asText
      ? sqlite3_bind_text64(
        handle, index, base.assumingMemoryBound(to: CChar.self), count, csqlite_static(),
        UInt8(SQLITE_UTF8))
      : sqlite3_bind_blob64(handle, index, base, count, csqlite_static())
  }

  /// Binds a date as integer milliseconds since the Unix epoch.
  func bind(_ date: Date?, at index: Int32) throws(SQLiteError) {
    try bind(date?.unixMilliseconds, at: index)
  }

  func bindNull(at index: Int32) throws(SQLiteError) {
    try check(sqlite3_bind_null(handle, index), "bind")
  }

  /// Binds column `column` of `row`'s current row as it is, type and bytes: how a row moves
  /// from one file to another without this code knowing its columns' types. The value is the
  /// unprotected one `sqlite3_column_value` gives, which "may only be used as arguments to
  /// sqlite3_result_value(), sqlite3_bind_value(), and sqlite3_value_dup()"; SQLite copies it.
  func bind(columnOf row: SQLiteStatement, _ column: Int32, at index: Int32) throws(SQLiteError) {
    try check(sqlite3_bind_value(handle, index, sqlite3_column_value(row.handle, column)), "bind")
  }

  // MARK: Stepping

  /// Advances to the next row; false once the statement is done.
  func step() throws(SQLiteError) -> Bool {
    let code = sqlite3_step(handle)
    switch code {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default: throw connection.error(operation: "step", code: code, sql: sql)
    }
  }

  /// Runs a statement that returns no rows.
  func run() throws(SQLiteError) {
    while try step() {}
  }

  /// Makes the statement ready for reuse and drops its bindings.
  ///
  /// The result of `sqlite3_reset` repeats the error of the last step, which `step()` already
  /// reported, so it is deliberately not checked here; `sqlite3_clear_bindings` always returns
  /// SQLITE_OK.
  func reset() {
    _ = sqlite3_reset(handle)
    _ = sqlite3_clear_bindings(handle)
  }

  // MARK: Columns. Indexes are numbered from 0, as in SQLite.

  /// How many columns a row of this statement has.
  var columnCount: Int32 { sqlite3_column_count(handle) }

  func isNull(_ column: Int32) -> Bool {
    sqlite3_column_type(handle, column) == SQLITE_NULL
  }

  func int64(_ column: Int32) -> Int64 {
    sqlite3_column_int64(handle, column)
  }

  func optionalInt64(_ column: Int32) -> Int64? {
    let value = self.value(column)
    return sqlite3_value_type(value) == SQLITE_NULL ? nil : sqlite3_value_int64(value)
  }

  func string(_ column: Int32) -> String? {
    utf8(column).map { String(decoding: $0, as: UTF8.self) }
  }

  /// A text column's UTF-8 bytes, valid until the statement steps or resets; nil when NULL.
  func utf8(_ column: Int32) -> UnsafeRawBufferPointer? {
    let value = self.value(column)
    // Text first, then its length, the order SQLite documents: the text may be converted.
    guard let text = sqlite3_value_text(value) else { return nil }
    return UnsafeRawBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))
  }

  /// A column of the current row, for reading both its type and its value with one lookup:
  /// each `sqlite3_column_*` call finds the column again and ends with the API's error
  /// bookkeeping, so a type and then a value cost two of them. SQLite calls such a value
  /// unprotected, safe only while nothing else uses the connection: every statement here is
  /// used from one thread at a time, as its connection is.
  @inline(__always)
  private func value(_ column: Int32) -> OpaquePointer? {
    sqlite3_column_value(handle, column)
  }

  /// A millisecond timestamp column as a date.
  func date(_ column: Int32) -> Date? {
    optionalInt64(column).map(Date.init(unixMilliseconds:))
  }

  /// A blob column as bytes, copied once; nil when NULL.
  func bytes(_ column: Int32) -> [UInt8]? {
    guard let blob = sqlite3_column_blob(handle, column) else {
      return isNull(column) ? nil : []
    }
    let count = Int(sqlite3_column_bytes(handle, column))
    return Array(UnsafeRawBufferPointer(start: blob, count: count))
  }

  /// A blob column's bytes, valid until the statement steps or resets; nil when NULL.
  func blob(_ column: Int32) -> UnsafeRawBufferPointer? {
    guard let blob = sqlite3_column_blob(handle, column) else {
      return isNull(column) ? nil : UnsafeRawBufferPointer(start: nil, count: 0)
    }
    return UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(handle, column)))
  }

  func data(_ column: Int32) -> Data? {
    guard let blob = sqlite3_column_blob(handle, column) else {
      return isNull(column) ? nil : Data()
    }
    return Data(bytes: blob, count: Int(sqlite3_column_bytes(handle, column)))
  }

  private func check(_ code: Int32, _ operation: String) throws(SQLiteError) {
    guard code == SQLITE_OK else {
      throw connection.error(operation: operation, code: code, sql: sql)
    }
  }
}
