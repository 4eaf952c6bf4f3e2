#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Everything the read path touches, behind one lock: the reader connection and the scopes
/// resident in memory.
///
/// A class so the lock's closure mutates it in place; it is only ever used inside
/// `SQLiteCustomerInfoCache.reads`, which serializes all access.
final class ReadState {
  private(set) var reader: SQLiteConnection
  // Only ever touched under the lock (see above), so the runtime's exclusivity check on each
  // access would only repeat what the lock guarantees; it costs more than the lookup itself.
  @exclusivity(unchecked) var residents = ResidentTable()
  /// Read-time bookkeeping of residents dropped before it was persisted.
  var orphanedTouches: [ScopeKey: PendingTouch] = [:]
  private let checkInterval: UInt64
  private var lastCheck: UInt64 = 0
  private var dataVersion: Int64?

  /// - Parameter dataVersion: The writer's `data_version` when the cache opened, so a write by
  ///   another connection before the first check is noticed too.
  init(reader: SQLiteConnection, checkInterval: UInt64, dataVersion: Int64?) {
    self.reader = reader
    self.checkInterval = checkInterval
    self.dataVersion = dataVersion
    lastCheck = MonotonicClock.nanoseconds()
  }

  deinit {
    // Finalize before the connection this statement belongs to closes.
    pointReadStatement = nil
  }

  // MARK: Cross-connection invalidation

  /// Whether it is time to ask SQLite if another connection wrote. Costs one coarse clock read.
  var isCheckDue: Bool {
    MonotonicClock.nanoseconds() &- lastCheck >= checkInterval
  }

  /// Drops every resident when `version` (the writer connection's `PRAGMA data_version`, which
  /// changes only when *another* connection commits) moved since the last check.
  func observe(dataVersion version: Int64) {
    lastCheck = MonotonicClock.nanoseconds()
    if let dataVersion, dataVersion != version {
      dropAllResidents()
    }
    dataVersion = version
  }

  /// Forgets every resident, keeping their unpersisted read-time bookkeeping.
  func dropAllResidents() {
    for (key, resident) in residents {
      keepPendingTouch(of: resident, for: key)
    }
    residents.removeAll()
  }

  /// Moves a resident's unpersisted read-time bookkeeping among the orphans, so dropping it
  /// loses nothing the next write should persist.
  private func keepPendingTouch(of resident: ResidentScope, for key: ScopeKey) {
    if let touch = resident.pendingTouch {
      orphanedTouches[key] = touch.merged(with: orphanedTouches[key])
    }
  }

  /// Starts over on a new file (the old one was damaged and moved aside): nothing resident,
  /// pending or prepared belongs to the new file.
  func replaceReader(with reader: SQLiteConnection, dataVersion version: Int64?) {
    pointReadStatement = nil
    self.reader = reader
    residents.removeAll()
    orphanedTouches.removeAll()
    dataVersion = version
  }

  /// Forgets one resident and its bookkeeping (the scope was deleted or rewritten).
  func forget(_ key: ScopeKey) {
    residents.removeValue(forKey: key)
    orphanedTouches[key] = nil
  }

  /// Every scope's read-time bookkeeping not yet in the file.
  func pendingTouches() -> [ScopeKey: PendingTouch] {
    var touches = orphanedTouches
    for (key, resident) in residents {
      if let touch = resident.pendingTouch {
        touches[key] = touch.merged(with: touches[key])
      }
    }
    return touches
  }

  /// Records that `touches` reached the file.
  func markPersisted(_ touches: [ScopeKey: PendingTouch]) {
    for (key, touch) in touches {
      if let orphan = orphanedTouches[key], orphan.highWaterMark <= touch.highWaterMark,
        orphan.lastUsedAt <= touch.lastUsedAt
      {
        orphanedTouches[key] = nil
      }
      residents[key]?.markPersisted(touch)
    }
  }

  // MARK: Decisions

