import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The store's statements, built from the column and parameter names of `ScopeColumns.swift`.
///
/// The write statements are `package` so the benchmark's raw-C baseline runs exactly the SQL
/// the store runs.
package enum ScopeSQL {
  /// The read-through of one key: the scope row and at most one entitlement row, one statement.
  /// A decision needs neither the product nor the renewal flag, and the key is known, so only
  /// the decision's columns come back. A resident filled this way is never complete, so any
  /// read that shows the whole entitlement goes through ``fullRead``.
  static let pointRead = """
    SELECT \(ScopeRowColumn.selectList), \(DecisionColumn.selectList)
    FROM scope s LEFT JOIN entitlement e ON e.scope_id = s.id AND e.key = ?2
    WHERE s.scope_key = ?1
    """

  /// The whole scope: the scope row repeated on each entitlement row, so one statement (one
  /// implicit read transaction) gives a consistent picture.
  static let fullRead = """
    SELECT \(ScopeRowColumn.selectList), \(DecisionColumn.selectList),
      \(EntitlementDetailColumn.selectList)
    FROM scope s LEFT JOIN entitlement e ON e.scope_id = s.id
    WHERE s.scope_key = ?1
    """

  /// The scope row as a read of the whole scope needs it: the decision's columns, the body, the
  /// bookkeeping a decision leaves out, and the signed material. Run with ``entitlementRows``
  /// in one read transaction, so both are one version of the file; joined into one statement,
  /// the body and thirty columns came back once for every entitlement row.
  static let wholeScopeRead = """
    SELECT \(ScopeRowColumn.selectList), \(WholeReadColumn.selectList),
      \(SignedMaterialColumn.selectList)
    FROM scope s WHERE s.scope_key = ?1
    """

  /// Every entitlement row of the scope row `?1` in key order (the primary key's, so SQLite
  /// sorts nothing), its columns where ``fullRead`` has them (the scope row's places hold NULL),
  /// so one row mapper serves both.
  static let entitlementRows = """
    SELECT \(Array(repeating: "NULL", count: Int(ScopeRowColumn.end)).joined(separator: ", ")),
      \(DecisionColumn.selectList), \(EntitlementDetailColumn.selectList)
    FROM entitlement e WHERE e.scope_id = ?1 ORDER BY e.key
    """

  /// Every scope's full scope row for the support tool's listing, most recently used first.
  static let scopeSummaries = """
    SELECT \(ScopeRowColumn.selectList), \(BookkeepingColumn.selectList),
      \(SummaryColumn.selectList)
    FROM scope s ORDER BY s.last_used_at DESC, s.id DESC
    """

  /// The store's named statements, by what each does (retention's few, on columns these name
  /// too, are written where they run): the support tool's health check prepares each, so a
  /// file whose tables another tool changed is reported by the statement it breaks, where a
  /// read would only answer `unreadable`.
  static let everyStatement: [(name: String, sql: String)] = [
    ("point read", pointRead), ("full read", fullRead), ("whole-scope read", wholeScopeRead),
    ("entitlement rows", entitlementRows), ("scope summaries", scopeSummaries),
    ("scope row read", scopeRowRead), ("stored answer", storedAnswerQuery),
    ("snapshot write", upsertSnapshot), ("refresh failure write", upsertRefreshFailure),
    ("entitlement write", insertEntitlement), ("entitlement delete", deleteEntitlements),
    ("scope delete", deleteScope), ("read marks write", persistReadMarks),
    ("next revision", nextRevision), ("revision counter repair", restoreRevisionCounter),
  ]

  /// Runs ``fullRead`` for `key` on `connection`: the scope row (nil when the file has
  /// no row for it) and the facts of every key its snapshot mentions.
  static func readScope(
    _ key: [UInt8], on connection: SQLiteConnection
  ) throws(SQLiteError) -> (scopeRow: ScopeRow?, entitlements: [String: EntitlementFacts]) {
    var scopeRow: ScopeRow?
    var entitlements: [String: EntitlementFacts] = [:]
    try connection.withStatement(fullRead) { statement throws(SQLiteError) in
      try statement.bind(key, at: 1)
      while try statement.step() {
        if scopeRow == nil { scopeRow = ScopeRow(row: statement) }
        if let (name, facts) = EntitlementFacts.whole(row: statement) {
          entitlements[name] = facts
        }
      }
    }
    return (scopeRow, entitlements)
  }

  // MARK: Writes

  package static let upsertSnapshot = upsert(
    SnapshotParameter.assignments.map { ($0.column, $0.value.rawValue) },
    // A successful refresh clears the failure it follows; the mark is reset, not raised
    // (<doc:TimeModel>).
    alsoOnConflict: ["last_refresh_failed_at = NULL", "last_refresh_failure_reason = NULL"],
    returningID: true)

  static let upsertRefreshFailure = upsert(
    RefreshFailureParameter.assignments.map { ($0.column, $0.value.rawValue) },
    raising: ["high_water_mark"], alsoOnConflict: [], returningID: false)

  /// The scope row alone (``ScopeRowColumn``), for a write that needs the stored bookkeeping.
  static let scopeRowRead = """
    SELECT \(ScopeRowColumn.selectList) FROM scope s WHERE s.scope_key = ?1
    """

  /// An INSERT of a scope row with its identity and `assignments`, which on a conflict with
  /// the scope's existing row updates each assigned column to the new value, except that
  /// `raising` columns and the last use only ever move forward.
  private static func upsert(
    _ assignments: [(column: String, parameter: Int32)], raising: Set<String> = [],
    alsoOnConflict extra: [String], returningID: Bool
  ) -> String {
    // A new row counts the purchases its scope observed before it existed (a purchase made
    // before the first refresh, or kept across a log-out's removal); from then on the queue's
    // triggers keep the count, so an existing row's is left alone.
    let columns = ScopeIdentityParameter.columns + assignments.map(\.column) + ["unsent_purchases"]
    let values =
      ScopeIdentityParameter.allCases.map { "?\($0.rawValue)" }
      + assignments.map { "?\($0.parameter)" }
      + [PurchaseQueueSQL.unsentCount(observerKey: "?\(ScopeIdentityParameter.scopeKey.rawValue)")]
    let forward = raising.union(["last_used_at"])
    let updates =
      assignments.map { column, _ in
        forward.contains(column)
          ? "\(column) = max(scope.\(column), excluded.\(column))"
          : "\(column) = excluded.\(column)"
      } + extra
    return """
      INSERT INTO scope (\(columns.joined(separator: ", ")))
      VALUES (\(values.joined(separator: ", ")))
      ON CONFLICT (scope_key) DO UPDATE SET \(updates.joined(separator: ", "))
      """
        + (returningID ? " RETURNING \(UpsertReturnColumn.selectList)" : "")
  }

  /// The revision for the write in progress: the file-wide counter, moved on by one (see
  /// `Migrations/0002_revision_and_device_block.sql`). Run inside the write's transaction.
  /// A counter that holds no integer, or the largest one, moves nowhere: SQLite would turn
  /// `value + 1` into a REAL, and every later write would share one revision.
  package static let nextRevision = """
    UPDATE revision_counter SET value = value + 1
    WHERE id = 1 AND typeof(value) = 'integer' AND value < 9223372036854775807
    RETURNING value
    """

  /// Puts the counter row back when another tool deleted it, starting past every revision
  /// still in the file.
  static let restoreRevisionCounter = """
    INSERT OR IGNORE INTO revision_counter (id, value)
    SELECT 1, coalesce(max(revision), 0) FROM scope
    """

  package static let deleteEntitlements = "DELETE FROM entitlement WHERE scope_id = ?1"

  package static let insertEntitlement = """
    INSERT INTO entitlement (\(EntitlementParameter.allCases.map(\.column).joined(separator: ", ")))
    VALUES (\(EntitlementParameter.allCases.map { "?\($0.rawValue)" }.joined(separator: ", ")))
    """

  static let deleteScope = "DELETE FROM scope WHERE scope_key = ?1"

  /// Persists ``ReadMarks``; never moves either time backwards. A mark read under another
  /// refresh than the row's now (its refresh revision) is not written: the refresh since
  /// reset the mark (<doc:TimeModel>), and an older device time would undo that.
  static let persistReadMarks = """
    UPDATE scope SET
      high_water_mark = CASE WHEN refresh_revision IS ?\(ReadMarksParameter.refreshRevision.rawValue)
        THEN max(high_water_mark, ?\(ReadMarksParameter.highWaterMark.rawValue))
        ELSE high_water_mark END,
      last_used_at = max(last_used_at, ?\(ReadMarksParameter.lastUsedAt.rawValue))
    WHERE scope_key = ?\(ReadMarksParameter.scopeKey.rawValue)
    """

  /// What a conditional store compares an answer with (``StoredAnswerColumn``). No row when
  /// the scope has no snapshot.
  static let storedAnswerQuery = """
    SELECT \(StoredAnswerColumn.selectList) FROM scope s
    WHERE s.scope_key = ?1 AND s.snapshot IS NOT NULL
    """

  /// Binds the signed material and the writer's verdict to the snapshot upsert.
  static func bindTrust(_ trust: StoredTrust, to statement: SQLiteStatement) throws(SQLiteError) {
    func bind(_ bytes: [UInt8]?, _ parameter: SnapshotParameter) throws(SQLiteError) {
      if let bytes {
        try statement.bind(bytes, to: parameter)
      } else {
        try statement.bindNull(at: parameter.rawValue)
      }
    }
    try bind(trust.signature?.signature, .responseSignature)
    try bind(trust.signature?.intermediate, .responseIntermediate)
    try bind(trust.signature?.nonce, .responseNonce)
    try bind(trust.signature?.scopeHash, .responseScopeHash)
    try bind(trust.requestNonce, .requestNonce)
    try statement.bind(trust.checkedAt, to: SnapshotParameter.trustCheckedAt)
    try statement.bind(
      trust.writerVerdict?.failure?.rawValue, to: SnapshotParameter.verificationFailure)
  }

  /// Binds the scope's identity, as every statement that may create its row takes it.
  static func bindScope(_ scope: CacheScope, to statement: SQLiteStatement) throws(SQLiteError) {
    try statement.bind(scope.key.bytes, to: ScopeIdentityParameter.scopeKey)
    try statement.bind(scope.sdkKeyHash, to: ScopeIdentityParameter.sdkKeyHash)
    try statement.bind(scope.userHash, to: ScopeIdentityParameter.userHash)
    try statement.bind(scope.installationHash, to: ScopeIdentityParameter.installationHash)
    try statement.bind(scope.environment.rawValue, to: ScopeIdentityParameter.environment)
  }
}
