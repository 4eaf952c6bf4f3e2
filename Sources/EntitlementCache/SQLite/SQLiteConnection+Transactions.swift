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
  /// `BEGIN` and `COMMIT` run as cached prepared statements, so a write does not parse them
  /// again as `sqlite3_exec` would.
  func writeTransaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
    try transaction(beginning: "BEGIN IMMEDIATE", body)
  }

  /// Runs `body`'s reads in one read transaction (`BEGIN` deferred), so every statement in it
  /// sees the same version of the file, however many another connection commits meanwhile.
  /// Inside a transaction already (a move reads both files' rows inside its own), `body` runs
  /// in that one, which gives the same guarantee.
  func readTransaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
    if isInTransaction { return try body() }
    return try transaction(beginning: "BEGIN", body)
  }

  private func transaction<T>(
    beginning begin: String, _ body: () throws(SQLiteError) -> T
  ) throws(SQLiteError) -> T {
    // Prepared before the transaction begins, so rolling back never needs an allocation that
    // could fail (out of memory, a ROLLBACK that cannot be prepared leaves the transaction
    // open).
    _ = try cachedStatement("ROLLBACK")
    try withStatement(begin) { statement throws(SQLiteError) in try statement.run() }
    isInTransaction = true
    defer { isInTransaction = false }
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
  /// A failure here is handled by ``endAbandonedTransaction()`` before the connection's next
  /// statement. SQLite may already have rolled back on its own (after an I/O error or
  /// SQLITE_FULL), and the caller reports the error that caused the rollback.
  private func rollback() {
    guard sqlite3_get_autocommit(handle) == 0 else { return }
    try? runRollback()
  }

  /// Rolls back a transaction a failure left open (its ROLLBACK failed too), before anything
  /// else runs on the connection: a statement in it would see, and a later COMMIT write,
  /// changes of a write that was reported as failed; a BEGIN would fail, and every one after
  /// it; a reader would stay on an old version of the file for good.
  ///
  /// Costs a field read when there is nothing to do.
  func endAbandonedTransaction() throws(SQLiteError) {
    guard !isInTransaction, sqlite3_get_autocommit(handle) == 0 else { return }
    try runRollback()
  }

  /// Not through ``withStatement(_:_:)``, which calls ``endAbandonedTransaction()``.
  private func runRollback() throws(SQLiteError) {
    let statement = try cachedStatement("ROLLBACK")
    defer { statement.reset() }
    try statement.run()
  }
}
