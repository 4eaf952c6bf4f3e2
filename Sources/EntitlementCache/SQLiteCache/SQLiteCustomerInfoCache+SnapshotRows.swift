#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What one write of a snapshot puts in the file: the scope row and the entitlement rows. A
/// refresh and an import write the same rows and differ only in the times and the origin.
struct SnapshotRows {
  var snapshot: CustomerInfoSnapshot
  var digest: [UInt8]
  var entitlements: [String: EntitlementFacts]
  var facts: SnapshotFacts
  var trust: StoredTrust
  var deviceBlock: String?
  /// The write's device time: the reset high-water mark and a use; a refresh's is also the
  /// time it is stored at.
  var writtenAt: Date
  var boot: BootInstant?
  /// An import's save time and origin; nil for a refresh.
  var imported: (savedAt: Date, origin: SnapshotOrigin)? = nil
}

extension SQLiteCustomerInfoCache {
  /// Refuses a snapshot over ``CacheConfiguration/snapshotSizeLimit`` before anything is
  /// hashed, verified or written.
  func refuseOversized(_ snapshot: CustomerInfoSnapshot) throws(CacheError) {
    let limit = configuration.snapshotSizeLimit
    guard snapshot.jsonData.count <= limit else {
      throw .invalidSnapshot(
        SnapshotError(path: "", problem: .tooLarge(size: snapshot.jsonData.count, limit: limit)))
    }
  }

  /// Writes `rows` for `scope` inside the caller's write transaction, and returns what installs
  /// the scope in memory as a read of the rows would: every snapshot write goes through here.
  func writeSnapshotRows(
    _ rows: SnapshotRows, for scope: CacheScope, on connection: SQLiteConnection,
    marks: [ScopeKey: ReadMarks]
  ) throws(SQLiteError) -> (ScopeReader) -> Void {
    let now = rows.writtenAt
    let requestDate = rows.snapshot.customerInfo.requestDate
    let revision = try ScopeSQL.takeRevision(on: connection)
    let (rowID, pending) = try connection.withStatement(ScopeSQL.upsertSnapshot) {
      statement throws(SQLiteError) in
      try ScopeSQL.bindScope(scope, to: statement)
      // A refresh's device time is also the reset high-water mark (<doc:TimeModel>); an
      // import is stored at its save and written now. The server's requestDate goes only
      // into server_time.
      try statement.bind(rows.imported?.savedAt ?? now, to: SnapshotParameter.refreshedAt)
      try statement.bind(now, to: SnapshotParameter.writtenAt)
      try statement.bind(requestDate, to: SnapshotParameter.requestDate)
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
          operation: "upsert", extendedResultCode: 1, message: "no row returned",
          sql: ScopeSQL.upsertSnapshot)
      }
      return (statement.int64(0), statement.int64(1) != 0)
    }
    try connection.withStatement(ScopeSQL.deleteEntitlements) { statement throws(SQLiteError) in
      try statement.bind(rowID, at: 1)
      try statement.run()
    }
    try connection.withStatement(ScopeSQL.insertEntitlement) { statement throws(SQLiteError) in
      for (key, entitlement) in rows.entitlements {
        try statement.bind(rowID, to: EntitlementParameter.scopeID)
        try statement.bind(key, to: EntitlementParameter.key)
        try statement.bind(entitlement.status?.rawValue, to: EntitlementParameter.status)
        try statement.bind(entitlement.expiresAt, to: EntitlementParameter.expiresAt)
        try statement.bind(
          entitlement.gracePeriodExpiresAt, to: EntitlementParameter.graceExpiresAt)
        try statement.bind(entitlement.verifiedAt, to: EntitlementParameter.verifiedAt)
        try statement.bind(entitlement.source?.rawValue, to: EntitlementParameter.source)
        try statement.bind(entitlement.productId, to: EntitlementParameter.productID)
        try statement.bind(
          entitlement.willRenew.map { $0 ? 1 : 0 }, to: EntitlementParameter.willRenew)
        try statement.bind(entitlement.claimHint?.rawValue, to: EntitlementParameter.claimHint)
        try statement.run()
        statement.reset()
      }
    }
    let previousLastUse = marks[scope.key]?.lastUsedAt ?? now
    // What a read of the row now would install: see ScopeRow.
    let scopeRow = ScopeRow(
      writtenAt: now, rowID: rowID, revision: revision, requestDate: requestDate,
      boot: rows.boot, facts: rows.facts, lastUsedAt: max(now, previousLastUse),
      pendingPurchase: pending, imported: rows.imported)
    let details = ScopeDetails(
      written: rows.snapshot, at: rows.imported?.savedAt ?? now, digest: rows.digest)
    let entitlements = rows.entitlements
    return { path in
      path.residents.install(
        ResidentScope(
          scopeRow: scopeRow, entitlements: entitlements, isComplete: true, details: details),
        for: scope.key)
    }
  }
}
