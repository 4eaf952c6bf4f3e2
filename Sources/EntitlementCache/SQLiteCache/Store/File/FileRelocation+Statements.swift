import CSQLite

/// The statements of a move, built from the columns the target's schema has.
extension FileRelocation {
  /// What the merge reads itself of the old file's scope rows, after the snapshot's claims
  /// (``StoredAnswerColumn``); the copied columns follow, from ``copied``.
  enum SourceColumn: Int32, ResultColumn {
    case id, scopeKey, highWaterMark, lastUsedAt, sdkKeyHash, installationHash, userHash
    case environment

    static let first = StoredAnswerColumn.end
    /// Where the columns copied as they are start.
    static let copied = end

    var expression: String {
      switch self {
      case .id: "s.id"
      case .scopeKey: "s.scope_key"
      case .highWaterMark: "s.high_water_mark"
      case .lastUsedAt: "s.last_used_at"
      case .sdkKeyHash: "s.sdk_key_hash"
      case .installationHash: "s.installation_hash"
      case .userHash: "s.user_hash"
      case .environment: "s.environment"
      }
    }
  }

  /// The target's row for a scope: its ID after the snapshot's claims.
  enum TargetColumn: Int32, ResultColumn {
    case id

    static let first = StoredAnswerColumn.end

    var expression: String { "s.id" }
  }

  /// The target's row for a scope, and what a conditional store compares with.
  struct TargetRow {
    var id: Int64
    /// Nil when the row holds no snapshot (a failed refresh, or read marks, recorded alone).
    var claims: StoredAnswer?

    init(_ row: SQLiteStatement) {
      id = row.int64(TargetColumn.id)
      claims = StoredAnswer(row: row)
    }
  }

  static let targetRow = """
    SELECT \(StoredAnswerColumn.selectList), \(TargetColumn.selectList)
    FROM scope s WHERE s.scope_key = ?1
    """

  /// A scope whose snapshot the target keeps: only its later marks come across.
  static let keepLaterMarks = """
    UPDATE scope SET revision = ?2, high_water_mark = max(high_water_mark, ?4),
      last_used_at = max(last_used_at, ?5)
    WHERE id = ?1
    """

  /// What the merge compares of a queued entry: ``queuedEntry`` returns all three,
  /// ``observationOrder`` the first and the last.
  enum EntryColumn: Int32, ResultColumn {
    case id, observedAt, state

    static let first: Int32 = 0

    var expression: String {
      switch self {
      case .id: "q.id"
      case .observedAt: "q.first_observed_at"
      case .state: "q.state"
      }
    }
  }

  static let queuedEntry =
    "SELECT \(EntryColumn.selectList) FROM purchase_queue q WHERE q.transaction_id = ?1"
  static let deleteEntry = "DELETE FROM purchase_queue WHERE id = ?1"
  static let observationOrder = """
    SELECT \(EntryColumn.id.expression), \(EntryColumn.observedAt.expression)
    FROM purchase_queue q ORDER BY q.id
    """
  static let renumberEntry = "UPDATE purchase_queue SET id = ?1 WHERE id = ?2"

  static let mergedBefore = "SELECT 1 FROM merged_file WHERE identity = ?1"
  static let recordMerge = "INSERT INTO merged_file (identity, merged_at) VALUES (?1, ?2)"

  /// The data columns of the three tables, as both files' schemas have them, without those
  /// the merge sets itself.
  struct Columns {
    /// The scope table's, but its row ID, key, revisions, marks and unsent count.
    let scope: [String]
    /// The entitlement table's, but the scope row ID.
    let entitlement: [String]
    /// The purchase queue's, but its row ID (its observation order in the target).
    let purchase: [String]

    private static let setByTheMerge: Set<String> = [
      "id", "scope_key", "revision", "refresh_revision", "high_water_mark", "last_used_at",
      "unsent_purchases",
    ]

