import CSQLite

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One cache file merged into another, then removed: the steps of
/// ``SQLiteCustomerInfoCache/relocate(from:)``.
///
/// Rows move as the old file holds them, column by column, so a snapshot keeps its
/// bookkeeping (its age), its signed material and its verdict, and a queued purchase its state
/// and attempts; nothing is decoded or rebuilt on the way. The columns are read from the
/// target's schema: the old file is migrated to this build's version when it opens, so both
/// have the same tables, and a column a later migration adds moves with no change here.
struct FileRelocation {
  /// The old file's path, and the file it named when it was opened.
  let path: String
  /// The VFS both files are opened with.
  let vfsName: String?
  let fileNumber: DatabaseFile.FileNumber?
  /// The old file's writer connection; the only connection this move has to it.
  let source: SQLiteConnection
  /// The old file's own identity (`Migrations/0009_file_moves.sql`), recorded in the target
  /// with the merge, in the same transaction.
  let identity: [UInt8]

  /// Opens the old file as a cache opens its own (migrated, in WAL mode), never creating it
  /// and never moving it aside: a damaged file is reported, and left where it is.
  init(path: String, configuration: CacheConfiguration, clock: CacheClock) throws(CacheError) {
    var configuration = configuration
    configuration.createIfMissing = false
    configuration.damageHandling = .fail
    let opened: DatabaseOpener.Opened
    do {
      opened = try DatabaseOpener(path: path, configuration: configuration, clock: clock).open()
    } catch {
      throw error.during(.relocate)
    }
    // A newer build's file is never written, and merging it could lose what this build does
    // not know it holds.
    if let newer = opened.readOnly { throw .sqlite(.relocate, newer) }
    self.path = path
    vfsName = configuration.vfsName
    fileNumber = DatabaseFile.fileNumber(path)
    let source = opened.writer.connection
    self.source = source
    do {
      identity = try source.writeTransaction { () throws(SQLiteError) -> [UInt8] in
        // Put back when another tool deleted the row; made once, then kept.
        try source.execute(
          "INSERT OR IGNORE INTO file_identity (id, value) VALUES (1, randomblob(16))")
        return try source.withStatement("SELECT value FROM file_identity WHERE id = 1") {
          statement throws(SQLiteError) in
          guard try statement.step(), let value = statement.bytes(0) else {
            throw SQLiteError(
              operation: "relocate", extendedResultCode: SQLITE_ERROR,
              message: "the old file has no identity")
          }
          return value
        }
      }
    } catch {
      throw .sqlite(.relocate, error)
    }
    // `opened.reader` closes here: the old file is removed only when no other connection has
    // it open, this move's own second one included.
  }

  // MARK: Merging

  /// Merges every scope and queued purchase of the old file into `target`, inside the
  /// target's write transaction and one read transaction of the old file, and records the old
  /// file's identity there. Nothing, when a run before this one merged it already (and was
  /// interrupted before it removed the old file): a purchase posted since and let go of is
  /// never queued again.
  ///
  /// Per scope, the newer snapshot wins by the rule book of a move
  /// (``ConditionalStore/moveReplaces(_:with:hasTrustRoots:now:)``); the row that loses is
  /// dropped whole, and the high-water mark and last use of both are kept, whichever is later.
  func merge(into store: StoreWriter, at now: Date, roots: TrustRoots?)
    throws(SQLiteError) -> RelocationSummary
  {
    let target = store.connection
    return try source.readTransaction { () throws(SQLiteError) -> RelocationSummary in
      var summary = RelocationSummary()
      let merged = try target.withStatement(Self.mergedBefore) { statement throws(SQLiteError) in
        try statement.bind(identity, at: 1)
        return try statement.step()
      }
      if merged {
        summary.mergedEarlier = true
        return summary
      }
      let columns = try Columns(target: target, source: source)
      try mergeScopes(into: store, columns: columns, at: now, roots: roots, &summary)
      try mergePurchases(into: target, columns: columns, &summary)
      try target.withStatement(Self.recordMerge) { statement throws(SQLiteError) in
        try statement.bind(identity, at: 1)
        try statement.bind(now, at: 2)
        try statement.run()
      }
      return summary
    }
  }

