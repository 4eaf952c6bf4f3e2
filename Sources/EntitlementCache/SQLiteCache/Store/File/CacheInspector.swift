#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One scope as the `scopes` listing shows it: hashes, never raw identities.
package struct ScopeSummary: Sendable, Hashable {
  /// The scope's identity in the file.
  package var key: ScopeKey
  /// Its store environment.
  package var environment: StoreEnvironment?
  /// The first hexadecimal digits of the hashed app-user ID, to group scopes of one user.
  package var userHashPrefix: String
  /// Its bookkeeping.
  package var bookkeeping: ScopeBookkeeping
  /// Entitlement keys in the stored snapshot.
  package var entitlementCount: Int
  /// The latest persisted use (write, or read flushed to the file).
  package var lastUsedAt: Date
  /// How current its snapshot is now; nil when it has none.
  package var freshness: Freshness?
}

/// One purchase-queue entry as a support tool lists it (`entitlement-cache queue`): no
/// token, and the observer by hashes only.
package struct QueuedPurchaseSummary: Sendable, Hashable {
  /// The store's transaction ID.
  package var transactionID: String
  /// The store's product ID.
  package var productID: String
  /// The observing scope's hash.
  package var observer: ScopeKey
  /// The first hexadecimal digits of the observer's hashed app-user ID, as `scopes` shows it.
  package var observerUserHashPrefix: String
  /// The observer's store environment.
  package var environment: StoreEnvironment
  /// Where the entry is on its way to the server.
  package var state: PurchaseState
  /// Posts begun.
  package var attempts: Int
  /// When a backed-off entry may be posted again (device time).
  package var nextAttemptAt: Date?
  /// When it was first observed (device time).
  package var firstObservedAt: Date
  /// When it reached its state (device time).
  package var stateChangedAt: Date
  /// How the last failed post failed.
  package var lastFailure: FetchFailure?
  /// A conflict's resolution.
  package var resolution: ClaimHint?
}

