import CSQLite

/// A failed SQLite call in the bench's own C-API code.
struct RawSQLiteError: Error, CustomStringConvertible {
  var code: Int32
  var message: String
  var description: String { "sqlite error \(code): \(message)" }
}

/// The bare C API, the way a hand-written baseline uses it: one connection, statements
/// prepared once and reused. No statement cache, no Swift error wrapping on the hot loop beyond
/// checking the result codes.
final class RawDatabase {
  let handle: OpaquePointer

  init(path: String, readOnly: Bool = false, create: Bool = false) throws {
    var handle: OpaquePointer?
    var flags = SQLITE_OPEN_NOMUTEX | (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE)
    if create { flags |= SQLITE_OPEN_CREATE }
    let code = sqlite3_open_v2(path, &handle, flags, nil)
    guard code == SQLITE_OK, let handle else {
      sqlite3_close_v2(handle)
      throw RawSQLiteError(code: code, message: "cannot open \(path)")
    }
    self.handle = handle
    sqlite3_busy_timeout(handle, 5_000)
  }

  deinit {
    sqlite3_close_v2(handle)
  }

  func execute(_ sql: String) throws {
    let code = sqlite3_exec(handle, sql, nil, nil, nil)
    guard code == SQLITE_OK else { throw error(code) }
  }

  func prepare(_ sql: String) throws -> RawStatement {
    var statement: OpaquePointer?
    let code = sqlite3_prepare_v3(
      handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
    guard code == SQLITE_OK, let statement else { throw error(code) }
    return RawStatement(handle: statement, database: self)
  }

  func error(_ code: Int32) -> RawSQLiteError {
    RawSQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
  }
}

/// A prepared statement owned by the bench; finalized on deinit.
final class RawStatement {
  let handle: OpaquePointer
  private let database: RawDatabase

  init(handle: OpaquePointer, database: RawDatabase) {
    self.handle = handle
    self.database = database
  }

  deinit {
    sqlite3_finalize(handle)
  }

  func bind(_ bytes: [UInt8], at index: Int32) throws {
    let code = bytes.withUnsafeBytes { buffer in
      sqlite3_bind_blob(handle, index, buffer.baseAddress, Int32(buffer.count), csqlite_transient())
    }
    try check(code)
  }

  func bind(_ value: Int64, at index: Int32) throws {
    try check(sqlite3_bind_int64(handle, index, value))
  }

  func bind(_ text: String, at index: Int32) throws {
    try check(sqlite3_bind_text(handle, index, text, -1, csqlite_transient()))
  }

  func bindNull(at index: Int32) throws {
    try check(sqlite3_bind_null(handle, index))
  }

  func bind(_ value: SQLValue, at index: Int32) throws {
    switch value {
    case .null: try bindNull(at: index)
    case .integer(let integer): try bind(integer, at: index)
    case .text(let text): try bind(text, at: index)
    case .blob(let bytes): try bind(bytes, at: index)
    }
  }

  /// True on a row, false when done; throws on anything else.
  @inline(__always)
  func step() throws -> Bool {
    let code = sqlite3_step(handle)
    if code == SQLITE_ROW { return true }
    if code == SQLITE_DONE { return false }
    throw database.error(code)
  }

  /// Steps to completion, then resets for the next use.
  func run() throws {
    defer { sqlite3_reset(handle) }
    while try step() {}
  }

  @inline(__always)
  func reset() {
    sqlite3_reset(handle)
  }

  @inline(__always)
  func int64(_ column: Int32) -> Int64 {
    sqlite3_column_int64(handle, column)
  }

  @inline(__always)
  func isNull(_ column: Int32) -> Bool {
    sqlite3_column_type(handle, column) == SQLITE_NULL
  }

  /// Any column, as a value that can be bound again.
  func value(_ column: Int32) -> SQLValue {
    switch sqlite3_column_type(handle, column) {
    case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
    case SQLITE_TEXT:
      return .text(String(cString: sqlite3_column_text(handle, column)))
    case SQLITE_BLOB:
      let count = Int(sqlite3_column_bytes(handle, column))
      guard let blob = sqlite3_column_blob(handle, column) else { return .blob([]) }
      return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
    default: return .null
    }
  }

  private func check(_ code: Int32) throws {
    guard code == SQLITE_OK else { throw database.error(code) }
  }
}

/// A column value read from one row to be written into another.
enum SQLValue {
  case null
  case integer(Int64)
  case text(String)
  case blob([UInt8])
}
