/// The read-through of one key: one prepared statement returning the scope's scope row and at
/// most one entitlement row (``ScopeSQL/pointRead``), mapped straight into a resident.
///
/// The statement is held here rather than looked up in the connection's statement cache,
/// whose key is the SQL text: the read-through would hash those 700 characters every time. It is
/// dropped after a failure, as the cache evicts a failed statement. Used only under the reads
/// lock, so its variables are `@exclusivity(unchecked)` (as ``ScopeReader``'s are).
final class PointReader {
  @exclusivity(unchecked) private var statement: SQLiteStatement?
  @exclusivity(unchecked) private var pendingStatement: SQLiteStatement?
  /// The entitlement key bound to ``statement`` (SQLite's own copy), kept from read to read:
  /// reads mostly ask for the same few keys, and binding a key again costs a copy. Nil
  /// whenever the statement holds no key binding.
  @exclusivity(unchecked) private var boundKey: String?

  /// What one point read gave.
  enum Outcome {
    /// The file still holds what the resident was read from; it now holds the key too.
    case matched(ResidentScope)
    /// A resident built from the row (or its absence) for the key, not yet installed.
    case read(ResidentScope)
  }

  /// Reads `key` of `scope` from `connection`; `resident` is the one memory holds, reused
  /// when the row still matches its version.
  func read(
    _ key: String, of scope: CacheScope, matching resident: ResidentScope?,
    on connection: SQLiteConnection
  ) throws(ReadFailure) -> Outcome {
    let outcome: Result<Outcome, SnapshotError>
    do throws(SQLiteError) {
      try connection.endAbandonedTransaction()
      let prepared = try Self.prepared(&statement, ScopeSQL.pointRead, on: connection)
      do throws(SQLiteError) {
        if boundKey != key {
          boundKey = nil
          try prepared.bind(key, at: 2)
          boundKey = key
        }
        var keyKept = true
        let found = try scope.key.withUnsafeBytes { scopeKey throws(SQLiteError) in
          try prepared.withBorrowedBlob(scopeKey, at: 1, othersKept: &keyKept) {
            () throws(SQLiteError) in
            try Self.step(prepared, key, matching: resident)
          }
        }
        if !keyKept { boundKey = nil }
        if let found {
          outcome = found
        } else {
          outcome = .success(
            Self.absent(key, matching: resident, pending: try unsentEntry(scope, on: connection)))
        }
      } catch {
        statement = nil
        pendingStatement = nil
        boundKey = nil
        throw error
      }
    } catch {
      throw .storage(error)
    }
    switch outcome {
    case .success(let outcome): return outcome
    case .failure(let error): throw .snapshot(error)
    }
  }

  /// Drops the prepared statements, before the connection they belong to closes.
  func reset() {
    statement = nil
    pendingStatement = nil
    boundKey = nil
  }

  /// Whether a scope with no row observed a purchase not posted yet: a purchase made before
  /// the first refresh succeeded. Only such scopes pay for this second statement.
  private func unsentEntry(
    _ scope: CacheScope, on connection: SQLiteConnection
  ) throws(SQLiteError) -> Bool {
    let prepared = try Self.prepared(
      &pendingStatement, PurchaseQueueSQL.scopeHasUnsentEntry, on: connection)
    defer { prepared.reset() }
    try prepared.bind(scope.key.bytes, at: 1)
    guard try prepared.step() else { return false }
    return prepared.int64(0) != 0
  }

  /// The statement held in `held`, prepared on first use.
  private static func prepared(
    _ held: inout SQLiteStatement?, _ sql: String, on connection: SQLiteConnection
  ) throws(SQLiteError) -> SQLiteStatement {
    if let held { return held }
    let statement = try SQLiteStatement(connection: connection, sql: sql, persistent: true)
    held = statement
    return statement
  }

  /// The resident of a scope the file has no row for.
  private static func absent(
    _ key: String, matching resident: ResidentScope?, pending: Bool
  ) -> Outcome {
    if let resident, resident.matches(nil),
      resident.scopeRow.bookkeeping.hasPendingPurchase == pending
    {
      resident.addReadThrough(key, EntitlementFacts())
      return .matched(resident)
    }
    let absent = ResidentScope(
      scopeRow: .absent(pendingPurchase: pending), entitlements: [:], isComplete: false)
    absent.addReadThrough(key, EntitlementFacts())
    return .read(absent)
  }

  /// Steps the point read and maps its row straight into a resident, so the row's parts move
  /// into it rather than being copied through an intermediate value; nil when there is no row.
  private static func step(
    _ statement: SQLiteStatement, _ key: String, matching resident: ResidentScope?
  ) throws(SQLiteError) -> Result<Outcome, SnapshotError>? {
    guard try statement.step() else { return nil }
    let facts = EntitlementFacts(row: statement)
    if let resident, resident.matches(RowVersion(row: statement)) {
      resident.addReadThrough(key, facts)
      return .success(.matched(resident))
    }
    let fresh: ResidentScope
    do {
      fresh = try ResidentScope(pointRead: statement)
    } catch {
      return .failure(error)
    }
    fresh.addReadThrough(key, facts)
    return .success(.read(fresh))
  }
}
