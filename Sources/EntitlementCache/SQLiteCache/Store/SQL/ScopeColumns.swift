import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

// The scope and entitlement tables as the store reads and writes them: every column is named
// once here, and every statement (ScopeSQL), bind and row reader (ScopeRow, ScopeDetails,
// WholeScopeRead) is built from these names.
//
// `Migrations/` stays the source of the schema; this is the store's one view of it. A result
// column's index in the statements that return it is computed: each group of columns starts
// where the group before it in those statements ends, and a case's raw value is its place in
// its group. A parameter's raw value is its bind index. The statements are generated from the
// cases in order, so adding a column is one case and its name; `ScopeColumnsTests` prepares
// every statement and checks its column count.

/// A group of result columns, which statements list in case order.
protocol ResultColumn: CaseIterable, RawRepresentable where RawValue == Int32 {
  /// The index of the group's first column in the statements that return it.
  static var first: Int32 { get }
  /// The column's expression in the SELECT list.
  var expression: String { get }
}

extension ResultColumn {
  /// The column's index in the statements that return it.
  @inline(__always) var index: Int32 { Self.first + rawValue }

  /// Where the group after this one starts.
  static var end: Int32 { first + Int32(allCases.count) }

  /// The SELECT list of every case, in index order.
  static var selectList: String {
    allCases.sorted { $0.rawValue < $1.rawValue }.map(\.expression).joined(separator: ", ")
  }
}

/// What every scope read returns first: what a decision reads and the row's identity. Only
/// these, because every column costs the read-through and a text column costs SQLite an
/// allocation and a copy (see ``ScopeRow``).
enum ScopeRowColumn: Int32, CaseIterable, ResultColumn {
  case storedAt, serverTime, lastRefreshFailedAt, highWaterMark, revision, verification
  case accessContextExpiresAt, deviceStatus, deviceExpiresAt, deviceBlock, rowID
  case refreshRevision, refreshBootSession, refreshBootUptime
  /// Read so a resident knows the file's last use: without it, releasing a cache that only
  /// read would write the same value back.
  case lastUsedAt
  /// How many entries this scope observed that the purchase queue has not posted yet
  /// (<doc:PurchaseQueue>), kept on the row by the queue's triggers.
  case pendingPurchase
  /// An import's label and device time (``SnapshotOrigin``); NULL for a refresh's snapshot,
  /// so a text column that costs nothing on the rows nearly every scope has.
  case importLabel, importedAt

  static let first: Int32 = 0

  var expression: String {
    switch self {
    case .storedAt: "s.stored_at"
    case .serverTime: "s.server_time"
    case .lastRefreshFailedAt: "s.last_refresh_failed_at"
    case .highWaterMark: "s.high_water_mark"
    case .revision: "s.revision"
    case .verification: "s.verification"
    case .accessContextExpiresAt: "s.access_context_expires_at"
    case .deviceStatus: "s.device_status"
    case .deviceExpiresAt: "s.device_expires_at"
    case .deviceBlock: "s.device_block"
    case .rowID: "s.id"
    case .refreshRevision: "s.refresh_revision"
    case .refreshBootSession: "s.refresh_boot_session"
    case .refreshBootUptime: "s.refresh_boot_uptime"
    case .lastUsedAt: "s.last_used_at"
    case .pendingPurchase: "s.unsent_purchases"
    case .importLabel: "s.import_label"
    case .importedAt: "s.imported_at"
    }
  }
}

/// An entitlement row's columns a decision reads, right after the scope row. A row the LEFT JOIN
/// did not find reads as all NULL, which maps to empty facts: exactly what a key the snapshot
/// does not mention has.
enum DecisionColumn: Int32, ResultColumn {
  case status, expiresAt, graceExpiresAt, verifiedAt, source, claimHint

  static let first = ScopeRowColumn.end