  private func mergeScopes(
    into store: StoreWriter, columns: Columns, at now: Date, roots: TrustRoots?,
    _ summary: inout RelocationSummary
  ) throws(SQLiteError) {
    let target = store.connection
    let statements = columns.scopeStatements
    try source.withStatement(statements.sourceRows) { old throws(SQLiteError) in
      while try old.step() {
        guard let key = old.bytes(SourceColumn.scopeKey) else { continue }
        let stored = try target.withStatement(Self.targetRow) { row throws(SQLiteError) in
          try row.bind(key, at: 1)
          return try row.step() ? TargetRow(row) : nil
        }
        let hasSnapshot = old.int64(StoredAnswerColumn.hasSnapshot) != 0
        var wins = hasSnapshot
        if hasSnapshot, let storedClaims = stored?.claims {
          wins = try replaces(storedClaims, with: old, in: target, roots: roots, at: now)
        }
        let revision = try store.takeRevision()
        // Copied whole when the old row is new to the target or wins; otherwise only its
        // later marks come across.
        let copies = stored == nil || wins
        let sql =
          stored == nil ? statements.insert : wins ? statements.replace : Self.keepLaterMarks
        let rowID = try target.withStatement(sql) { statement throws(SQLiteError) -> Int64 in
          if let stored {
            try statement.bind(stored.id, at: 1)
          } else {
            try statement.bind(key, at: 1)
          }
          try statement.bind(revision, at: 2)
          try statement.bind(hasSnapshot ? revision : nil, at: 3)
          try statement.bind(columnOf: old, SourceColumn.highWaterMark.index, at: 4)
          try statement.bind(columnOf: old, SourceColumn.lastUsedAt.index, at: 5)
          if copies {
            for index in 0..<Int32(clamping: columns.scope.count) {
              try statement.bind(columnOf: old, SourceColumn.copied + index, at: 6 + index)
            }
          }
          if let stored {
            try statement.run()
            return stored.id
          }
          guard try statement.step() else {
            throw SQLiteError(
              operation: "relocate", extendedResultCode: SQLITE_ERROR,
              message: "no row returned", sql: sql)
          }
          return statement.int64(0)
        }
        guard hasSnapshot else { continue }
        guard wins else {
          summary.snapshotsKept += 1
          continue
        }
        try moveEntitlements(
          of: old.int64(SourceColumn.id), to: rowID, into: target, columns: columns)
        summary.snapshotsMoved += 1
      }
    }
  }

  /// Whether the old file's snapshot (the current row of `old`) replaces the one the target
  /// stores for its scope (`stored`, as its row records it). With trust roots both are checked
  /// again from their files first, as a read checks a snapshot at rest: a verdict recorded
  /// under other roots, or rows edited since, count for nothing.
  private func replaces(
    _ stored: StoredAnswer, with old: SQLiteStatement, in target: SQLiteConnection,
    roots: TrustRoots?, at now: Date
  ) throws(SQLiteError) -> Bool {
    guard var moving = StoredAnswer(row: old) else { return false }
    var stored = stored
    if let roots {
      guard
        let scope = CacheScope(
          storedKey: old.bytes(SourceColumn.scopeKey) ?? [],
          sdkKeyHash: old.bytes(SourceColumn.sdkKeyHash) ?? [],
          installationHash: old.bytes(SourceColumn.installationHash) ?? [],
          userHash: old.bytes(SourceColumn.userHash) ?? [],
          environment: old.string(SourceColumn.environment) ?? "")
      else { return false }
      guard let checked = try Self.checkedClaims(of: scope, on: source, roots: roots) else {
        return false
      }
      moving = checked
      stored = try Self.checkedClaims(of: scope, on: target, roots: roots) ?? stored
    }
    return ConditionalStore.moveReplaces(
      stored, with: moving, hasTrustRoots: roots != nil, now: now)
  }

