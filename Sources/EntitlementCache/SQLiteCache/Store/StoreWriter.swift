/// The cache's writer connection, with every statement a write runs, in the domain's words:
/// the store's side of the SQLite cache. The read path never sees it; the cache reaches it only
/// under its writer lock (``SQLiteCustomerInfoCache``), so it is never shared between threads.
///
/// A struct over the connection, which is a class that closes itself: copies name the same
/// connection, and the lock holds the one the cache owns.
struct StoreWriter {
  let connection: SQLiteConnection

  init(_ connection: SQLiteConnection) {
    self.connection = connection
  }

  /// The connection's serial: a change check asked of a writer since replaced (a damaged file
  /// moved aside) says nothing of this one.
  var serial: UInt64 { connection.serial }

  /// `PRAGMA data_version`: a number that moves with every commit of *another* connection to
  /// the file (another instance, another process) and ignores this one's own, whose results
  /// are already installed in memory. One statement step, no read of any row. The only place
  /// the cache asks it: opening, a read's cross-connection check and ``SQLiteCustomerInfoCache/changeMark()``
  /// all come here.
  func dataVersion() throws(SQLiteError) -> Int64 {
    try connection.scalarInt("PRAGMA data_version")
  }

  /// The file's schema version (`PRAGMA user_version`); nil when it cannot be read.
  func schemaVersion() -> Int64? {
    try? connection.scalarInt("PRAGMA user_version")
  }

  /// Runs `body` in one `BEGIN IMMEDIATE` transaction and commits it.
  ///
  /// - Parameter durable: The commit is on disk before this returns, whatever the cache's
  ///   configured durability: in WAL mode `NORMAL` syncs the log only at a checkpoint, `FULL`
  ///   syncs it at this commit. `raisingFromNormal` says whether the connection runs at
  ///   `NORMAL`, to be set back after.
  func transaction<T>(
    durable: Bool = false, raisingFromNormal: Bool = true,
    _ body: () throws(SQLiteError) -> T
  ) throws(SQLiteError) -> T {
    let raises = durable && raisingFromNormal
    if raises { try connection.execute("PRAGMA synchronous = FULL") }
    // Not set back, commits are only slower, never less durable.
    defer { if raises { try? connection.execute("PRAGMA synchronous = NORMAL") } }
    return try connection.writeTransaction(body)
  }

  /// Keeps the log unmerged when the connection closes: the file is damaged, or a newer
  /// build's, and is left as it is.
  func skipCheckpointOnClose() throws(SQLiteError) {
    try connection.skipCheckpointOnClose()
  }
}
