#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The read path, behind the reads lock: the scopes resident in memory, the change check's
/// last answer, and the store's reader (``StoreReader``), which it asks when memory cannot
/// answer. It routes each read to memory or to the file, and runs no SQL of its own.
///
/// A class so the lock's closure mutates it in place; it is only ever used inside
/// `SQLiteCustomerInfoCache.reads`, which serializes all access.
///
/// So every stored variable here is `@exclusivity(unchecked)`: the runtime's dynamic check
/// would only repeat what the lock guarantees, and it costs a thread-local access-set insert
/// and remove on every access.
final class ScopeReader {
  /// Nil once the cache is closed, or while the file cannot be opened yet.
  @exclusivity(unchecked) private(set) var reader: StoreReader?
  /// The cache's record of a file it waits for: why there is no reader though the cache is
  /// not closed. A leaf lock, taken only on a read that has no reader.
  private let awaitingStorage: Locked<AwaitingStorage?>
  @exclusivity(unchecked) var residents = ResidentScopes()
  /// The writer's `data_version` at the last check; nil when unknown.
  @exclusivity(unchecked) private var dataVersion: Int64?
  /// The ``SQLiteConnection/serial`` of the writer that `dataVersion` belongs to: a version
  /// read from a writer since replaced (a damaged file moved aside) says nothing of this one.
  @exclusivity(unchecked) private(set) var writerSerial: UInt64?
  /// With trust roots, every read of a scope from the file reads it whole and checks it
  /// (``WholeScopeRead``); the hot path, from memory, checks nothing.
  let trustRoots: TrustRoots?
  /// Bodies reads of the whole scope have decoded (see ``ParsedBodies``).
  @exclusivity(unchecked) private var parsedBodies = ParsedBodies()
  /// Whether the cache last told its storage unavailable, shared with the cache.
  private let storageHealth: StorageHealth
  /// What reads noticed for the cache's ``CacheConfiguration/onDiagnostic``, which is told
  /// once the lock is released (``takeNoticed()``).
  @exclusivity(unchecked) private var noticed: [(DiagnosticEvent, CacheScope?)] = []
  /// The read failure last told for each scope, until a read of the scope from the file or a
  /// write succeeds: a read that fails fails again at every call, and one line says it.
  @exclusivity(unchecked) private var toldFailures: [ScopeKey: CacheError] = [:]
  /// The revision of each scope last told as tampered: a tampered row is found again at every
  /// read of it from the file.
  @exclusivity(unchecked) private var toldTampered: [ScopeKey: Int64] = [:]

  /// - Parameters:
  ///   - dataVersion: The writer's `data_version` when the cache opened, so a write by another
  ///     connection before the first check is noticed too.
  ///   - writerSerial: That writer's serial.
  ///   - trustRoots: The cache's pinned roots, if any.
  ///   - awaitingStorage: The cache's record of a file it waits for.
  ///   - storageHealth: Whether the cache last told its storage unavailable.
  init(
    reader: StoreReader?, dataVersion: Int64?, writerSerial: UInt64?,
    trustRoots: TrustRoots?, awaitingStorage: Locked<AwaitingStorage?>,
    storageHealth: StorageHealth
  ) {
    self.reader = reader
    self.awaitingStorage = awaitingStorage
    self.storageHealth = storageHealth
    self.dataVersion = dataVersion
    self.writerSerial = writerSerial
    self.trustRoots = trustRoots
  }

  // MARK: Cross-connection invalidation

  /// Drops every resident when `version` (the writer connection's `PRAGMA data_version`, which
  /// changes only when *another* connection commits) moved since the last check; nil, when the
  /// file could not be asked, trusts nothing resident.
  func observe(dataVersion version: Int64?, writerSerial serial: UInt64?) {
    // Asked before the read took this lock: a writer replaced meanwhile answered for a file
    // that is gone, and recording its number against the new one could hide a later write.
    guard serial == writerSerial else { return }
    guard let version else {
      residents.dropAll()
      return
    }
    if let dataVersion, dataVersion != version {
      residents.dropAll()
    }
    dataVersion = version
  }

  /// Starts over on a new connection (the old file was damaged and moved aside, or it could
  /// not be opened before), or on none (the cache closed): nothing resident, marked or
  /// prepared belongs to it.
  func replaceReader(
    with reader: StoreReader?, dataVersion version: Int64?, writerSerial serial: UInt64?
  ) {
    self.reader = reader
    residents.removeAll()
    parsedBodies.removeAll()
    dataVersion = version
    writerSerial = serial
  }