  /// The decision for `key`, from memory when the scope and key are resident.
  ///
  /// - Parameter boot: Reads the boot clock; called only for a scope whose refresh recorded a
  ///   boot-clock reading.
  func decision(
    _ key: String, scope: CacheScope, now: Date, boot: () -> BootInstant?, policy: OfflinePolicy
  ) -> AccessDecision {
    let resident = residents[scope.key]
    if let resident, !resident.isStale {
      if resident.makeRecent(key) {
        return evaluate(
          resident, key, resident.recentFacts, now: now, boot: boot, policy: policy)
      }
      if resident.isComplete || !resident.hasSnapshot {
        return evaluate(resident, key, nil, now: now, boot: boot, policy: policy)
      }
    }
    do {
      let read = try readThrough(key, scope: scope, resident: resident)
      return evaluate(read, key, read.recentFacts, now: now, boot: boot, policy: policy)
    } catch {
      return EntitlementEvaluator.unavailable(
        key, .unreadable, clock: ClockReading(unstoredAt: now))
    }
  }

  /// A resident holding every key of the scope, reading the file when needed.
  func completeResident(_ scope: CacheScope) throws(ReadFailure) -> ResidentScope {
    if let resident = residents[scope.key], !resident.isStale,
      resident.isComplete || !resident.hasRow
    {
      return resident
    }
    let read: (header: ScopeHeader?, entitlements: [String: EntitlementFacts])
    do {
      read = try ScopeSQL.readScope(scope.key.bytes, on: reader)
    } catch {
      throw .storage(error)
    }
    return try install(read.header, read.entitlements, isComplete: true, for: scope)
  }

  /// Evaluates one key of a resident, raising its read-time bookkeeping in memory.
  func evaluate(
    _ resident: ResidentScope, _ key: String, _ facts: EntitlementFacts?, now: Date,
    boot: () -> BootInstant?, policy: OfflinePolicy
  ) -> AccessDecision {
    guard resident.hasRow else {
      return EntitlementEvaluator.unavailable(
        key, .noSnapshot, clock: ClockReading(unstoredAt: now))
    }
    let clock = resident.clockReading(now: now, boot: boot, policy: policy)
    resident.recordRead(at: clock.effectiveDeviceNow)
    guard resident.hasSnapshot else {
      return EntitlementEvaluator.unavailable(key, .noSnapshot, clock: clock)
    }
    return EntitlementEvaluator.decide(
      key, facts: facts, snapshot: resident.header.snapshotFacts,
      bookkeeping: resident.header.bookkeeping,
      clock: clock, policy: policy)
  }

  /// The read-through statement, prepared once and held here rather than looked up in the
  /// connection's statement cache, whose key is the SQL text: hashing those 700 characters
  /// cost a tenth of the read. Dropped after a failure, as the cache evicts a failed statement.
  private var pointReadStatement: SQLiteStatement?

  /// One statement: the scope header and at most one entitlement row. Returns the resident
  /// that now holds `key` as its recent key: `resident` itself when the file still matches it.
  private func readThrough(
    _ key: String, scope: CacheScope, resident: ResidentScope?
  ) throws(ReadFailure) -> ResidentScope {
    let read: PointRead
    do throws(SQLiteError) {
      let statement: SQLiteStatement
      if let prepared = pointReadStatement {
        statement = prepared
      } else {
        statement = try SQLiteStatement(
          connection: reader, sql: ScopeSQL.pointRead, persistent: true)
        pointReadStatement = statement
      }
      do throws(SQLiteError) {
        read = try scope.key.withUnsafeBytes { scopeKey throws(SQLiteError) in
          try statement.withBorrowedParameters(blob: scopeKey, at: 1, text: key, at: 2) {
            () throws(SQLiteError) in
            try Self.pointRead(statement, key, matching: resident)
          }
        }
      } catch {
        pointReadStatement = nil
        throw error
      }
    } catch {
      throw .storage(error)
    }
    switch read {
    case .matched(let resident):
      return resident
    case .read(let fresh):
      replaceResident(scope.key, with: fresh)
      return fresh
    case .undecodable(let error):
      throw .snapshot(error)
    }
  }