/// What a support tool asks of a cache file and an SDK never does: every scope in it by hash,
/// deleting a scope by hash, and the file's health.
///
/// Kept apart from ``SQLiteCustomerInfoCache`` so the SDK-facing API cannot enumerate scopes:
/// an app reads and writes only the scope it names.
///
/// ```swift
/// let cache = try SQLiteCustomerInfoCache(path: path, configuration: inspection)
/// for summary in try CacheInspector(cache).scopeSummaries() { print(summary.key.hexPrefix) }
/// ```
package struct CacheInspector: Sendable {
  /// The cache inspected.
  package let cache: SQLiteCustomerInfoCache

  /// An inspector of `cache`.
  package init(_ cache: SQLiteCustomerInfoCache) {
    self.cache = cache
  }

  /// Every scope in the file, most recently used first, by hash only.
  package func scopeSummaries(policy: OfflinePolicy? = nil) throws(CacheError) -> [ScopeSummary] {
    let (clock, reads) = (cache.clock, cache.reads)
    let now = clock.now()
    let rules = try cache.resolve(policy).get()
    let summaries: [ScopeSummary]?
    do {
      summaries = try reads.withLock { path throws(SQLiteError) -> [ScopeSummary]? in
        guard let reader = path.reader else { return nil }
        return try reader.connection.withStatement(ScopeSQL.scopeSummaries) {
          statement throws(SQLiteError) in
          var summaries: [ScopeSummary] = []
          while try statement.step() {
            guard let keyBytes = statement.data(BookkeepingColumn.scopeKey),
              let key = ScopeKey(bytes: keyBytes)
            else { continue }
            let bookkeeping = ScopeRow(fullRow: statement).bookkeeping
            let clockReading = ClockReading(
              now: now, boot: bookkeeping.refreshBootInstant == nil ? nil : clock.bootInstant(),
              bookkeeping: bookkeeping, tolerance: rules.clockRollbackTolerance)
            let userHash =
              statement.data(BookkeepingColumn.userHash).map {
                ScopeKey(bytes: $0)?.hexPrefix ?? ""
              }
              ?? ""
            summaries.append(
              ScopeSummary(
                key: key,
                environment: statement.string(BookkeepingColumn.environment).flatMap(
                  StoreEnvironment.init),
                userHashPrefix: userHash, bookkeeping: bookkeeping,
                entitlementCount: Int(statement.int64(SummaryColumn.entitlementCount)),
                lastUsedAt: Date(unixMilliseconds: statement.int64(ScopeRowColumn.lastUsedAt)),
                freshness: bookkeeping.storedAt == nil
                  ? nil
                  : EntitlementEvaluator.freshness(bookkeeping, clock: clockReading, policy: rules)
              ))
          }
          return summaries
        }
      }
    } catch {
      throw .sqlite(.listScopes, error)
    }
    // No reader: the cache was closed, which is not an empty file.
    guard let summaries else { throw .closed }
    return summaries
  }

  /// Deletes the scope whose hash starts with `hexPrefix` and returns its full key; nil when
  /// no scope matches.
  ///
  /// - Throws: ``InspectionError/ambiguousScope(prefix:matches:)`` when more than one scope
  ///   matches; ``InspectionError/invalidScopeHashPrefix(_:)`` when the prefix is not at least
  ///   4 hexadecimal digits; ``InspectionError/cache(_:)`` when the file cannot be read or
  ///   written.
  package func removeScope(hashPrefix hexPrefix: String) throws(InspectionError) -> ScopeKey? {
    let prefix = hexPrefix.lowercased()
    // An empty or non-hex prefix would match every scope, or none, by accident.
    guard prefix.count >= 4, prefix.allSatisfy(\.isHexDigit) else {
      throw .invalidScopeHashPrefix(hexPrefix)
    }
    let matches: [ScopeKey]
    do {
      matches = try scopeSummaries().map(\.key).filter { $0.hex.hasPrefix(prefix) }
    } catch {
      throw .cache(error)
    }
    guard let key = matches.first else { return nil }
    guard matches.count == 1 else {
      throw .ambiguousScope(prefix: hexPrefix, matches: matches.count)
    }
    do {
      try cache.remove(key)
    } catch {
      throw .cache(error)
    }
    return key
  }

  /// Every entry of the purchase queue, in observation order, without its token: what
  /// `entitlement-cache queue` lists. Rows another tool left out of the schema's range are
  /// counted in `unreadable`, not listed.
  package func purchaseQueue() throws(CacheError) -> (
    entries: [QueuedPurchaseSummary], unreadable: Int
  ) {
    try cache.readQueue(.readPurchases) { store throws(SQLiteError) in
      try store.connection.withStatement(PurchaseQueueSQL.listing) {
        statement throws(SQLiteError) in
        var entries: [QueuedPurchaseSummary] = []
        var unreadable = 0
        while try statement.step() {
          if let entry = PurchaseQueueSQL.fields(row: statement) {
            entries.append(entry)
          } else {
            unreadable += 1
          }
        }
        return (entries, unreadable)
      }
    }
  }

  /// Checks the file at `path` without changing it: schema version, `PRAGMA integrity_check`,
  /// page counts, file and WAL sizes, scope count, purchase-queue entries by state.
  ///
  /// - Throws: ``SQLiteCacheError/missing(path:)``; ``SQLiteCacheError/damaged(path:movedTo:cause:)``
  ///   with `movedTo` nil when the file is not a database (it is left where it is).
  package static func health(path: String) throws(CacheError) -> DatabaseHealth {
    try SQLiteCustomerInfoCache.inspect(path: path)
  }
}

