#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The purchase queue's statements (`Migrations/0004_purchase_queue.sql`) and its row mapping.
///
/// `package` so the benchmark's raw-C baseline inserts exactly the row the store inserts.
package enum PurchaseQueueSQL {
  /// Without statistics the planner takes the index of every entry an observer has, and reads
  /// each row for its state; named, the partial index of unsent entries costs the backlog
  /// only (and a statement that cannot use it fails to prepare rather than scan).
  private static let unsentIndex = "INDEXED BY purchase_queue_unsent"

  /// How many unsent entries `observerKey` (an SQL expression) observed, counted in the
  /// partial index, which holds only the backlog: what a new scope row starts its
  /// `unsent_purchases` at, and what a scope with no row is asked.
  static func unsentCount(observerKey: String) -> String {
    """
    (SELECT count(*) FROM purchase_queue q \(unsentIndex) WHERE q.observer_key = \(observerKey) \
    AND q.state IN ('pending', 'posting'))
    """
  }

  /// Whether the scope bound to `?1` observed an entry still to post: for a scope with no row.
  static let scopeHasUnsentEntry = "SELECT " + unsentCount(observerKey: "?1") + " > 0"

  /// Runs ``scopeHasUnsentEntry`` for `scope` on `connection`.
  static func scopeHasUnsentEntry(
    _ scope: CacheScope, on connection: SQLiteConnection
  ) throws(SQLiteError) -> Bool {
    try connection.withStatement(scopeHasUnsentEntry) { statement throws(SQLiteError) in
      try statement.bind(scope.key.bytes, at: 1)
      return try statement.step() && statement.int64(0) != 0
    }
  }

  /// The columns of an entry, in ``Column`` order; the token is last and only some reads
  /// select it.
  private static let columns = """
    transaction_id, observer_key, environment, product_id, state, attempts, next_attempt_at,
    first_observed_at, state_changed_at, last_failure, resolution, observer_user_hash
    """

  enum Column: Int32 {
    case transactionID, observerKey, environment, productID, state, attempts, nextAttemptAt
    case firstObservedAt, stateChangedAt, lastFailure, resolution, observerUserHash, payload
  }

  /// Inserts a new entry; its parameters are ``InsertParameter``.
  package static let insert = """
    INSERT INTO purchase_queue (transaction_id, observer_key, observer_user_hash, environment,
      product_id, payload, state, attempts, first_observed_at, state_changed_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 0, ?7, ?7)
    """

  /// The insert's bind indexes.
  package enum InsertParameter: Int32 {
    case transactionID = 1, observerKey, observerUserHash, environment, productID, payload
    case observedAt
  }

  static let entryByTransaction = """
    SELECT \(columns), payload FROM purchase_queue WHERE transaction_id = ?1
    """

  static let entriesByObserver = """
    SELECT \(columns), payload FROM purchase_queue WHERE observer_key = ?1 ORDER BY id
    """

  /// An observer's unsent entries, from the partial index that holds only them.
  static let unsentByObserver = """
    SELECT \(columns), payload FROM purchase_queue \(unsentIndex)
    WHERE observer_key = ?1 AND state IN ('pending', 'posting') ORDER BY id
    """

  /// Every entry without its token, for the support tool's listing.
  static let listing = "SELECT \(columns) FROM purchase_queue ORDER BY id"

  static let countsByState = "SELECT state, count(*) FROM purchase_queue GROUP BY state"

  /// Writes an entry's changing columns back.
  static let update = """
    UPDATE purchase_queue SET state = ?2, attempts = ?3, next_attempt_at = ?4,
      state_changed_at = ?5, last_failure = ?6, resolution = ?7
    WHERE transaction_id = ?1
    """

  /// An expired entry its observer observed again: pending, with the new token `?2`, its 30
  /// days counted from `?3` (``QueuedPurchase/reobserved(as:at:)``).
  static let reopen = """
    UPDATE purchase_queue SET state = 'pending', payload = ?2, first_observed_at = ?3,
      state_changed_at = ?3, next_attempt_at = NULL
    WHERE transaction_id = ?1 AND state = 'expired'
    """

  /// Unsent entries observed at or before `?1` become expired at `?2` (retention).
  static let expireUnsent = """
    UPDATE purchase_queue SET state = 'expired', state_changed_at = ?2, next_attempt_at = NULL
    WHERE state IN ('pending', 'posting') AND first_observed_at <= ?1
    """

  /// Synced entries that synced at or before `?1` are deleted (retention): the app has
  /// finished their transactions, so the store does not deliver them again.
  static let deleteSynced = """
    DELETE FROM purchase_queue WHERE state = 'synced' AND state_changed_at <= ?1
    """

  /// Other final entries that reached their state at or before `?1` lose their token and keep
  /// the rest (retention): the app never finished their transactions, so the store may
  /// deliver them again, and the row keeps each bound to its first observer.
  static let dropFinalTokens = """
    UPDATE purchase_queue SET payload = x''
    WHERE state IN ('conflict', 'rejected', 'expired') AND state_changed_at <= ?1
      AND length(payload) > 0
    """

  /// The oldest final entries beyond a cap of `?1` are deleted; unsent ones never are.
  static let deleteFinalOverCap = """
    DELETE FROM purchase_queue WHERE id IN (
      SELECT id FROM purchase_queue WHERE state NOT IN ('pending', 'posting')
      ORDER BY state_changed_at ASC, id ASC
      LIMIT max(0, (SELECT count(*) FROM purchase_queue
        WHERE state NOT IN ('pending', 'posting')) - ?1))
    """

  /// Every statement of the queue, by what it does, for the health check beside
  /// ``ScopeSQL/everyStatement``.
  static let everyStatement: [(name: String, sql: String)] = [
    ("purchase check", scopeHasUnsentEntry), ("purchase insert", insert),
    ("purchase by transaction", entryByTransaction), ("purchases by observer", entriesByObserver),
    ("unsent purchases", unsentByObserver), ("purchase listing", listing),
    ("purchase counts", countsByState), ("purchase update", update), ("purchase reopen", reopen),
    ("purchase expiry", expireUnsent), ("synced purchase delete", deleteSynced),
    ("purchase token drop", dropFinalTokens), ("purchase cap", deleteFinalOverCap),
  ]

  /// The entry on the current row of a statement that selected the token too; nil when a
  /// column is out of its schema's range (another tool edited the file).
  static func entry(row: SQLiteStatement) -> QueuedPurchase? {
    guard let fields = fields(row: row), let payload = row.data(Column.payload.rawValue) else {
      return nil
    }
    return QueuedPurchase(
      transactionID: fields.transactionID, productID: fields.productID,
      observer: fields.observer, environment: fields.environment, token: PurchaseToken(payload),
      state: fields.state, attempts: fields.attempts, nextAttemptAt: fields.nextAttemptAt,
      firstObservedAt: fields.firstObservedAt, stateChangedAt: fields.stateChangedAt,
      lastFailure: fields.lastFailure, resolution: fields.resolution)
  }

  /// An entry's fields without its token.
  static func fields(row: SQLiteStatement) -> QueuedPurchaseSummary? {
    guard let transactionID = row.string(Column.transactionID.rawValue),
      let observerBytes = row.bytes(Column.observerKey.rawValue),
      let observer = ScopeKey(bytes: observerBytes),
      let environment = row.string(Column.environment.rawValue).flatMap(StoreEnvironment.init),
      let productID = row.string(Column.productID.rawValue),
      let state = row.string(Column.state.rawValue).flatMap(PurchaseState.init),
      let firstObservedAt = row.date(Column.firstObservedAt.rawValue),
      let stateChangedAt = row.date(Column.stateChangedAt.rawValue),
      let userHash = row.bytes(Column.observerUserHash.rawValue)
    else { return nil }
    let resolution = row.string(Column.resolution.rawValue).flatMap(ClaimHint.init)
    return QueuedPurchaseSummary(
      transactionID: transactionID, productID: productID, observer: observer,
      observerUserHashPrefix: ScopeKey(digest: userHash).hexPrefix, environment: environment,
      state: state,
      attempts: Int(clamping: row.int64(Column.attempts.rawValue)),
      nextAttemptAt: row.date(Column.nextAttemptAt.rawValue), firstObservedAt: firstObservedAt,
      stateChangedAt: stateChangedAt,
      lastFailure: row.string(Column.lastFailure.rawValue).flatMap(
        FetchFailure.init(recordedReason:)),
      resolution: resolution)
  }
}
