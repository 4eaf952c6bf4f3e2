import CSQLite

extension SQLiteConnection {
  /// Runs `body` in a write transaction and commits it, or rolls back if anything throws.
  ///
  /// The transaction starts with `BEGIN IMMEDIATE`: it takes the write lock up front, while
  /// the busy timeout still applies. A deferred transaction that reads first and then writes
  /// can fail with `SQLITE_BUSY` that no timeout resolves, because another writer got there in
  /// between (sqlite.org/lang_transaction.html, "Read transactions versus write transactions").
  ///
  /// Validate input before calling: the body should only fail for storage reasons.
  ///
  /// `BEGIN` and `COMMIT` run as cached prepared statements: through `sqlite3_exec` each was
  /// parsed again on every write, a tenth of a snapshot write's instructions.
  func writeTransaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
    try transaction(beginning: "BEGIN IMMEDIATE", body)
  }

  /// Runs `body`'s reads in one read transaction (`BEGIN` deferred), so every statement in it
  /// sees the same version of the file, however many another connection commits meanwhile.
  func readTransaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
    try transaction(beginning: "BEGIN", body)
  }

  private func transaction<T>(
    beginning begin: String, _ body: () throws(SQLiteError) -> T
  ) throws(SQLiteError) -> T {
    try withStatement(begin) { statement throws(SQLiteError) in try statement.run() }
    do {
      let result = try body()
      try withStatement("COMMIT") { statement throws(SQLiteError) in try statement.run() }
      return result
    } catch {
      rollback()
      throw error
    }
  }

  /// Rolls back the open transaction, if any.
  ///
  /// A failure here leaves nothing to do: SQLite may already have rolled back on its own (after
  /// an I/O error or SQLITE_FULL), and the caller reports the error that caused the rollback.
  private func rollback() {
    if sqlite3_get_autocommit(handle) == 0 {
      _ = try? execute("ROLLBACK")
    }
  }
}
