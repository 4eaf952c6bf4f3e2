#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A scope row as the read path needs it: what a decision reads and the row's identity.
///
/// The bookkeeping holds the parts a decision reads; the last refresh attempt, the failure's
/// reason and the snapshot's size and digest are left nil here (``ScopeDetails`` holds them,
/// for reads of the whole CustomerInfo): every column costs the read-through, and a text or
/// blob column costs SQLite an allocation and a copy. A scope row is built in one place,
/// ``init(row:)`` from a row or
/// ``init(writtenAt:rowID:revision:requestDate:boot:facts:lastUsedAt:pendingPurchase:imported:)`` from a
/// write, so the two never differ.
struct ScopeRow: Sendable {
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
  /// The file's last use of the scope, for retention; `distantPast` without a row.
  var lastUsedAt: Date
}

// Initializers in an extension, so the memberwise one stays for ``init(row:)`` to build through
// (Architecture, "Initializers of values on the read path").
extension ScopeRow {
  private init(
    version: RowVersion?, bookkeeping: ScopeBookkeeping, facts: SnapshotFacts?,
    refreshRevision: Int64?, lastUsedAt: Date
  ) {
    self.version = version
    self.bookkeeping = bookkeeping
    snapshotFacts = facts ?? Self.noSnapshot
    hasSnapshot = facts != nil
    self.refreshRevision = refreshRevision
    self.lastUsedAt = lastUsedAt
  }

  /// The scope row of a scope the file has no row for.
  static let absent = ScopeRow(
    version: nil, bookkeeping: ScopeBookkeeping(storedAt: nil), facts: nil, refreshRevision: nil,
    lastUsedAt: .distantPast)

  /// The scope row of a scope the file has no row for, which may still have observed a purchase
  /// (one made before its first refresh succeeded).
  static func absent(pendingPurchase: Bool) -> ScopeRow {
    var scopeRow = absent
    scopeRow.bookkeeping.hasPendingPurchase = pendingPurchase
    return scopeRow
  }

  private static let noSnapshot = SnapshotFacts(
    normalized: .unknown(""), accessContextExpiresAt: nil, deviceAccess: nil)

  /// What a read of the row a snapshot write just made would give, built from the write's
  /// values: the write installs it in memory without reading the row back.
  init(
    writtenAt refreshedAt: Date, rowID: Int64, revision: Int64, requestDate: Date,
    boot: BootInstant?, facts: SnapshotFacts, lastUsedAt: Date, pendingPurchase: Bool,
    imported: (savedAt: Date, origin: SnapshotOrigin)? = nil
  ) {
    var bookkeeping = ScopeBookkeeping(
      storedAt: imported?.savedAt ?? refreshedAt, serverTime: requestDate,
      deviceHighWaterMark: refreshedAt, refreshBootInstant: boot,
      hasPendingPurchase: pendingPurchase)
    if let imported { bookkeeping.origin = imported.origin }
    self.init(
      version: RowVersion(
        rowID: rowID, revision: revision, highWaterMarkMilliseconds: refreshedAt.unixMilliseconds,
        hasPendingPurchase: pendingPurchase),
      bookkeeping: bookkeeping, facts: facts, refreshRevision: revision, lastUsedAt: lastUsedAt)
  }

