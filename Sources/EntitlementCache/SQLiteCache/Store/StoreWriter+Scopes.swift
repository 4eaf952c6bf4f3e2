import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What writing a snapshot's rows gave back: what a read of them now would find, without the
/// read.
struct WrittenSnapshot {
  /// The scope row's ID.
  var rowID: Int64
  /// The write's revision, which is also the refresh's.
  var revision: Int64
  /// Whether the scope observed a purchase the queue has not posted yet.
  var pendingPurchase: Bool
}

extension StoreWriter {
  /// The stored snapshot's claims (see ``StoredAnswer``) and the revision of the row they were
  /// read at; nil when the scope has no snapshot. Read inside the write they decide, so no
  /// other write lands between the answer and the write.
  func storedAnswer(
    for scope: CacheScope
  ) throws(SQLiteError) -> (answer: StoredAnswer, revision: Int64)? {
    try connection.withStatement(ScopeSQL.storedAnswerQuery) { statement throws(SQLiteError) in
      try statement.bind(scope.key.bytes, at: 1)
      guard try statement.step(), let answer = StoredAnswer(row: statement) else { return nil }
      return (answer, statement.int64(StoredAnswerColumn.revision))
    }
  }

  /// The scope row as the file holds it, for a write that needs the stored bookkeeping; nil
  /// when the scope has no row.
  func scopeRow(for scope: CacheScope) throws(SQLiteError) -> ScopeRow? {
    try connection.withStatement(ScopeSQL.scopeRowRead) { statement throws(SQLiteError) in
      try statement.bind(scope.key.bytes, at: 1)
      return try statement.step() ? ScopeRow(row: statement) : nil
    }
  }

  /// The scope row of the stored `key` and the facts of every key its snapshot mentions, read
  /// inside the write (retention judges each scope as a read would).
  func scope(
    storedKey key: [UInt8]
  ) throws(SQLiteError) -> (scopeRow: ScopeRow?, entitlements: [String: EntitlementFacts]) {
    try ScopeSQL.readScope(key, on: connection)
  }

  /// Writes `rows` for `scope`: the scope row and its entitlement rows, replacing the ones the
  /// scope held. Every snapshot write, a refresh's and an import's, goes through here.
  func writeSnapshot(
    _ rows: SnapshotRows, for scope: CacheScope
  ) throws(SQLiteError) -> WrittenSnapshot {
    let now = rows.writtenAt
    let revision = try takeRevision()
    let (rowID, pending) = try connection.withStatement(ScopeSQL.upsertSnapshot) {
      statement throws(SQLiteError) in
      try ScopeSQL.bindScope(scope, to: statement)
      // A refresh's device time is also the reset high-water mark (<doc:TimeModel>); an
      // import is stored at its save and written now. The server's requestDate goes only
      // into server_time.
      try statement.bind(rows.imported?.savedAt ?? now, to: SnapshotParameter.refreshedAt)
      try statement.bind(now, to: SnapshotParameter.writtenAt)
      try statement.bind(
        rows.snapshot.customerInfo.requestDate, to: SnapshotParameter.requestDate)
      try statement.bind(rows.snapshot.jsonData, to: SnapshotParameter.snapshot)
      try statement.bind(rows.snapshot.jsonData.count, to: SnapshotParameter.snapshotSize)
      try statement.bind(rows.digest, to: SnapshotParameter.snapshotSHA256)
      try statement.bind(rows.facts.verification.rawValue, to: SnapshotParameter.verification)
      try ScopeSQL.bindTrust(rows.trust, to: statement)
      try statement.bind(
        rows.facts.accessContextExpiresAt, to: SnapshotParameter.accessContextExpiresAt)
      try statement.bind(
        rows.facts.deviceAccess?.status.rawValue, to: SnapshotParameter.deviceStatus)
      try statement.bind(
        rows.facts.deviceAccess?.expiresAt, to: SnapshotParameter.deviceExpiresAt)
      try statement.bind(rows.deviceBlock, to: SnapshotParameter.deviceBlock)
      try statement.bind(revision, to: SnapshotParameter.revision)
      try statement.bind(rows.boot?.session, to: SnapshotParameter.bootSession)
      try statement.bind(rows.boot?.milliseconds, to: SnapshotParameter.bootUptime)
      try statement.bind(rows.imported?.origin.importLabel, to: SnapshotParameter.importLabel)
      try statement.bind(rows.imported?.origin.importedAt, to: SnapshotParameter.importedAt)
      guard try statement.step() else {
        throw SQLiteError(
          operation: "upsert", extendedResultCode: SQLITE_ERROR, message: "no row returned",
          sql: ScopeSQL.upsertSnapshot)
      }
      return (
        statement.int64(UpsertReturnColumn.rowID),
        statement.int64(UpsertReturnColumn.unsentPurchases) != 0
      )
    }
    try replaceEntitlements(of: rowID, with: rows.entitlements)
    return WrittenSnapshot(rowID: rowID, revision: revision, pendingPurchase: pending)
  }

