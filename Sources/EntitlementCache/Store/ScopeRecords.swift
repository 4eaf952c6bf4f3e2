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
  /// Nil when the file has no row for the scope.
  var version: RowVersion?
  var bookkeeping: ScopeBookkeeping
  /// The snapshot-wide facts, meaningful only when ``hasSnapshot``: a placeholder otherwise,
  /// so a decision borrows them where they are rather than unwrapping an optional, which
  /// copies every string and array they hold.
  var snapshotFacts: SnapshotFacts
  /// The row holds a snapshot, not only bookkeeping.
  var hasSnapshot: Bool
  /// The stored ``DeviceBlockColumn`` of a blocked installation, copied out of the row and
  /// decoded as a step of its own (see ``decodeDeviceBlock()``): decoding fails with a
  /// snapshot error, not a storage one.
  var undecodedDeviceBlock: String?
  /// The revision of the write that stored the snapshot: which refresh the device high-water
  /// mark belongs to. Nil without a snapshot.
  var refreshRevision: Int64?

  init(
    version: RowVersion?, bookkeeping: ScopeBookkeeping, facts: SnapshotFacts?,
    undecodedDeviceBlock: String? = nil, refreshRevision: Int64? = nil
  ) {
    self.version = version
    self.refreshRevision = refreshRevision
    self.bookkeeping = bookkeeping
    snapshotFacts = facts ?? Self.noSnapshot
    hasSnapshot = facts != nil
    self.undecodedDeviceBlock = undecodedDeviceBlock
  }

  /// The header of a scope the file has no row for.
  static let absent = ScopeHeader(
    version: nil, bookkeeping: ScopeBookkeeping(storedAt: nil), facts: nil)

  private static let noSnapshot = SnapshotFacts(
    verification: .unknown(""), accessContextExpiresAt: nil, deviceAccess: nil)

  /// The snapshot-wide facts; nil when the row holds no snapshot.
  var facts: SnapshotFacts? { hasSnapshot ? snapshotFacts : nil }

  /// Decodes a blocked installation's device block into the snapshot facts; does nothing
  /// for any other header. On failure the header is unchanged.
  mutating func decodeDeviceBlock() throws(SnapshotError) {
    guard let block = undecodedDeviceBlock, let device = snapshotFacts.deviceAccess else {
      return
    }
    snapshotFacts.deviceAccess = try DeviceBlockColumn.decode(block, into: device)
    undecodedDeviceBlock = nil
  }
}

/// Which version of a scope row a read saw: the row, the write that last changed it (its
/// revision moves with every write), and the high-water mark, which another connection's
/// reads raise without a write. Equal versions hold the same snapshot and bookkeeping.
struct RowVersion: Sendable, Equatable {
  var rowID: Int64
  var revision: Int64
  var highWaterMarkMilliseconds: Int64
}