  /// What one step of the point read gave.
  private enum PointRead {
    /// The file still holds what the resident was read from; it now holds the key too.
    case matched(ResidentScope)
    /// A resident built from the row (or its absence) for the key, not yet installed.
    case read(ResidentScope)
    /// The row's device details no longer decode.
    case undecodable(SnapshotError)
  }

  /// Steps the point read and maps its row straight into a resident, so the row's parts move
  /// into it rather than being copied through an intermediate value.
  private static func pointRead(
    _ statement: SQLiteStatement, _ key: String, matching resident: ResidentScope?
  ) throws(SQLiteError) -> PointRead {
    guard try statement.step() else {
      if let resident, resident.matches(nil) {
        resident.addReadThrough(key, EntitlementFacts())
        return .matched(resident)
      }
      let absent = ResidentScope(header: .absent, entitlements: [:], isComplete: false)
      absent.addReadThrough(key, EntitlementFacts())
      return .read(absent)
    }
    let facts = EntitlementFacts(row: statement)
    if let resident, resident.matches(RowVersion(row: statement)) {
      resident.addReadThrough(key, facts)
      return .matched(resident)
    }
    var header = ScopeHeader(row: statement)
    do {
      try header.decodeDeviceBlock()
    } catch {
      return .undecodable(error)
    }
    let fresh = ResidentScope(header: header, entitlements: [:], isComplete: false)
    fresh.addReadThrough(key, facts)
    return .read(fresh)
  }

  /// Makes a freshly read scope resident, replacing a resident of an older snapshot.
  ///
  /// `header` is consumed: its parts move into the resident rather than being copied, which
  /// retains every string and array they hold.
  private func install(
    _ header: consuming ScopeHeader?, _ entitlements: consuming [String: EntitlementFacts],
    isComplete: Bool, for scope: CacheScope
  ) throws(ReadFailure) -> ResidentScope {
    var header = header ?? .absent
    do {
      try header.decodeDeviceBlock()
    } catch {
      throw .snapshot(error)
    }
    let resident = ResidentScope(
      header: header, entitlements: entitlements, isComplete: isComplete)
    replaceResident(scope.key, with: resident)
    return resident
  }

  /// Makes `resident` the scope's resident. Read-time bookkeeping only moves forward, whatever
  /// the file says: the marks of the resident it replaces, or of one dropped because another
  /// connection wrote, carry over. Without that, a clock set back would reopen access that a
  /// read here had already seen expire.
  func replaceResident(_ key: ScopeKey, with resident: ResidentScope) {
    // One hash per dictionary: each removal or update hands back what it replaced. Orphans
    // exist only after every resident was dropped, so most reads skip that dictionary.
    let orphan = orphanedTouches.isEmpty ? nil : orphanedTouches.removeValue(forKey: key)
    let previous = residents.updateValue(resident, forKey: key)
    if resident.hasRow {
      resident.carryForward(previous.flatMap { $0.hasRow ? $0.readBookkeeping : nil })
      resident.carryForward(orphan)
    }
  }

  /// Makes the next read of one scope re-read the file. The resident stays, marked stale, so
  /// its unpersisted read-time bookkeeping carries over to the one that replaces it without a
  /// trip through the orphans.
  func dropResident(_ key: ScopeKey) {
    residents[key]?.isStale = true
  }

  /// Records a whole-snapshot read of `scope` at `now` in memory, as `access(to:)` does for a
  /// key, and returns the high-water mark from before it with the refresh it belongs to
  /// (``ScopeBookkeeping/storedAt`` and ``ScopeBookkeeping/serverTime``); nil when nothing is
  /// stored.
  func recordSnapshotRead(
    _ scope: CacheScope, now: Date
  ) -> (highWaterMark: Date, storedAt: Date?, serverTime: Date?)? {
    guard let resident = try? completeResident(scope), resident.hasRow else { return nil }
    let prior = resident.highWaterMark
    resident.recordRead(at: max(now, prior))
    let bookkeeping = resident.header.bookkeeping
    return (prior, bookkeeping.storedAt, bookkeeping.serverTime)
  }
}

/// Why a read could not produce a resident scope.
enum ReadFailure: Error {
  case storage(SQLiteError)
  case snapshot(SnapshotError)
}
