import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A scope row as the read path needs it: what a decision reads and the row's identity.
///
/// The bookkeeping holds the parts a decision reads; the last refresh attempt, the failure's
/// reason and the snapshot's size and digest are left nil here
/// (``SQLiteCustomerInfoCache/load(_:)`` reads them): every column costs the read-through, and
/// a text or blob column costs SQLite an allocation and a copy.
struct ScopeHeader: Sendable {
  var rowID: Int64
  /// Changes with every write of the row; with ``rowID`` and the high-water mark, tells two
  /// versions of the row apart.
  var revision: Int64
  var bookkeeping: ScopeBookkeeping
  /// Nil when the scope has bookkeeping but no snapshot.
  var facts: SnapshotFacts?
  var lastUsedAt: Date
  /// The stored ``DeviceBlockColumn`` of a blocked installation, decoded after the row is
  /// released (see ``decodingDeviceBlock()``) because decoding can fail with a snapshot error.
  var undecodedDeviceBlock: String?

  /// The header with its device block decoded.
  func decodingDeviceBlock() throws(SnapshotError) -> ScopeHeader {
    guard let block = undecodedDeviceBlock, let device = facts?.deviceAccess else {
      return self
    }
    var decoded = self
    decoded.facts?.deviceAccess = try DeviceBlockColumn.decode(block, into: device)
    decoded.undecodedDeviceBlock = nil
    return decoded
  }
}

