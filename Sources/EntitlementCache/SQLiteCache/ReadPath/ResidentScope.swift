#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// One scope held in memory after its first read, so later reads cost a dictionary lookup
/// and a re-evaluation against the clock.
///
/// Owned by ``ResidentScopes`` and touched only under the reads lock; a class so the hot path
/// mutates the read-time bookkeeping in place after a single dictionary lookup. Its variables
/// are `@exclusivity(unchecked)`, as ``ScopeReader``'s are: the lock already guarantees what
/// the runtime's check would test on every read.
final class ResidentScope {
  // Stored properties are laid out in declaration order: what every hot read touches comes
  // first, so with many scopes resident a read brings in few cache lines.

  /// The latest device time seen since the scope's last successful refresh, raised by reads
  /// in memory and persisted lazily (<doc:Storage#Bookkeeping>).
  @exclusivity(unchecked) var highWaterMark: Date
  @exclusivity(unchecked) var lastUsedAt: Date
  /// Set when the scope must be read from the file again (a write here changed the row only
  /// partly in memory, or a caller asked): the resident stays in place, with its unpersisted
  /// read marks, until the next read replaces it.
  @exclusivity(unchecked) var needsReread = false
  /// The key asked most recently and its facts: an app asks about the same key on every
  /// screen, and this answers it without hashing the key or visiting the dictionary's storage.
  @exclusivity(unchecked) private var recentKey: String?
  @exclusivity(unchecked) private(set) var recentFacts = EntitlementFacts()
  /// Whether the recent key is in ``entitlements`` too. A key read through is held only here
  /// until another key takes its place, which spares a scope read for one key (the common
  /// case) building a dictionary.
  @exclusivity(unchecked) private var recentIsStored = true
  /// The row as read: a decision borrows its bookkeeping and snapshot facts where they are.
  /// Held whole so a read-through moves it in without copying its parts.
  let scopeRow: ScopeRow
  /// The facts of each key read so far, except perhaps the recent one (see
  /// ``recentIsStored``); every key of the snapshot when ``isComplete``. A key the snapshot
  /// does not mention maps to empty facts, which decide `notEntitled`.
  @exclusivity(unchecked) private(set) var entitlements: [String: EntitlementFacts]
  /// Every key of the snapshot is in ``entitlements``.
  @exclusivity(unchecked) var isComplete: Bool
  @exclusivity(unchecked) var persistedHighWaterMark: Date
  @exclusivity(unchecked) var persistedLastUsedAt: Date
  /// The refresh's clock offset in whole seconds, computed once: the scope row never changes.
  let clockOffset: Int?
  /// The body and the bookkeeping the scope row leaves out, for the same version of the row: set
  /// by a read of the whole scope or by the write that stored it, so a read of the whole
  /// CustomerInfo decodes the body once per stored snapshot, not once per read. Nil until then.
  @exclusivity(unchecked) var details: ScopeDetails?
  /// How a whole evaluation lays out this scope's keys, built by the first and kept: a
  /// resident's keys and facts never change.
  @exclusivity(unchecked) private var plan: EvaluationPlan?

  /// Takes `scopeRow` over: consumed, so it moves in rather than being copied.
  init(
    scopeRow: consuming ScopeRow, entitlements: consuming [String: EntitlementFacts],
    isComplete: Bool, details: ScopeDetails? = nil
  ) {
    let hasRow = scopeRow.version != nil
    highWaterMark = hasRow ? scopeRow.bookkeeping.deviceHighWaterMark : .distantPast
    lastUsedAt = scopeRow.lastUsedAt
    persistedHighWaterMark = highWaterMark
    persistedLastUsedAt = lastUsedAt
    clockOffset = scopeRow.bookkeeping.clockOffsetSeconds
    self.scopeRow = consume scopeRow
    self.entitlements = entitlements
    self.isComplete = isComplete
    self.details = details
  }

  /// A resident of the scope row a point read just stepped to, holding no key yet; fails with a
  /// snapshot error, not a storage one, when the row's device block does not decode.
  convenience init(pointRead row: SQLiteStatement) throws(SnapshotError) {
    self.init(scopeRow: try ScopeRow(decoding: row), entitlements: [:], isComplete: false)
  }

  /// Records a read that decided at the device time `effectiveNow`, the wall clock reading
  /// `now`: both marks only move forward. The last use is the later of the two, as it was
  /// before the boot clock's session stopped counting the wall clock (retention and the
  /// least-recently-used order go by the wall clock); the mark is the decision's time alone.
  func recordRead(at effectiveNow: Date, wallClock now: Date) {
    let used = max(effectiveNow, now)
    guard effectiveNow > highWaterMark || used > lastUsedAt else { return }
    // Floored to the millisecond, as the file keeps them: a mark held only here decides as the
    // same mark read back from the file does, so a decision never changes at a flush or a
    // reopen. A mark a fraction of a millisecond ahead of the clock read as a rollback with no
    // tolerance, and moved the server's estimated time, until it was persisted.
    let time = effectiveNow.truncatedToMilliseconds
    if time > highWaterMark { highWaterMark = time }
    let usedTime = used.truncatedToMilliseconds
    if usedTime > lastUsedAt { lastUsedAt = usedTime }
  }