/// The SQL of the store, one place, with the row mapping that goes with each statement.
///
/// The write statements are `package` so the benchmark's raw-C baseline runs exactly the SQL
/// the store runs.
package enum ScopeSQL {
  /// Columns 0–10 of every scope read, what ``header(_:)`` maps; `headerColumnCount` marks
  /// where the next columns start. Only what a decision reads: see ``ScopeHeader``.
  static let headerColumns = """
    s.stored_at, s.server_time, s.last_refresh_failed_at, s.high_water_mark, s.revision,
    s.verification, s.access_context_expires_at, s.device_status, s.device_expires_at,
    s.device_block, s.id, s.refresh_revision, s.refresh_boot_session, s.refresh_boot_uptime
    """
  static let headerColumnCount: Int32 = 14

  /// The entitlement columns a decision reads, in the order ``entitlementFacts(_:from:)``
  /// maps them. A row the LEFT JOIN did not find reads as all NULL, which maps to empty facts,
  /// exactly what a key the snapshot does not mention has.
  static let decisionEntitlementColumns = """
    e.status, e.expires_at, e.grace_expires_at, e.verified_at, e.source, e.claim_hint
    """

  /// The full read's entitlement columns: the key, the decision's columns, then what only a
  /// whole entitlement shows.
  static let entitlementColumns = """
    e.key, \(decisionEntitlementColumns), e.product_id, e.will_renew
    """

  /// The read-through of one key: scope header and at most one entitlement row, one statement.
  /// A decision needs neither the product nor the renewal flag, and the key is known, so only
  /// the decision's columns come back. A resident filled this way is never complete, so any
  /// read that shows the whole entitlement goes through ``fullRead``.
  static let pointRead = """
    SELECT \(headerColumns), \(decisionEntitlementColumns)
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

  /// The version of the row a header read returned, without mapping the rest of it.
  static func rowVersion(_ row: SQLiteStatement) -> RowVersion {
    RowVersion(
      rowID: row.int64(10), revision: row.int64(4), highWaterMarkMilliseconds: row.int64(3))
  }

  /// The header columns of a row. Built in place: assembling the parts and then the header
  /// copied each part once more, a tenth of the read-through's own work.
  static func header(_ row: SQLiteStatement) -> ScopeHeader {
    let storedAt = row.date(0)
    var header = ScopeHeader(
      version: rowVersion(row),
      bookkeeping: ScopeBookkeeping(
        storedAt: storedAt, serverTime: row.date(1), lastRefreshFailedAt: row.date(2),
        deviceHighWaterMark: Date(unixMilliseconds: row.int64(3)),
        refreshBootInstant: row.bootInstant(session: 12, sinceBoot: 13)),
      facts: nil, refreshRevision: row.optionalInt64(11))
    guard storedAt != nil else { return header }
    header.hasSnapshot = true
    header.snapshotFacts.verification = row.openEnum(5) ?? .unknown("")
    header.snapshotFacts.accessContextExpiresAt = row.date(6)
    // Stored in normalized form (see SnapshotFacts): nothing to trim.
    if let status: OpenEnum<DeviceAccessStatus> = row.openEnum(7) {
      header.snapshotFacts.deviceAccess = DeviceAccessInfo(status: status, expiresAt: row.date(8))
      if status != .known(.active) { header.undecodedDeviceBlock = row.string(9) }
    }
    return header
  }

  /// The entitlement columns of a ``fullRead`` row; nil when the LEFT JOIN found no row.
  static func entitlement(_ row: SQLiteStatement) -> (key: String, facts: EntitlementFacts)? {
    let base = headerColumnCount
    guard let key = row.string(base) else { return nil }
    var facts = entitlementFacts(row, from: base + 1)
    facts.productId = row.string(base + 7)
    facts.willRenew = row.optionalInt64(base + 8).map { $0 != 0 }
    return (key, facts)
  }

  /// The ``decisionEntitlementColumns`` starting at column `base`.
  static func entitlementFacts(_ row: SQLiteStatement, from base: Int32) -> EntitlementFacts {
    let claimHint: OpenEnum<ClaimHint>? = row.openEnum(base + 5)
    return EntitlementFacts(
      status: row.openEnum(base), expiresAt: row.date(base + 1),
      gracePeriodExpiresAt: row.date(base + 2), verifiedAt: row.date(base + 3),
      source: row.openEnum(base + 4), claimHint: claimHint?.knownValue)
  }

  // MARK: Writes

  package static let upsertSnapshot = """
    INSERT INTO scope (
      scope_key, sdk_key_hash, user_hash, installation_hash, environment,
      stored_at, server_time, last_refresh_attempt_at, high_water_mark, last_used_at,
      snapshot, snapshot_size, snapshot_sha256, verification, access_context_expires_at,
      device_status, device_expires_at, device_block, revision, refresh_revision,
      refresh_boot_session, refresh_boot_uptime)
    VALUES (
      ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?6, ?6, ?6, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?17,
      ?18, ?19)
    ON CONFLICT (scope_key) DO UPDATE SET
      stored_at = excluded.stored_at, server_time = excluded.server_time,
      last_refresh_attempt_at = excluded.last_refresh_attempt_at,
      last_refresh_failed_at = NULL, last_refresh_failure_reason = NULL,
      high_water_mark = excluded.high_water_mark, refresh_revision = excluded.refresh_revision,
      refresh_boot_session = excluded.refresh_boot_session,
      refresh_boot_uptime = excluded.refresh_boot_uptime,
      last_used_at = max(scope.last_used_at, excluded.last_used_at),
      snapshot = excluded.snapshot, snapshot_size = excluded.snapshot_size,
      snapshot_sha256 = excluded.snapshot_sha256, verification = excluded.verification,
      access_context_expires_at = excluded.access_context_expires_at,
      device_status = excluded.device_status, device_expires_at = excluded.device_expires_at,
      device_block = excluded.device_block, revision = excluded.revision
    RETURNING id
    """

  static let upsertRefreshFailure = """
    INSERT INTO scope (
      scope_key, sdk_key_hash, user_hash, installation_hash, environment,
      last_refresh_attempt_at, last_refresh_failed_at, last_refresh_failure_reason,
      high_water_mark, last_used_at, revision)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?6, ?6, ?8)
    ON CONFLICT (scope_key) DO UPDATE SET
      last_refresh_attempt_at = excluded.last_refresh_attempt_at,
      last_refresh_failed_at = excluded.last_refresh_failed_at,
      last_refresh_failure_reason = excluded.last_refresh_failure_reason,
      high_water_mark = max(scope.high_water_mark, excluded.high_water_mark),
      last_used_at = max(scope.last_used_at, excluded.last_used_at),
      revision = excluded.revision
    """

  /// The revision for the write in progress: the file-wide counter, moved on by one (see
  /// `Migrations/0002_revision_and_device_block.sql`). Run inside the write's transaction.
  package static let nextRevision = """
    UPDATE revision_counter SET value = value + 1 WHERE id = 1 RETURNING value
    """

  /// Puts the counter row back when another tool deleted it, starting past every revision
  /// still in the file.
  static let restoreRevisionCounter = """
    INSERT OR IGNORE INTO revision_counter (id, value)
    SELECT 1, coalesce(max(revision), 0) FROM scope
    """

  /// Runs ``nextRevision`` on `connection`.
  ///
  /// A missing counter row is restored rather than reported: the file is otherwise sound,
  /// and calling it damaged would move every scope aside for one row another tool deleted.
  static func takeRevision(on connection: SQLiteConnection) throws(SQLiteError) -> Int64 {
    for _ in 0..<2 {
      let revision = try connection.withStatement(nextRevision) {
        statement throws(SQLiteError) -> Int64? in
        try statement.step() ? statement.int64(0) : nil
      }
      if let revision { return revision }
      try connection.withStatement(restoreRevisionCounter) { statement throws(SQLiteError) in
        try statement.run()
      }
    }
    throw SQLiteError(
      operation: "revision", extendedResultCode: SQLITE_ERROR,
      message: "the revision counter row cannot be restored", sql: restoreRevisionCounter)
  }

  package static let deleteEntitlements = "DELETE FROM entitlement WHERE scope_id = ?1"

  package static let insertEntitlement = """
    INSERT INTO entitlement (
      scope_id, key, status, expires_at, grace_expires_at, verified_at, source, product_id,
      will_renew, claim_hint)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
    """

  static let deleteScope = "DELETE FROM scope WHERE scope_key = ?1"

  /// Read-time bookkeeping, persisted lazily; never moves either time backwards. A mark read
  /// under another refresh than the row's now (?4, its refresh revision) is not written: the
  /// refresh since reset the mark (DESIGN §5.1 rule 1), and an older device time would undo
  /// that.
  static let touch = """
    UPDATE scope SET
      high_water_mark = CASE WHEN refresh_revision IS ?4
        THEN max(high_water_mark, ?2) ELSE high_water_mark END,
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

  /// A boot-clock reading stored as its session's identity and milliseconds since that boot;
  /// nil when either column is NULL.
  func bootInstant(session: Int32, sinceBoot: Int32) -> BootInstant? {
    guard let session = string(session), let milliseconds = optionalInt64(sinceBoot) else {
      return nil
    }
    return BootInstant(session: session, sinceBoot: Double(milliseconds) / 1000)
  }

  /// Binds a date as integer milliseconds since the Unix epoch.
  func bind(_ date: Date?, at index: Int32) throws(SQLiteError) {
    try bind(date?.unixMilliseconds, at: index)
  }
}