/// The SQL of the store, one place, with the row mapping that goes with each statement.
///
/// The write statements are `package` so the benchmark's raw-C baseline runs exactly the SQL
/// the store runs.
package enum ScopeSQL {
  /// Columns 0–11 of every scope read, what ``header(_:)`` maps; `headerColumnCount` marks
  /// where the next columns start. Only what a decision reads: see ``ScopeHeader``.
  static let headerColumns = """
    s.stored_at, s.server_time, s.last_refresh_failed_at, s.high_water_mark, s.revision,
    s.verification, s.access_context_expires_at, s.device_status, s.device_expires_at,
    s.device_block, s.last_used_at, s.id
    """
  static let headerColumnCount: Int32 = 12

  /// The entitlement columns after the header, in the places ``entitlementFacts(_:)`` reads:
  /// the point read takes the first seven, with `scope_id` in place of the key it already
  /// knows (the row's presence shows in it); the full read takes all nine.
  static let entitlementColumns = """
    e.key, e.status, e.expires_at, e.grace_expires_at, e.verified_at, e.source, e.claim_hint,
    e.product_id, e.will_renew
    """

  /// The decision's columns of the point read's entitlement: a decision needs neither the
  /// product nor the renewal flag. A resident filled this way is never complete, so any read
  /// that shows the whole entitlement goes through ``fullRead``.
  static let pointReadEntitlementColumns = """
    e.scope_id, e.status, e.expires_at, e.grace_expires_at, e.verified_at, e.source, e.claim_hint
    """
  static let pointReadColumnCount = headerColumnCount + 7

  /// The read-through of one key: scope header and at most one entitlement row, one statement.
  static let pointRead = """
    SELECT \(headerColumns), \(pointReadEntitlementColumns)
    FROM scope s LEFT JOIN entitlement e ON e.scope_id = s.id AND e.key = ?2
    WHERE s.scope_key = ?1
    """

  /// The whole scope: the header repeated on each entitlement row, so one statement (one
  /// implicit read transaction) gives a consistent picture.
  static let fullRead = """
    SELECT \(headerColumns), \(entitlementColumns)
    FROM scope s LEFT JOIN entitlement e ON e.scope_id = s.id
    WHERE s.scope_key = ?1
    """

  /// Runs ``fullRead`` for `key` on `connection`: the scope's header (nil when the file has
  /// no row for it) and the facts of every key its snapshot mentions.
  static func readScope(
    _ key: [UInt8], on connection: SQLiteConnection
  ) throws(SQLiteError) -> (header: ScopeHeader?, entitlements: [String: EntitlementFacts]) {
    var header: ScopeHeader?
    var entitlements: [String: EntitlementFacts] = [:]
    try connection.withStatement(fullRead) { statement throws(SQLiteError) in
      try statement.bind(key, at: 1)
      while try statement.step() {
        if header == nil { header = ScopeSQL.header(statement) }
        if let (name, facts) = ScopeSQL.entitlement(statement) { entitlements[name] = facts }
      }
    }
    return (header, entitlements)
  }

  /// The header, the bookkeeping it leaves out, and the stored JSON, for reads that need the
  /// whole CustomerInfo; ``fullBookkeeping(_:)`` maps it.
  static let snapshotRead = """
    SELECT \(headerColumns), s.last_refresh_attempt_at, s.last_refresh_failure_reason,
      s.snapshot_size, s.snapshot_sha256, s.snapshot
    FROM scope s WHERE s.scope_key = ?1
    """
  static let snapshotColumn = headerColumnCount + 4

  /// A ``snapshotRead`` row's header with every part of its bookkeeping.
  static func fullBookkeeping(_ row: SQLiteStatement) -> ScopeHeader {
    var header = header(row)
    let base = headerColumnCount
    header.bookkeeping.lastRefreshAttemptAt = row.date(base)
    header.bookkeeping.lastRefreshFailureReason = row.string(base + 1)
    header.bookkeeping.snapshotSize = row.optionalInt64(base + 2).map { Int($0) }
    header.bookkeeping.snapshotSHA256 = row.bytes(base + 3)
    return header
  }

  static func header(_ row: SQLiteStatement) -> ScopeHeader {
    let storedAt = row.date(0)
    let bookkeeping = ScopeBookkeeping(
      storedAt: storedAt, serverTime: row.date(1), lastRefreshFailedAt: row.date(2),
      highWaterMark: Date(unixMilliseconds: row.int64(3)))
    var facts: SnapshotFacts?
    var blocked = false
    if storedAt != nil {
      var device: DeviceAccessInfo?
      if let status: OpenEnum<DeviceAccessStatus> = row.openEnum(7) {
        device = DeviceAccessInfo(status: status, expiresAt: row.date(8))
        blocked = status != .known(.active)
      }
      facts = SnapshotFacts(
        stored: row.openEnum(5) ?? .unknown(""),
        accessContextExpiresAt: row.date(6), deviceAccess: device)
    }
    return ScopeHeader(
      rowID: row.int64(11), revision: row.int64(4), bookkeeping: bookkeeping, facts: facts,
      lastUsedAt: Date(unixMilliseconds: row.int64(10)),
      undecodedDeviceBlock: blocked ? row.string(9) : nil)
  }

  /// The entitlement columns of a ``fullRead`` row; nil when the LEFT JOIN found no row.
  static func entitlement(_ row: SQLiteStatement) -> (key: String, facts: EntitlementFacts)? {
    guard let key = row.string(headerColumnCount), var facts = entitlementFacts(row) else {
      return nil
    }
    let base = headerColumnCount
    facts.productId = row.string(base + 7)
    facts.willRenew = row.optionalInt64(base + 8).map { $0 != 0 }
    return (key, facts)
  }

  /// The entitlement columns a decision reads, without the key; nil when the LEFT JOIN found
  /// no row. The point read knows the key it asked for, so it skips building it from the row.
  static func entitlementFacts(_ row: SQLiteStatement) -> EntitlementFacts? {
    let base = headerColumnCount
    guard !row.isNull(base) else { return nil }
    let claimHint: OpenEnum<ClaimHint>? = row.openEnum(base + 6)
    return EntitlementFacts(
      status: row.openEnum(base + 1), expiresAt: row.date(base + 2),
      gracePeriodExpiresAt: row.date(base + 3), verifiedAt: row.date(base + 4),
      source: row.openEnum(base + 5), claimHint: claimHint?.knownValue)
  }

  // MARK: Writes

  package static let upsertSnapshot = """
    INSERT INTO scope (
      scope_key, sdk_key_hash, user_hash, installation_hash, environment,
      stored_at, server_time, last_refresh_attempt_at, high_water_mark, last_used_at,
      snapshot, snapshot_size, snapshot_sha256, verification, access_context_expires_at,
      device_status, device_expires_at, device_block)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?6, ?8, ?6, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
    ON CONFLICT (scope_key) DO UPDATE SET
      stored_at = excluded.stored_at, server_time = excluded.server_time,
      last_refresh_attempt_at = excluded.last_refresh_attempt_at,
      last_refresh_failed_at = NULL, last_refresh_failure_reason = NULL,
      high_water_mark = max(scope.high_water_mark, excluded.high_water_mark),
      last_used_at = max(scope.last_used_at, excluded.last_used_at),
      snapshot = excluded.snapshot, snapshot_size = excluded.snapshot_size,
      snapshot_sha256 = excluded.snapshot_sha256, verification = excluded.verification,
      access_context_expires_at = excluded.access_context_expires_at,
      device_status = excluded.device_status, device_expires_at = excluded.device_expires_at,
      device_block = excluded.device_block, revision = scope.revision + 1
    RETURNING id, high_water_mark, revision
    """

  static let upsertRefreshFailure = """
    INSERT INTO scope (
      scope_key, sdk_key_hash, user_hash, installation_hash, environment,
      last_refresh_attempt_at, last_refresh_failed_at, last_refresh_failure_reason,
      high_water_mark, last_used_at)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?6, ?6)
    ON CONFLICT (scope_key) DO UPDATE SET
      last_refresh_attempt_at = excluded.last_refresh_attempt_at,
      last_refresh_failed_at = excluded.last_refresh_failed_at,
      last_refresh_failure_reason = excluded.last_refresh_failure_reason,
      high_water_mark = max(scope.high_water_mark, excluded.high_water_mark),
      last_used_at = max(scope.last_used_at, excluded.last_used_at),
      revision = scope.revision + 1
    """

  package static let deleteEntitlements = "DELETE FROM entitlement WHERE scope_id = ?1"

  package static let insertEntitlement = """
    INSERT INTO entitlement (
      scope_id, key, status, expires_at, grace_expires_at, verified_at, source, product_id,
      will_renew, claim_hint)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
    """

  static let deleteScope = "DELETE FROM scope WHERE scope_key = ?1"

  /// Read-time bookkeeping, persisted lazily; never moves either time backwards.
  static let touch = """
    UPDATE scope SET high_water_mark = max(high_water_mark, ?2),
      last_used_at = max(last_used_at, ?3)
    WHERE scope_key = ?1
    """

  static func bindScope(_ scope: CacheScope, to statement: SQLiteStatement) throws(SQLiteError) {
    try statement.bind(scope.key.bytes, at: 1)
    try statement.bind(scope.sdkKeyHash, at: 2)
    try statement.bind(scope.userHash, at: 3)
    try statement.bind(scope.installationHash, at: 4)
    try statement.bind(scope.environment.rawValue, at: 5)
  }
}