    init(target: SQLiteConnection, source: SQLiteConnection) throws(SQLiteError) {
      func columns(_ table: String) throws(SQLiteError) -> [String] {
        let ours = try Self.dataColumns(of: table, on: target)
        guard try Self.dataColumns(of: table, on: source) == ours else {
          throw SQLiteError(
            operation: "relocate", extendedResultCode: SQLITE_ERROR,
            message: "the old file's \(table) table has other columns than this file's")
        }
        return ours
      }
      scope = try columns("scope").filter { !Self.setByTheMerge.contains($0) }
      entitlement = try columns("entitlement").filter { $0 != "scope_id" }
      purchase = try columns("purchase_queue").filter { $0 != "id" }
    }

    /// The columns of `table` that hold data: not the generated ones.
    private static func dataColumns(
      of table: String, on connection: SQLiteConnection
    ) throws(SQLiteError) -> [String] {
      try connection.withStatement(
        "SELECT name FROM pragma_table_xinfo(?1) WHERE hidden = 0 ORDER BY cid"
      ) { statement throws(SQLiteError) in
        try statement.bind(table, at: 1)
        var names: [String] = []
        while try statement.step() {
          if let name = statement.string(0) { names.append(name) }
        }
        return names
      }
    }

    var scopeStatements: (sourceRows: String, insert: String, replace: String) {
      let copied = scope.map(Self.quoted)
      let values = copied.indices.map { "?\($0 + 6)" }
      let sourceRows = """
        SELECT \(StoredAnswerColumn.selectList), \(SourceColumn.selectList),
          \(copied.map { "s.\($0)" }.joined(separator: ", "))
        FROM scope s ORDER BY s.id
        """
      // A new row counts the purchases the target queued for its scope before; those the
      // move brings are counted by the queue's triggers as they come.
      let insert = """
        INSERT INTO scope (scope_key, revision, refresh_revision, high_water_mark, last_used_at,
          unsent_purchases, \(copied.joined(separator: ", ")))
        VALUES (?1, ?2, ?3, ?4, ?5, \(PurchaseQueueSQL.unsentCount(observerKey: "?1")),
          \(values.joined(separator: ", ")))
        RETURNING id
        """
      let assignments = zip(copied, values).map { "\($0) = \($1)" }
      let replace = """
        UPDATE scope SET revision = ?2, refresh_revision = ?3,
          high_water_mark = max(high_water_mark, ?4), last_used_at = max(last_used_at, ?5),
          \(assignments.joined(separator: ", "))
        WHERE id = ?1
        """
      return (sourceRows, insert, replace)
    }

    var entitlementStatements: (select: String, insert: String) {
      let names = entitlement.map(Self.quoted).joined(separator: ", ")
      let values = entitlement.indices.map { "?\($0 + 2)" }.joined(separator: ", ")
      return (
        "SELECT \(names) FROM entitlement WHERE scope_id = ?1",
        "INSERT INTO entitlement (scope_id, \(names)) VALUES (?1, \(values))"
      )
    }

    var purchaseStatements: (select: String, insert: String) {
      let names = purchase.map(Self.quoted).joined(separator: ", ")
      let values = purchase.indices.map { "?\($0 + 1)" }.joined(separator: ", ")
      // A constraint a row breaks fails the move, which then removes nothing.
      return (
        "SELECT \(names) FROM purchase_queue ORDER BY id",
        "INSERT INTO purchase_queue (\(names)) VALUES (\(values)) RETURNING id"
      )
    }

    /// Where the old file's purchase rows hold the transaction, the state and the first
    /// observation.
    func purchaseKeyColumns() throws(SQLiteError) -> (Int32, Int32, Int32) {
      func index(_ name: String) throws(SQLiteError) -> Int32 {
        guard let index = purchase.firstIndex(of: name) else {
          throw SQLiteError(
            operation: "relocate", extendedResultCode: SQLITE_ERROR,
            message: "the purchase queue has no \(name) column")
        }
        return Int32(clamping: index)
      }
      return (
        try index("transaction_id"), try index("state"), try index("first_observed_at")
      )
    }

    private static func quoted(_ name: String) -> String {
      "\"" + name.replacing("\"", with: "\"\"") + "\""
    }
  }
}