  /// Takes over read marks that an older resident, or a dropped one, raised and did not
  /// persist: the file's marks may be behind what reads here have already seen. The high-water
  /// mark carries over only within one refresh: a successful refresh since reset it
  /// (<doc:TimeModel>).
  func carryForward(_ marks: ReadMarks?) {
    guard let marks else { return }
    if marks.refreshRevision == scopeRow.refreshRevision, marks.highWaterMark > highWaterMark {
      highWaterMark = marks.highWaterMark
    }
    if marks.lastUsedAt > lastUsedAt { lastUsedAt = marks.lastUsedAt }
  }

  /// Records that `marks` reached the file.
  func markPersisted(_ marks: ReadMarks) {
    if marks.refreshRevision == scopeRow.refreshRevision {
      persistedHighWaterMark = max(persistedHighWaterMark, marks.highWaterMark)
    }
    persistedLastUsedAt = max(persistedLastUsedAt, marks.lastUsedAt)
  }

  /// This resident's read marks, persisted or not.
  var marks: ReadMarks {
    ReadMarks(
      highWaterMark: highWaterMark, lastUsedAt: lastUsedAt,
      refreshRevision: scopeRow.refreshRevision)
  }

  /// Makes `key` the recent key when it has been read; false when it has not.
  ///
  /// The caller then passes ``recentFacts`` straight to the evaluator: returning the facts as
  /// an optional would copy them, and destroy the copy, through the generic optional witnesses.
  func makeRecent(_ key: String) -> Bool {
    if recentKey == key { return true }
    guard let facts = entitlements[key] else { return false }
    storeRecent()
    recentKey = key
    recentFacts = facts
    recentIsStored = true
    return true
  }

  /// Adds the facts of a key just read through and makes it the recent key.
  func addReadThrough(_ key: String, _ facts: consuming EntitlementFacts) {
    storeRecent()
    recentKey = key
    recentFacts = facts
    recentIsStored = false
  }

  /// Moves the recent key's facts into ``entitlements`` before the slot is reused.
  private func storeRecent() {
    guard !recentIsStored, let recentKey else { return }
    entitlements[recentKey] = recentFacts
    recentIsStored = true
  }

  /// The row holds a snapshot, not only bookkeeping.
  var hasSnapshot: Bool { scopeRow.hasSnapshot }

  /// The file has a row for the scope, with or without a snapshot.
  var hasRow: Bool { scopeRow.version != nil }

  /// The snapshot-wide facts; nil when the file holds no snapshot for the scope.
  var snapshot: SnapshotFacts? { scopeRow.facts }

  /// The plan of a whole evaluation of `info`, this scope's stored CustomerInfo.
  func evaluationPlan(for info: CustomerInfo) -> EvaluationPlan {
    if let plan { return plan }
    let built = EvaluationPlan(keys: info.entitlements.keys, facts: entitlements)
    plan = built
    return built
  }

  /// Holds every key and the details: what a read of the whole CustomerInfo needs. A scope
  /// without a row needs nothing more.
  var isWhole: Bool { !hasRow || (isComplete && details != nil) }

  /// Read marks not yet in the file.
  var unpersistedMarks: ReadMarks? {
    guard hasRow,
      highWaterMark > persistedHighWaterMark || lastUsedAt > persistedLastUsedAt
    else { return nil }
    return marks
  }

  /// Whether a read that saw `version` (nil: no row) saw what this resident holds; the version
  /// is not read from the row at all when this resident must be read again anyway.
  func matches(_ version: @autoclosure () -> RowVersion?) -> Bool {
    !needsReread && scopeRow.version == version()
  }
}

extension ResidentScope {
  /// The clocks read for this scope now, with the high-water mark reads here have raised.
  ///
  /// - Parameter boot: Read only when the refresh recorded a boot-clock reading: most scopes
  ///   spare the hot read a second clock call. It runs under the reads lock, so an injected
  ///   boot clock must not call back into the cache.
  @inline(__always) func clockReading(
    now: Date, boot: () -> BootInstant?, policy: OfflinePolicy
  ) -> ClockReading {
    var bootElapsed: TimeInterval?
    // A reading that is not a finite number (a broken injected clock) counts as none: NaN would
    // make every comparison false and freeze the estimate at requestDate.
    if let refreshBoot = scopeRow.bookkeeping.refreshBootInstant, let current = boot(),
      let elapsed = refreshBoot.elapsed(until: current), elapsed.isFinite
    {
      bootElapsed = elapsed
    }
    return ClockReading(
      now: now, deviceHighWaterMark: highWaterMark, storedAt: scopeRow.bookkeeping.storedAt,
      serverTime: scopeRow.bookkeeping.serverTime, bootElapsed: bootElapsed,
      clockOffset: clockOffset, tolerance: policy.clockRollbackTolerance)
  }
}