  /// Why a read has no reader: the file the cache waits for, or a closed cache.
  private var noReaderFailure: ReadFailure {
    awaitingStorage.withLock { $0 }.map { .unavailable($0.failure) } ?? .closed
  }

  /// What reads noticed since the last call, handed over once; nil when nothing was, which
  /// is every read from memory.
  func takeNoticed() -> [(DiagnosticEvent, CacheScope?)]? {
    guard !noticed.isEmpty else { return nil }
    defer { noticed.removeAll() }
    return noticed
  }

  /// A read of `key` from the file succeeded: storage told unavailable is available again,
  /// and a failure of the scope told before is told again if it recurs.
  private func noteFileRead(_ key: ScopeKey) {
    if storageHealth.markAvailable() { noticed.append((.storageAvailable, nil)) }
    if !toldFailures.isEmpty { toldFailures.removeValue(forKey: key) }
  }

  /// Notes a failed read of `scope` for the diagnostics, and says whether the failure itself
  /// is to be told (``SQLiteCustomerInfoCache/report(_:for:at:telling:)``): storage
  /// unavailable is noticed here once, when it starts, under the lock, so a read that
  /// succeeds after it tells that it came back after; a newer build's file was told when the
  /// cache opened it; any other failure is told unless it is the one last told for the scope.
  func noteFailure(_ failure: ReadFailure, for scope: CacheScope) -> Bool {
    switch failure.unavailableReason {
    case .storageUnavailable:
      if storageHealth.markUnavailable() { noticed.append((.storageUnavailable(.load), scope)) }
      return false
    case .newerSchema:
      return false
    default:
      let error = failure.cacheError
      guard toldFailures[scope.key] != error else { return false }
      toldFailures[scope.key] = error
      return true
    }
  }

  /// A write committed: what the file holds changed, so a failure told before is told again
  /// if it recurs.
  func forgetToldFailures() {
    if !toldFailures.isEmpty { toldFailures.removeAll() }
  }

  /// Forgets the bodies reads decoded (the benchmarks' first-read case).
  func forgetParsedBodies() {
    parsedBodies.removeAll()
  }

  /// How many bodies reads have decoded.
  var bodyDecodes: Int { parsedBodies.decodes }

  // MARK: Decisions

  /// The decision for `key`, from memory when the scope and key are resident.
  ///
  /// When the file cannot be read the answer is `unreadable`, and why is kept for
  /// ``takeFailure(for:)``, so the caller reports it once it has left the lock.
  ///
  /// - Parameter boot: Reads the boot clock; called only for a scope whose refresh recorded a
  ///   boot-clock reading.
  func decision(
    _ key: String, scope: CacheScope, now: Date, boot: () -> BootInstant?, policy: OfflinePolicy
  ) -> AccessDecision {
    let resident = residents[scope.key]
    if let resident, !resident.needsReread {
      if resident.makeRecent(key) {
        return evaluate(
          resident, key, resident.recentFacts, now: now, boot: boot, policy: policy)
      }
      if resident.isComplete || !resident.hasSnapshot {
        return evaluate(resident, key, nil, now: now, boot: boot, policy: policy)
      }
    }
    do {
      // A scope read from disk with trust roots is read whole, to be checked against its signed
      // body. So is one asked for a key outside ASCII: memory and the in-memory cache look keys
      // up as Swift compares strings (a composed `é` and `e` with a combining accent are one
      // key), where the point read's SQL compares bytes and would miss the stored form. In
      // ASCII the two comparisons agree.
      if trustRoots != nil || !key.utf8.allSatisfy({ $0 < 0x80 }) {
        let read = try self.resident(scope, whole: false)
        let known = read.makeRecent(key)
        return evaluate(
          read, key, known ? read.recentFacts : nil, now: now, boot: boot, policy: policy)
      }
      let read = try readThrough(key, scope: scope, resident: resident)
      return evaluate(read, key, read.recentFacts, now: now, boot: boot, policy: policy)
    } catch {
      failures[scope.key] = (error, noteFailure(error, for: scope))
      return EntitlementEvaluator.unavailable(
        key, error.unavailableReason, clock: ClockReading(unstoredAt: now))
    }
  }

  /// Why the latest `unreadable` decision of each scope could not read the file, until taken;
  /// by scope, so two threads' failures are never reported under each other's scope.
  @exclusivity(unchecked) private var failures: [ScopeKey: (failure: ReadFailure, tell: Bool)] = [:]