/// Why a support tool's request could not be answered.
package enum InspectionError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A scope hash prefix matched more than one scope.
  case ambiguousScope(prefix: String, matches: Int)
  /// A scope hash prefix is not at least 4 hexadecimal digits.
  case invalidScopeHashPrefix(String)
  /// The cache failed.
  case cache(CacheError)

  /// One line naming the problem.
  package var description: String {
    switch self {
    case .ambiguousScope(let prefix, let matches):
      "scope hash prefix \(prefix) matches \(matches) scopes; give more digits"
    case .invalidScopeHashPrefix(let prefix):
      "scope hash prefix '\(prefix)' must be at least 4 hexadecimal digits"
    case .cache(let error): error.description
    }
  }
}

extension SQLiteCustomerInfoCache {
  /// Deletes the scope with the full key `key`.
  func remove(_ key: ScopeKey) throws(CacheError) {
    try write(.remove, scope: nil) { store, _ throws(SQLiteError) in
      try store.deleteScope(storedKey: key.bytes)
      return { path in path.residents.forget(key) }
    }
  }

  /// See ``CacheInspector/health(path:)``.
  static func inspect(path: String) throws(CacheError) -> DatabaseHealth {
    switch DatabaseFile.presence(path) {
    case .absent: throw .sqlite(.open, .missing(path: path))
    case .refused(let code): throw .sqlite(.open, DatabaseFile.refused(errno: code))
    case .unknown(let code):
      throw .sqlite(.open, DatabaseFile.statFailed(path, errno: code))
    case .file, .notAFile: break
    }
    do throws(SQLiteError) {
      var options = SQLiteConnection.Options()
      options.readOnly = true
      let connection = try SQLiteConnection(path: path, options: options)
      let file = try DatabaseFile.schema(on: connection)
      let version = file.version
      if DatabaseFile.isForeign(file) {
        throw DatabaseFile.foreignCause
      }
      var integrity: [String] = []
      do throws(SQLiteError) {
        try connection.withStatement("PRAGMA integrity_check") { statement throws(SQLiteError) in
          while try statement.step() {
            // One row can hold several lines ("*** in database main ***\nPage 2: ...").
            let text = statement.string(0) ?? ""
            integrity += text.split(separator: "\n", omittingEmptySubsequences: true).map(
              String.init)
          }
        }
      } catch  where error.isDamage && !integrity.isEmpty {
        // On a badly damaged page the check reports what it found, then fails itself: keep
        // its findings and say it could not finish.
        integrity.append("integrity check stopped: \(error.message)")
      }
      // A table another tool dropped, as the cache finds it at open, then each statement of
      // the cache that does not prepare against the tables it finds.
      let schemaProblems =
        (file.missingTable.map { ["missing table: \($0)"] } ?? [])
        + (version == supportedSchemaVersion ? statementsThatFail(on: connection) : [])
      // A damaged table page, or a table another tool changed, fails a count; the integrity
      // lines or the statements already say what is wrong, and they are what the caller
      // needs, so the count is left out rather than thrown. So does a newer build's change
      // to a table, which is no damage: what it changed is its own.
      let isNewer = version > supportedSchemaVersion
      let explained = { (error: SQLiteError) in
        (error.isDamage && integrity != ["ok"]) || !schemaProblems.isEmpty
          || (isNewer && error.isMissingSchema)
      }
      let hasScopes =
        try connection.scalarInt(
          "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'scope'") > 0
      var scopeCount: Int?
      do throws(SQLiteError) {
        scopeCount = hasScopes ? Int(try connection.scalarInt("SELECT count(*) FROM scope")) : 0
      } catch  where explained(error) {
        scopeCount = nil
      }
      let purchaseCounts = try purchaseCounts(on: connection, explained: explained)
      // Read as the opener reads it. A floor that cannot be read (a newer build changed its
      // table) is none, so such a file is not readable here, as the opener refuses it.
      let readableFrom = try? DatabaseFile.readFloor(on: connection)
      let verificationCounts =
        version >= 5 ? try verificationCounts(on: connection, explained: explained) : [:]
      return DatabaseHealth(
        schemaVersion: version, supportedSchemaVersion: supportedSchemaVersion,
        readableFrom: readableFrom,
        integrity: integrity, schemaProblems: schemaProblems,
        journalMode: try connection.scalarText("PRAGMA journal_mode") ?? "unknown",
        pageSize: Int(try connection.scalarInt("PRAGMA page_size")),
        pageCount: Int(try connection.scalarInt("PRAGMA page_count")),
        freelistCount: Int(try connection.scalarInt("PRAGMA freelist_count")),
        fileSize: DatabaseFile.size(path) ?? 0, walSize: DatabaseFile.size(path + "-wal") ?? 0,
        scopeCount: scopeCount, purchaseCounts: purchaseCounts,
        verificationCounts: verificationCounts)
    } catch {
      if error.isDamage, !error.isMissingSchema {
        throw .sqlite(.open, .damaged(path: path, movedTo: nil, cause: error))
      }
      throw .sqlite(.inspect, error)
    }
  }

