/// The cache's reader connection, with every statement a read runs: the store's side of a
/// read. The read path (``ScopeReader``) holds it and decides when to read; what to run, and
/// how a row maps to facts, is here.
///
/// A class, so the prepared point read is finalized (here, in `deinit`) before the connection
/// it belongs to closes, whoever lets go of the reader last. Only ever used under the cache's
/// reads lock.
final class StoreReader {
  let connection: SQLiteConnection
  private let pointReader = PointReader()

  init(_ connection: SQLiteConnection) {
    self.connection = connection
  }

  deinit {
    pointReader.reset()
  }

  /// The read-through of one key of `scope`: one statement (``PointReader``); `resident` is
  /// the one memory holds, reused when the row still matches its version.
  func point(
    _ key: String, of scope: CacheScope, matching resident: ResidentScope?
  ) throws(ReadFailure) -> PointReader.Outcome {
    try pointReader.read(key, of: scope, matching: resident, on: connection)
  }

  /// The scope row of `scope` (nil when the file has no row for it) and the facts of every key
  /// its snapshot mentions, in one statement.
  func scope(
    _ scope: CacheScope
  ) throws(SQLiteError) -> (scopeRow: ScopeRow?, entitlements: [String: EntitlementFacts]) {
    try ScopeSQL.readScope(scope.key.bytes, on: connection)
  }

  /// The whole scope with its body and signed material, in one read transaction (see
  /// ``WholeScopeRead``).
  func wholeScope(
    _ scope: CacheScope, checking: Bool, parsed: inout ParsedBodies
  ) throws(SQLiteError) -> WholeScopeRead {
    try WholeScopeRead(scope, on: connection, checking: checking, parsed: &parsed)
  }

  /// Whether `scope`, which has no row, observed a purchase the queue has not posted yet.
  func hasUnsentPurchase(_ scope: CacheScope) throws(SQLiteError) -> Bool {
    try PurchaseQueueSQL.scopeHasUnsentEntry(scope, on: connection)
  }

  /// Keeps the log unmerged when the connection closes: the file is damaged and is left as it
  /// is.
  func skipCheckpointOnClose() throws(SQLiteError) {
    try connection.skipCheckpointOnClose()
  }
}