  /// The ``ScopeRowColumn``s of a row.
  init(row: SQLiteStatement) {
    let storedAt = row.date(ScopeRowColumn.storedAt)
    let highWaterMark = row.int64(ScopeRowColumn.highWaterMark)
    let pendingPurchase = row.int64(ScopeRowColumn.pendingPurchase) != 0
    let deviceStatus: OpenEnum<DeviceAccessStatus>? =
      storedAt == nil ? nil : row.openEnum(ScopeRowColumn.deviceStatus)
    self.init(
      version: RowVersion(
        rowID: row.int64(ScopeRowColumn.rowID), revision: row.int64(ScopeRowColumn.revision),
        highWaterMarkMilliseconds: highWaterMark, hasPendingPurchase: pendingPurchase),
      bookkeeping: ScopeBookkeeping(
        storedAt: storedAt, serverTime: row.date(ScopeRowColumn.serverTime),
        lastRefreshFailedAt: row.date(ScopeRowColumn.lastRefreshFailedAt),
        deviceHighWaterMark: Date(unixMilliseconds: highWaterMark),
        refreshBootInstant: row.bootInstant(
          session: ScopeRowColumn.refreshBootSession, sinceBoot: ScopeRowColumn.refreshBootUptime),
        hasPendingPurchase: pendingPurchase,
        origin: Self.origin(row)),
      snapshotFacts: storedAt == nil
        ? Self.noSnapshot
        : SnapshotFacts(
          normalized: row.openEnum(ScopeRowColumn.verification) ?? .unknown(""),
          accessContextExpiresAt: row.date(ScopeRowColumn.accessContextExpiresAt),
          deviceAccess: deviceStatus.map {
            DeviceAccessInfo(status: $0, expiresAt: row.date(ScopeRowColumn.deviceExpiresAt))
          }),
      hasSnapshot: storedAt != nil,
      undecodedDeviceBlock: deviceStatus == nil || deviceStatus == .known(.active)
        ? nil : row.string(ScopeRowColumn.deviceBlock),
      refreshRevision: row.optionalInt64(ScopeRowColumn.refreshRevision),
      lastUsedAt: Date(unixMilliseconds: row.int64(ScopeRowColumn.lastUsedAt)))
  }

  /// The row's ``SnapshotOrigin``: an import's label and time, or a refresh (NULL for both).
  private static func origin(_ row: SQLiteStatement) -> SnapshotOrigin {
    guard let importedAt = row.date(ScopeRowColumn.importedAt) else { return .refresh }
    return .imported(label: row.string(ScopeRowColumn.importLabel) ?? "", importedAt: importedAt)
  }

  /// The ``ScopeRowColumn``s of a row with its device block decoded.
  init(decoding row: SQLiteStatement) throws(SnapshotError) {
    self.init(row: row)
    try decodeDeviceBlock()
  }

  /// The scope row with the bookkeeping a decision leaves out: the ``BookkeepingColumn``s.
  init(fullRow row: SQLiteStatement) {
    self.init(row: row)
    bookkeeping.lastRefreshAttemptAt = row.date(BookkeepingColumn.lastRefreshAttemptAt)
    bookkeeping.lastRefreshFailureReason = row.string(BookkeepingColumn.lastRefreshFailureReason)
    bookkeeping.snapshotSize = row.optionalInt64(BookkeepingColumn.snapshotSize).map { Int($0) }
    bookkeeping.snapshotSHA256 = row.bytes(BookkeepingColumn.snapshotSHA256)
  }

  /// The snapshot-wide facts; nil when the row holds no snapshot.
  var facts: SnapshotFacts? { hasSnapshot ? snapshotFacts : nil }

  /// Decodes a blocked installation's device block into the snapshot facts; does nothing
  /// for any other scope row. On failure the scope row is unchanged.
  mutating func decodeDeviceBlock() throws(SnapshotError) {
    guard let block = undecodedDeviceBlock, let device = snapshotFacts.deviceAccess else {
      return
    }
    snapshotFacts.deviceAccess = try DeviceBlockColumn.decode(block, into: device)
    undecodedDeviceBlock = nil
  }
}

/// What a read of the whole CustomerInfo shows beyond what a decision reads: the stored body,
/// decoded once per read from the file or taken from the write that stored it, and the
/// bookkeeping the scope row leaves out. Memory holds it with the scope row, for the same
/// version of the row.
struct ScopeDetails {
  /// The stored snapshot with its signed material, or why the stored bytes do not decode (with
  /// trust roots, why they do not check); nil when the row holds no snapshot.
  var snapshot: Result<CustomerInfoSnapshot, SnapshotError>?
  var lastRefreshAttemptAt: Date?
  var lastRefreshFailureReason: String?
  var snapshotSize: Int?
  var snapshotSHA256: [UInt8]?