  /// Puts `entitlements` in place of the entitlement rows of the scope row `rowID`.
  private func replaceEntitlements(
    of rowID: Int64, with entitlements: [String: EntitlementFacts]
  ) throws(SQLiteError) {
    try connection.withStatement(ScopeSQL.deleteEntitlements) { statement throws(SQLiteError) in
      try statement.bind(rowID, at: 1)
      try statement.run()
    }
    try connection.withStatement(ScopeSQL.insertEntitlement) { statement throws(SQLiteError) in
      for (key, entitlement) in entitlements {
        // Every parameter in turn, through a switch without default: a column added to
        // EntitlementParameter is bound here, or this does not compile.
        for parameter in EntitlementParameter.allCases {
          switch parameter {
          case .scopeID: try statement.bind(rowID, to: parameter)
          case .key: try statement.bind(key, to: parameter)
          case .status: try statement.bind(entitlement.status?.rawValue, to: parameter)
          case .expiresAt: try statement.bind(entitlement.expiresAt, to: parameter)
          case .graceExpiresAt: try statement.bind(entitlement.gracePeriodExpiresAt, to: parameter)
          case .verifiedAt: try statement.bind(entitlement.verifiedAt, to: parameter)
          case .source: try statement.bind(entitlement.source?.rawValue, to: parameter)
          case .productID: try statement.bind(entitlement.productId, to: parameter)
          case .willRenew:
            try statement.bind(entitlement.willRenew.map { $0 ? 1 : 0 }, to: parameter)
          case .claimHint: try statement.bind(entitlement.claimHint?.rawValue, to: parameter)
          }
        }
        try statement.run()
        statement.reset()
      }
    }
  }

  /// Records a failed refresh attempt of `scope` at `now`, creating the scope's row when it
  /// has none; the high-water mark rises to the device time a read at that moment decides
  /// with.
  func recordRefreshFailure(
    for scope: CacheScope, at now: Date, boot: BootInstant?, reason: String?
  ) throws(SQLiteError) {
    let revision = try takeRevision()
    let mark = try attemptMark(for: scope, at: now, boot: boot)
    try connection.withStatement(ScopeSQL.upsertRefreshFailure) { statement throws(SQLiteError) in
      try ScopeSQL.bindScope(scope, to: statement)
      try statement.bind(now, to: RefreshFailureParameter.failedAt)
      try statement.bind(mark, to: RefreshFailureParameter.markAt)
      try statement.bind(reason, to: RefreshFailureParameter.reason)
      try statement.bind(revision, to: RefreshFailureParameter.revision)
      try statement.run()
    }
  }

  /// Deletes the stored scope `key` and its entitlement rows; its purchases stay. Returns
  /// whether a row was deleted.
  @discardableResult
  func deleteScope(storedKey key: [UInt8]) throws(SQLiteError) -> Bool {
    try connection.withStatement(ScopeSQL.deleteScope) { statement throws(SQLiteError) in
      try statement.bind(key, at: 1)
      try statement.run()
    }
    return connection.changes > 0
  }

  /// Writes what reads learned (see ``ScopeSQL/persistReadMarks``); never moves either time
  /// backwards.
  func persist(_ marks: [ScopeKey: ReadMarks]) throws(SQLiteError) {
    guard !marks.isEmpty else { return }
    try connection.withStatement(ScopeSQL.persistReadMarks) { statement throws(SQLiteError) in
      for (key, scopeMarks) in marks {
        try statement.bind(key.bytes, to: ReadMarksParameter.scopeKey)
        try statement.bind(scopeMarks.highWaterMark, to: ReadMarksParameter.highWaterMark)
        try statement.bind(scopeMarks.lastUsedAt, to: ReadMarksParameter.lastUsedAt)
        try statement.bind(scopeMarks.refreshRevision, to: ReadMarksParameter.refreshRevision)
        try statement.run()
        statement.reset()
      }
    }
  }

  /// The revision for the write in progress (``ScopeSQL/nextRevision``).
  ///
  /// A missing counter row is restored rather than reported: the file is otherwise sound,
  /// and calling it damaged would move every scope aside for one row another tool deleted.
  func takeRevision() throws(SQLiteError) -> Int64 {
    for _ in 0..<2 {
      let revision = try connection.withStatement(ScopeSQL.nextRevision) {
        statement throws(SQLiteError) -> Int64? in
        try statement.step() ? statement.int64(0) : nil
      }
      if let revision { return revision }
      try connection.withStatement(ScopeSQL.restoreRevisionCounter) {
        statement throws(SQLiteError) in
        try statement.run()
      }
    }
    throw SQLiteError(
      operation: "revision", extendedResultCode: SQLITE_ERROR,
      message: "the revision counter holds no integer below 2^63 - 1, or its row cannot be "
        + "restored; nothing was written",
      sql: ScopeSQL.nextRevision)
  }

  /// The device time a refresh attempt at `now` raises the scope's mark to: the one a read at
  /// that moment decides with (``EntitlementEvaluator/effectiveDeviceTime(now:bookkeeping:bootInstant:policy:)``,
  /// as the in-memory cache asks it), from the bookkeeping the file holds inside the write.
  private func attemptMark(
    for scope: CacheScope, at now: Date, boot: BootInstant?
  ) throws(SQLiteError) -> Date {
    // Without a boot clock the answer is `now` or the mark, which the upsert keeps anyway.
    guard boot != nil else { return now }
    return EntitlementEvaluator.effectiveDeviceTime(
      now: now, bookkeeping: try scopeRow(for: scope)?.bookkeeping, bootInstant: boot
    ).truncatedToMilliseconds
  }
}