  /// Each of the store's statements that does not prepare on `connection`, with SQLite's
  /// reason (`no such column: e.status`); preparing reads the schema and nothing else.
  private static func statementsThatFail(on connection: SQLiteConnection) -> [String] {
    (ScopeSQL.everyStatement + PurchaseQueueSQL.everyStatement).compactMap { name, sql in
      do throws(SQLiteError) {
        _ = try SQLiteStatement(connection: connection, sql: sql, persistent: false)
        return nil
      } catch {
        return "\(name): \(error.message)"
      }
    }
  }

  /// The recorded verdicts for ``health(path:)``: a verdict only for the pairs a writer with
  /// trust roots records; any other pair (an edit) counts as `tampered`.
  private static func verificationCounts(
    on connection: SQLiteConnection, explained: (SQLiteError) -> Bool
  ) throws(SQLiteError) -> [TrustVerdict?: Int]? {
    let sql = """
      SELECT \(RecordedVerdictColumn.selectList)
      FROM scope s WHERE s.snapshot IS NOT NULL GROUP BY 1, 2, 3
      """
    do throws(SQLiteError) {
      return try connection.withStatement(sql) { statement throws(SQLiteError) in
        var counts: [TrustVerdict?: Int] = [:]
        while try statement.step() {
          var verdict: TrustVerdict?
          if statement.int64(RecordedVerdictColumn.isChecked) != 0 {
            verdict =
              TrustVerdict(
                recordedAs: statement.string(RecordedVerdictColumn.verification),
                failure: statement.string(RecordedVerdictColumn.verificationFailure))
              ?? .failed(.tampered)
          }
          counts[verdict, default: 0] += Int(statement.int64(RecordedVerdictColumn.count))
        }
        return counts
      }
    } catch  where explained(error) {
      return nil
    }
  }

  /// The queue's entries by state for ``inspect(path:)``: empty for a file from before the
  /// queue's migration, nil when damage or a changed table, already reported, stops the count.
  private static func purchaseCounts(
    on connection: SQLiteConnection, explained: (SQLiteError) -> Bool
  ) throws(SQLiteError) -> [PurchaseState: Int]? {
    let hasQueue =
      try connection.scalarInt(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'purchase_queue'") > 0
    guard hasQueue else { return [:] }
    do throws(SQLiteError) {
      return try connection.withStatement(PurchaseQueueSQL.countsByState) {
        statement throws(SQLiteError) in
        var counts: [PurchaseState: Int] = [:]
        while try statement.step() {
          // The table's CHECK admits only known states; a row another tool forced past it
          // is left out rather than counted under a state it is not.
          guard let state = statement.string(0).flatMap(PurchaseState.init) else { continue }
          counts[state] = Int(statement.int64(1))
        }
        return counts
      }
    } catch  where explained(error) {
      // As for the scope count: the integrity lines or the statements say what is wrong.
      return nil
    }
  }
}