  /// Whether some `unreadable` decision's failure has not been taken yet.
  var hasFailures: Bool { !failures.isEmpty }

  /// The failure behind the latest `unreadable` decision for `scope`, handed over once.
  func takeFailure(for scope: CacheScope) -> (failure: ReadFailure, tell: Bool)? {
    failures.removeValue(forKey: scope.key)
  }

  /// A resident holding every key of the scope (`whole`: and its details, the body and the
  /// bookkeeping the scope row leaves out), reading the file when memory does not.
  func resident(_ scope: CacheScope, whole: Bool) throws(ReadFailure) -> ResidentScope {
    if let resident = residents[scope.key], !resident.needsReread,
      whole ? resident.isWhole : resident.isComplete || !resident.hasRow
    {
      return resident
    }
    return try readResident(scope, whole: whole)
  }

  /// Reads `scope` from the file into a complete resident and installs it: `whole`, with its
  /// details; with trust roots, always whole and checked (``WholeScopeRead``).
  @discardableResult
  func readResident(_ scope: CacheScope, whole: Bool = false) throws(ReadFailure) -> ResidentScope {
    guard let reader else { throw noReaderFailure }
    var read: (scopeRow: ScopeRow?, entitlements: [String: EntitlementFacts])
    var details: ScopeDetails?
    let pendingWithoutRow: Bool
    do {
      if whole || trustRoots != nil {
        var wholeRead = try reader.wholeScope(
          scope, checking: trustRoots != nil, parsed: &parsedBodies)
        if let trustRoots {
          wholeRead.verify(for: scope, roots: trustRoots)
          if let row = wholeRead.scopeRow, row.snapshotFacts.decidedVerdict == .failed(.tampered) {
            let revision = row.version?.revision ?? 0
            if toldTampered[scope.key] != revision {
              toldTampered[scope.key] = revision
              noticed.append((.snapshotTampered, scope))
            }
          }
        }
        read = (wholeRead.scopeRow, wholeRead.entitlements)
        details = wholeRead.details
      } else {
        read = try reader.scope(scope)
      }
      pendingWithoutRow = read.scopeRow == nil ? try reader.hasUnsentPurchase(scope) : false
    } catch {
      throw .storage(error)
    }
    noteFileRead(scope.key)
    var scopeRow = read.scopeRow ?? .absent(pendingPurchase: pendingWithoutRow)
    do {
      // Done already by a checked read, which calls a block that does not decode tampering.
      if trustRoots == nil { try scopeRow.decodeDeviceBlock() }
    } catch {
      throw .snapshot(error)
    }
    let resident = ResidentScope(
      scopeRow: scopeRow, entitlements: read.entitlements, isComplete: true, details: details)
    residents.install(resident, for: scope.key)
    return resident
  }

  /// Evaluates one key of a resident, raising its read marks in memory.
  func evaluate(
    _ resident: ResidentScope, _ key: String, _ facts: EntitlementFacts?, now: Date,
    boot: () -> BootInstant?, policy: OfflinePolicy
  ) -> AccessDecision {
    guard resident.hasRow else {
      return EntitlementEvaluator.unavailable(
        key, .noSnapshot, clock: ClockReading(unstoredAt: now),
        pendingPurchase: resident.scopeRow.bookkeeping.hasPendingPurchase)
    }
    let clock = resident.clockReading(now: now, boot: boot, policy: policy)
    resident.recordRead(at: clock.effectiveDeviceNow, wallClock: now)
    guard resident.hasSnapshot else {
      return EntitlementEvaluator.unavailable(
        key, .noSnapshot, clock: clock,
        pendingPurchase: resident.scopeRow.bookkeeping.hasPendingPurchase)
    }
    return EntitlementEvaluator.decide(
      key, facts: facts, snapshot: resident.scopeRow.snapshotFacts,
      bookkeeping: resident.scopeRow.bookkeeping,
      clock: clock, policy: policy)
  }

  /// The resident that now holds `key` as its recent key: `resident` itself when the file
  /// still matches it.
  private func readThrough(
    _ key: String, scope: CacheScope, resident: ResidentScope?
  ) throws(ReadFailure) -> ResidentScope {
    guard let reader else { throw noReaderFailure }
    let read = try reader.point(key, of: scope, matching: resident)
    noteFileRead(scope.key)
    switch read {
    case .matched(let resident):
      return resident
    case .read(let fresh):
      residents.install(fresh, for: scope.key)
      return fresh
    }
  }
}