  /// The claims of `scope`'s snapshot as a read with `roots` finds them in the file:
  /// ``WholeScopeRead`` checks the signature, the recorded verdict and every row against the
  /// body. Nil without a snapshot.
  private static func checkedClaims(
    of scope: CacheScope, on connection: SQLiteConnection, roots: TrustRoots
  ) throws(SQLiteError) -> StoredAnswer? {
    var parsed = ParsedBodies()
    var read = try WholeScopeRead(scope, on: connection, checking: true, parsed: &parsed)
    read.verify(for: scope, roots: roots)
    guard let row = read.scopeRow, row.hasSnapshot, let requestDate = row.bookkeeping.serverTime
    else { return nil }
    return StoredAnswer(
      requestDate: requestDate, claimed: row.snapshotFacts.verification,
      writerVerdict: row.snapshotFacts.verdict,
      isImported: row.bookkeeping.origin.importedAt != nil)
  }

  private func moveEntitlements(
    of oldID: Int64, to rowID: Int64, into target: SQLiteConnection, columns: Columns
  ) throws(SQLiteError) {
    try target.withStatement(ScopeSQL.deleteEntitlements) { statement throws(SQLiteError) in
      try statement.bind(rowID, at: 1)
      try statement.run()
    }
    let statements = columns.entitlementStatements
    try source.withStatement(statements.select) { old throws(SQLiteError) in
      try old.bind(oldID, at: 1)
      try target.withStatement(statements.insert) { statement throws(SQLiteError) in
        while try old.step() {
          try statement.bind(rowID, at: 1)
          for index in 0..<Int32(clamping: columns.entitlement.count) {
            try statement.bind(columnOf: old, index, at: 2 + index)
          }
          try statement.run()
          statement.reset()
        }
      }
    }
  }

  /// Copies every queued purchase of the old file into the target, in the old file's
  /// observation order. A transaction both files queued is kept once: the entry that went
  /// further (one the old file posted, over one the target still has to post), else the one
  /// observed first, which it stays bound to. Then both files' entries are put in one
  /// observation order (``restoreObservationOrder(_:in:)``).
  private func mergePurchases(
    into target: SQLiteConnection, columns: Columns, _ summary: inout RelocationSummary
  ) throws(SQLiteError) {
    let statements = columns.purchaseStatements
    let (transaction, state, observedAt) = try columns.purchaseKeyColumns()
    var moved: Set<Int64> = []
    try source.withStatement(statements.select) { old throws(SQLiteError) in
      while try old.step() {
        let held = try target.withStatement(Self.queuedEntry) { entry throws(SQLiteError) in
          try entry.bind(columnOf: old, transaction, at: 1)
          return try entry.step()
            ? QueuedEntry(
              id: entry.int64(EntryColumn.id), state: entry.string(EntryColumn.state),
              observedAt: entry.int64(EntryColumn.observedAt))
            : nil
        }
        if let held {
          summary.purchasesAlreadyQueued += 1
          let incoming = QueuedEntry(
            id: 0, state: old.string(state), observedAt: old.int64(observedAt))
          guard incoming.supersedes(held) else { continue }
          // Out and in again: the queue's triggers count both observers' unsent entries.
          try target.withStatement(Self.deleteEntry) { statement throws(SQLiteError) in
            try statement.bind(held.id, at: 1)
            try statement.run()
          }
        } else {
          summary.purchasesMoved += 1
        }
        let id = try target.withStatement(statements.insert) { statement throws(SQLiteError) in
          for index in 0..<Int32(clamping: columns.purchase.count) {
            try statement.bind(columnOf: old, index, at: 1 + index)
          }
          guard try statement.step() else {
            throw SQLiteError(
              operation: "relocate", extendedResultCode: SQLITE_ERROR,
              message: "no row returned", sql: statements.insert)
          }
          return statement.int64(0)
        }
        moved.insert(id)
      }
    }
    if !moved.isEmpty { try Self.restoreObservationOrder(moved, in: target) }
  }

  /// An entry of a queue, as the merge compares two of one transaction.
  struct QueuedEntry {
    var id: Int64
    var state: String?
    var observedAt: Int64