  /// The details of the row a snapshot write just made, from the write's values.
  init(written snapshot: CustomerInfoSnapshot, at refreshedAt: Date, digest: [UInt8]) {
    self.snapshot = .success(snapshot)
    lastRefreshAttemptAt = refreshedAt
    snapshotSize = snapshot.jsonData.count
    snapshotSHA256 = digest
  }

  /// The ``WholeReadColumn``s of a row, but the body, which the caller decodes.
  init(row: SQLiteStatement) {
    lastRefreshAttemptAt = row.date(WholeReadColumn.lastRefreshAttemptAt)
    lastRefreshFailureReason = row.string(WholeReadColumn.lastRefreshFailureReason)
    snapshotSize = row.optionalInt64(WholeReadColumn.size).map { Int(truncatingIfNeeded: $0) }
    snapshotSHA256 = row.bytes(WholeReadColumn.sha256)
  }

  /// `bookkeeping` (a scope row's) with the parts only these details hold.
  func completing(_ bookkeeping: ScopeBookkeeping) -> ScopeBookkeeping {
    var whole = bookkeeping
    whole.lastRefreshAttemptAt = lastRefreshAttemptAt
    whole.lastRefreshFailureReason = lastRefreshFailureReason
    whole.snapshotSize = snapshotSize
    whole.snapshotSHA256 = snapshotSHA256
    return whole
  }
}

/// Which version of a scope row a read saw: the row, the write that last changed it (its
/// revision moves with every write), the high-water mark, which another connection's reads
/// raise without a write, and whether a purchase is pending, which the queue changes without
/// touching the row. Equal versions hold the same snapshot and bookkeeping.
struct RowVersion: Sendable, Equatable {
  var rowID: Int64
  var revision: Int64
  var highWaterMarkMilliseconds: Int64
  var hasPendingPurchase: Bool

  init(rowID: Int64, revision: Int64, highWaterMarkMilliseconds: Int64, hasPendingPurchase: Bool) {
    self.rowID = rowID
    self.revision = revision
    self.highWaterMarkMilliseconds = highWaterMarkMilliseconds
    self.hasPendingPurchase = hasPendingPurchase
  }

  /// The version of the row a read returned, without mapping the rest of it.
  init(row: SQLiteStatement) {
    self.init(
      rowID: row.int64(ScopeRowColumn.rowID), revision: row.int64(ScopeRowColumn.revision),
      highWaterMarkMilliseconds: row.int64(ScopeRowColumn.highWaterMark),
      hasPendingPurchase: row.int64(ScopeRowColumn.pendingPurchase) != 0)
  }
}

extension EntitlementFacts {
  /// The ``DecisionColumn``s of a row.
  init(row: SQLiteStatement) {
    let claimHint: OpenEnum<ClaimHint>? = row.openEnum(DecisionColumn.claimHint)
    self.init(
      status: row.openEnum(DecisionColumn.status), expiresAt: row.date(DecisionColumn.expiresAt),
      gracePeriodExpiresAt: row.date(DecisionColumn.graceExpiresAt),
      verifiedAt: row.date(DecisionColumn.verifiedAt), source: row.openEnum(DecisionColumn.source),
      claimHint: claimHint?.knownValue)
  }

  /// The key and every fact of a full read's row; nil when the LEFT JOIN found no row.
  static func whole(row: SQLiteStatement) -> (key: String, facts: EntitlementFacts)? {
    guard let key = row.string(EntitlementDetailColumn.key) else { return nil }
    var facts = EntitlementFacts(row: row)
    facts.productId = row.string(EntitlementDetailColumn.productID)
    facts.willRenew = row.optionalInt64(EntitlementDetailColumn.willRenew).map { $0 != 0 }
    return (key, facts)
  }
}