extension SQLiteStatement {
  /// A millisecond timestamp column as a date.
  func date(_ column: Int32) -> Date? {
    optionalInt64(column).map(Date.init(unixMilliseconds:))
  }

  /// A blob column as bytes, copied once; nil when NULL.
  func bytes(_ column: Int32) -> [UInt8]? {
    guard let blob = sqlite3_column_blob(handle, column) else {
      return isNull(column) ? nil : []
    }
    let count = Int(sqlite3_column_bytes(handle, column))
    return Array(UnsafeRawBufferPointer(start: blob, count: count))
  }

  /// A text column as a server enumeration; nil when NULL. Known values are matched on the
  /// column's bytes, so only a value this build does not know builds a string.
  func openEnum<Known: CaseIterable>(_ column: Int32) -> OpenEnum<Known>? {
    guard let bytes = utf8(column) else { return nil }
    for value in Known.allCases {
      var raw = value.rawValue
      if raw.withUTF8({ $0.elementsEqual(bytes) }) { return .known(value) }
    }
    return .unknown(String(decoding: bytes, as: UTF8.self))
  }

  /// Binds a date as integer milliseconds since the Unix epoch.
  func bind(_ date: Date?, at index: Int32) throws(SQLiteError) {
    try bind(date?.unixMilliseconds, at: index)
  }
}