    var isUnsent: Bool { state == "pending" || state == "posting" }

    /// Whether this entry takes the place of `held`, the one the target queued: it went
    /// further (posted, where `held` is still to post), or both are to post and this one was
    /// observed first.
    func supersedes(_ held: QueuedEntry) -> Bool {
      if isUnsent != held.isUnsent { return !isUnsent }
      return isUnsent && observedAt < held.observedAt
    }
  }

  /// Entries are posted in ID order, and the moved ones came in after the target's: they are
  /// put back among the target's by the time each was observed, each file's own entries
  /// keeping their order (a clock set back between two observations cannot swap them). IDs
  /// change only when the order does.
  private static func restoreObservationOrder(
    _ moved: Set<Int64>, in target: SQLiteConnection
  ) throws(SQLiteError) {
    var own: [(id: Int64, observedAt: Int64)] = []
    var incoming: [(id: Int64, observedAt: Int64)] = []
    try target.withStatement(observationOrder) { row throws(SQLiteError) in
      while try row.step() {
        let entry = (id: row.int64(EntryColumn.id), observedAt: row.int64(EntryColumn.observedAt))
        if moved.contains(entry.id) { incoming.append(entry) } else { own.append(entry) }
      }
    }
    var order: [Int64] = []
    order.reserveCapacity(own.count + incoming.count)
    var (i, j) = (0, 0)
    while i < own.count || j < incoming.count {
      if j == incoming.count || (i < own.count && own[i].observedAt <= incoming[j].observedAt) {
        order.append(own[i].id)
        i += 1
      } else {
        order.append(incoming[j].id)
        j += 1
      }
    }
    guard order != (own + incoming).map(\.id).sorted() else { return }
    // Through negative IDs, which no entry has, so no two entries ever share one.
    try target.execute("UPDATE purchase_queue SET id = -id")
    try target.withStatement(renumberEntry) { statement throws(SQLiteError) in
      for (position, id) in order.enumerated() {
        try statement.bind(Int64(position) + 1, at: 1)
        try statement.bind(-id, at: 2)
        try statement.run()
        statement.reset()
      }
    }
  }

  // MARK: Removing

  /// Removes the old file, unless another connection (a process, or another cache instance)
  /// still has it open: then it is left, and false returned.
  ///
  /// The file leaves WAL mode first. SQLite needs the file's exclusive lock for that, which
  /// it cannot have while any other connection has the file open, and the switch merges the
  /// log into the file and deletes it: from here the file stands alone, its identity in it.
  /// Its exclusive lock is held while the names go, so no other connection reads it half
  /// removed.
  func remove() throws(CacheError) -> Bool {
    // Another run (the widget's, at the same launch) removed it first, or something else now
    // has the name: not this move's to remove.
    guard DatabaseFile.fileNumber(path) == fileNumber else { return true }
    do {
      // An open connection does not close by waiting: not waited for.
      try source.setBusyTimeout(milliseconds: 0)
      guard try source.scalarText("PRAGMA journal_mode = DELETE")?.lowercased() == "delete"
      else { return false }
      try source.execute("BEGIN EXCLUSIVE")
    } catch  where error.resultCode == SQLITE_BUSY {
      return false
    } catch  where error.extendedResultCode == Self.readOnlyDatabaseMoved {
      // Removed meanwhile, by that other run.
      return true
    } catch {
      throw .sqlite(.relocate, error)
    }
    defer { try? source.execute("ROLLBACK") }
    guard DatabaseFile.fileNumber(path) == fileNumber else { return true }
    try DatabaseFile.remove(path, vfs: vfsName, operation: .relocate)
    return true
  }

  /// `SQLITE_READONLY_DBMOVED`, whose macro Swift cannot import: the file was unlinked or
  /// renamed while open.
  private static let readOnlyDatabaseMoved = SQLITE_READONLY | (4 << 8)
}

extension CacheError {
  /// The same error, as a failure of `operation`.
  func during(_ operation: CacheOperation) -> CacheError {
    guard case .storage(_, let failure) = self else { return self }
    return .storage(operation, failure)
  }
}