  var expression: String {
    switch self {
    case .status: "e.status"
    case .expiresAt: "e.expires_at"
    case .graceExpiresAt: "e.grace_expires_at"
    case .verifiedAt: "e.verified_at"
    case .source: "e.source"
    case .claimHint: "e.claim_hint"
    }
  }
}

/// What only a whole entitlement shows, after the decision's columns: the full read's.
enum EntitlementDetailColumn: Int32, ResultColumn {
  case key, productID, willRenew

  static let first = DecisionColumn.end

  var expression: String {
    switch self {
    case .key: "e.key"
    case .productID: "e.product_id"
    case .willRenew: "e.will_renew"
    }
  }
}

/// The bookkeeping a decision leaves out and the scope's identity, after the scope row: the
/// support tool's listing.
enum BookkeepingColumn: Int32, ResultColumn {
  case lastRefreshAttemptAt, lastRefreshFailureReason, snapshotSize, snapshotSHA256
  case scopeKey, environment, userHash

  static let first = ScopeRowColumn.end

  var expression: String {
    switch self {
    case .lastRefreshAttemptAt: "s.last_refresh_attempt_at"
    case .lastRefreshFailureReason: "s.last_refresh_failure_reason"
    case .snapshotSize: "s.snapshot_size"
    case .snapshotSHA256: "s.snapshot_sha256"
    case .scopeKey: "s.scope_key"
    case .environment: "s.environment"
    case .userHash: "s.user_hash"
    }
  }
}

/// What a read of the whole scope needs of the scope row besides the decision's columns, after them: the body, the
/// bookkeeping a decision leaves out, and the signed material after these
/// (``ScopeSQL/wholeScopeRead``). A cache with trust roots reads this on every read from disk,
/// to check the body and its signed material against each other and the rows.
enum WholeReadColumn: Int32, ResultColumn {
  case body, sha256, size, lastRefreshAttemptAt, lastRefreshFailureReason

  static let first = ScopeRowColumn.end

  var expression: String {
    switch self {
    case .body: "s.snapshot"
    case .sha256: "s.snapshot_sha256"
    case .size: "s.snapshot_size"
    case .lastRefreshAttemptAt: "s.last_refresh_attempt_at"
    case .lastRefreshFailureReason: "s.last_refresh_failure_reason"
    }
  }
}

/// The signed material kept with a snapshot, and the writer's verdict on it, after the
/// ``WholeReadColumn``s.
enum SignedMaterialColumn: Int32, ResultColumn {
  case signature, intermediate, nonce, scopeHash, requestNonce, checkedAt, verificationFailure

  static let first = WholeReadColumn.end

  var expression: String {
    switch self {
    case .signature: "s.response_signature"
    case .intermediate: "s.response_intermediate"
    case .nonce: "s.response_nonce"
    case .scopeHash: "s.response_scope_hash"
    case .requestNonce: "s.request_nonce"
    case .checkedAt: "s.trust_checked_at"
    case .verificationFailure: "s.verification_failure"
    }
  }
}

extension StoredTrust {
  /// The ``SignedMaterialColumn``s of a row, with the verdict the writer recorded in
  /// `verification` (the row's verification column).
  init(row: SQLiteStatement, verification: OpenEnum<VerificationStatus>?) {
    var signature: ResponseSignature?
    if let bytes = row.bytes(SignedMaterialColumn.signature) {
      signature = ResponseSignature(
        signature: bytes, intermediate: row.bytes(SignedMaterialColumn.intermediate) ?? [],
        nonce: row.bytes(SignedMaterialColumn.nonce) ?? [],
        scopeHash: row.bytes(SignedMaterialColumn.scopeHash) ?? [])
    }
    let checkedAt = row.date(SignedMaterialColumn.checkedAt)
    self.init(
      signature: signature, requestNonce: row.bytes(SignedMaterialColumn.requestNonce),
      checkedAt: checkedAt,
      writerVerdict: TrustVerdict(
        recordedAs: verification?.rawValue,
        failure: row.string(SignedMaterialColumn.verificationFailure), checkedAt: checkedAt))
  }
}

