import CSQLite

/// A failed SQLite call. Its ``description`` names the operation that failed, the result codes
/// SQLite returned and its message; act on the ``StorageFailure/kind`` of the error that
/// carries it, and log the description.
///
/// Bound values are never part of an error: they may hold hashes of identities or snapshot
/// bytes, and errors end up in logs.
package struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What the library was doing, such as `"open"`, `"prepare"` or `"step"`.
  package var operation: String
  /// The primary result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, ...).
  package var resultCode: Int32
  /// The extended result code (`SQLITE_BUSY_SNAPSHOT`, `SQLITE_CORRUPT_INDEX`, ...).
  package var extendedResultCode: Int32
  /// SQLite's own explanation.
  package var message: String
  /// The statement involved, if any. Never includes bound values.
  package var sql: String?

  /// Creates an error from explicit parts.
  package init(
    operation: String, extendedResultCode: Int32, message: String, sql: String? = nil
  ) {
    self.operation = operation
    self.resultCode = extendedResultCode & 0xFF
    self.extendedResultCode = extendedResultCode
    self.message = message
    self.sql = sql
  }

  /// True when the file is not a database, or its content or its tables are damaged.
  package var isDamage: Bool {
    resultCode == SQLITE_CORRUPT || resultCode == SQLITE_NOTADB || isMissingSchema
  }

  /// True when a statement names a table or column the file does not have. On a file at the
  /// schema version its statements were written for, another tool changed its tables: the
  /// schema is damaged, though SQLite reports it only as `SQLITE_ERROR` with a message naming
  /// what is missing (the messages SQLite has used for this since 3.0).
  package var isMissingSchema: Bool {
    resultCode == SQLITE_ERROR
      && (message.hasPrefix("no such table: ") || message.hasPrefix("no such column: ")
        || message.contains(" has no column named "))
  }

  /// True when SQLite refused a write as read-only (`SQLITE_READONLY` and its extended codes):
  /// the file, its `-wal` or `-shm`, or its directory cannot be written.
  package var isReadOnly: Bool { resultCode == SQLITE_READONLY }

  /// True when another connection holds a lock that the busy timeout did not outwait.
  package var isBusy: Bool {
    resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED
  }

  /// One line: the operation, SQLite's message and code, and the SQL text.
  package var description: String {
    var text = "\(operation) failed: \(message) (code \(extendedResultCode))"
    if let statement = statementExcerpt { text += " in `\(statement)`" }
    return text
  }

  /// The statement as a one-line description names it: its first line of SQL, `--` comment
  /// lines skipped, cut at 80 characters, with `…` when more SQL follows. A migration's script
  /// runs to kilobytes over many lines, which a log line should not carry.
  private var statementExcerpt: String? {
    guard let sql else { return nil }
    let lines = sql.split(whereSeparator: \.isNewline).map { $0.drop(while: \.isWhitespace) }
    guard let index = lines.firstIndex(where: { !$0.isEmpty && !$0.hasPrefix("--") }) else {
      return nil
    }
    let line = lines[index]
    let isWhole =
      line.count <= 80 && lines[(index + 1)...].allSatisfy { $0.isEmpty || $0.hasPrefix("--") }
    return isWhole ? String(line) : line.prefix(80) + " …"
  }
}