/// What a conditional store reads of the stored snapshot, inside the write it decides
/// (``ScopeSQL/storedAnswerQuery``): its `requestDate`, its verification as recorded, what a
/// writer with trust roots recorded, whether it was imported, and the row's revision.
enum StoredAnswerColumn: Int32, ResultColumn {
  case hasSnapshot, requestDate, verification, trustCheckedAt, verificationFailure, importedAt
  case revision

  static let first: Int32 = 0

  var expression: String {
    switch self {
    case .hasSnapshot: "s.snapshot IS NOT NULL"
    case .requestDate: "s.server_time"
    case .verification: "s.verification"
    case .trustCheckedAt: "s.trust_checked_at"
    case .verificationFailure: "s.verification_failure"
    case .importedAt: "s.imported_at"
    case .revision: "s.revision"
    }
  }
}

/// What the snapshot upsert returns (``ScopeSQL/upsertSnapshot``): the row's ID and its unsent
/// purchases, so the resident the write installs says whether one is pending without a read
/// of its own.
enum UpsertReturnColumn: Int32, ResultColumn {
  case rowID, unsentPurchases

  static let first: Int32 = 0

  var expression: String {
    switch self {
    case .rowID: "id"
    case .unsentPurchases: "unsent_purchases"
    }
  }
}

/// The recorded verdicts the support tool's health check counts (``CacheInspector``), grouped
/// by the columns a verdict is recorded in.
enum RecordedVerdictColumn: Int32, ResultColumn {
  case isChecked, verification, verificationFailure, count

  static let first: Int32 = 0

  var expression: String {
    switch self {
    case .isChecked: "s.trust_checked_at IS NOT NULL"
    case .verification: "s.verification"
    case .verificationFailure: "s.verification_failure"
    case .count: "count(*)"
    }
  }
}

extension StoredAnswer {
  /// The ``StoredAnswerColumn``s of a row; nil when the row holds no snapshot (a failed
  /// refresh, or read marks, recorded alone).
  init?(row: SQLiteStatement) {
    guard row.int64(StoredAnswerColumn.hasSnapshot) != 0,
      let requestDate = row.date(StoredAnswerColumn.requestDate)
    else { return nil }
    let verification = row.string(StoredAnswerColumn.verification)
    self.init(
      requestDate: requestDate, claimed: OpenEnum(rawValue: verification ?? ""),
      writerVerdict: TrustVerdict(
        recordedAs: verification, failure: row.string(StoredAnswerColumn.verificationFailure),
        checkedAt: row.date(StoredAnswerColumn.trustCheckedAt)),
      isImported: row.date(StoredAnswerColumn.importedAt) != nil)
  }
}

/// The last column of ``ScopeSQL/scopeSummaries``: how many keys the snapshot entitles.
enum SummaryColumn: Int32, ResultColumn {
  case entitlementCount

  static let first = BookkeepingColumn.end

  var expression: String {
    "(SELECT count(*) FROM entitlement e WHERE e.scope_id = s.id AND e.status IS NOT NULL)"
  }
}

/// A statement parameter; its raw value is the bind index. `package`, with the write
/// statements' parameters, so the benchmark's raw-C baseline binds exactly what the store binds.
package protocol StatementParameter {
  var rawValue: Int32 { get }
}

/// The scope's identity, bound the same way by every statement that creates a row.
package enum ScopeIdentityParameter: Int32, CaseIterable, StatementParameter {
  case scopeKey = 1, sdkKeyHash, userHash, installationHash, environment

  /// The identity columns, in parameter order: a write never changes them.
  package static let columns = [
    "scope_key", "sdk_key_hash", "user_hash", "installation_hash", "environment",
  ]
}

/// The snapshot upsert's parameters, after the identity's.
package enum SnapshotParameter: Int32, CaseIterable, StatementParameter {
  /// The refresh's device time: stored_at and the refresh attempt. For an import, the save's.
  case refreshedAt = 6
  case requestDate, snapshot, snapshotSize, snapshotSHA256, verification
  case accessContextExpiresAt, deviceStatus, deviceExpiresAt, deviceBlock
  /// The write's revision, which is also the refresh's (`refresh_revision`).
  case revision
  case bootSession, bootUptime
  /// The signed material (<doc:TrustedSnapshots>), NULL for an unsigned snapshot.
  case responseSignature, responseIntermediate, responseNonce, responseScopeHash, requestNonce
  /// The writer's verdict with trust roots: the trusted server time it checked expiry against
  /// and why it failed; both NULL without trust roots, the failure NULL when verified.
  case trustCheckedAt, verificationFailure
  /// The write's device time: the reset high-water mark and a use (the refresh's own time;
  /// an import's now).
  case writtenAt
  /// An import's label and device time; NULL for a refresh, which clears them.
  case importLabel, importedAt

  /// Every column the upsert sets, with the parameter it takes.
  package static let assignments: [(column: String, value: SnapshotParameter)] = [
    ("stored_at", .refreshedAt), ("server_time", .requestDate),
    ("last_refresh_attempt_at", .refreshedAt), ("high_water_mark", .writtenAt),
    ("last_used_at", .writtenAt), ("snapshot", .snapshot), ("snapshot_size", .snapshotSize),
    ("snapshot_sha256", .snapshotSHA256), ("verification", .verification),
    ("access_context_expires_at", .accessContextExpiresAt), ("device_status", .deviceStatus),
    ("device_expires_at", .deviceExpiresAt), ("device_block", .deviceBlock),
    ("revision", .revision), ("refresh_revision", .revision),
    ("refresh_boot_session", .bootSession), ("refresh_boot_uptime", .bootUptime),
    ("response_signature", .responseSignature), ("response_intermediate", .responseIntermediate),
    ("response_nonce", .responseNonce), ("response_scope_hash", .responseScopeHash),
    ("request_nonce", .requestNonce), ("trust_checked_at", .trustCheckedAt),
    ("verification_failure", .verificationFailure), ("import_label", .importLabel),
    ("imported_at", .importedAt),
  ]
}

/// The failed-refresh upsert's parameters, after the identity's.
enum RefreshFailureParameter: Int32, CaseIterable, StatementParameter {
  /// The attempt's device time: the attempt, the failure and a use.
  case failedAt = 6
  case reason, revision
  /// The device time a read would decide with at the attempt, which the mark is raised to
  /// (``ScopeSQL/attemptMark(for:at:boot:on:)``).
  case markAt

  static let assignments: [(column: String, value: RefreshFailureParameter)] = [
    ("last_refresh_attempt_at", .failedAt), ("last_refresh_failed_at", .failedAt),
    ("last_refresh_failure_reason", .reason), ("high_water_mark", .markAt),
    ("last_used_at", .failedAt), ("revision", .revision),
  ]
}

/// One normalized entitlement row's parameters.
package enum EntitlementParameter: Int32, CaseIterable, StatementParameter {
  case scopeID = 1, key, status, expiresAt, graceExpiresAt, verifiedAt, source, productID
  case willRenew, claimHint

  package var column: String {
    switch self {
    case .scopeID: "scope_id"
    case .key: "key"
    case .status: "status"
    case .expiresAt: "expires_at"
    case .graceExpiresAt: "grace_expires_at"
    case .verifiedAt: "verified_at"
    case .source: "source"
    case .productID: "product_id"
    case .willRenew: "will_renew"
    case .claimHint: "claim_hint"
    }
  }
}

/// Persisting read marks (see ``ReadMarks``).
enum ReadMarksParameter: Int32, CaseIterable, StatementParameter {
  case scopeKey = 1, highWaterMark, lastUsedAt, refreshRevision
}
