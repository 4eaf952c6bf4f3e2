import EntitlementCache
import Foundation

/// A `CustomerInfoCache` kept in a dictionary, built on the library's public API alone: it
/// decides with `EntitlementEvaluator`, stores answers by `StoreOutcome`'s rule book, imports a
/// previous cache's snapshot by `SnapshotImport`'s rule, checks every policy before reading
/// with it, and passes the conformance kit.
///
/// Nothing outlives the instance. It keeps no purchase queue, so a client over it posts no
/// purchases, and it has no trust roots: a snapshot's verification is the body's claim.
public final class DictionaryCustomerInfoCache: CustomerInfoCache, CustomerInfoChangeSignaling,
  CustomerInfoImporting
{
  /// The clock every read and write uses.
  public let clock: CacheClock
  /// The policy reads use when they pass none.
  public let policy: OfflinePolicy
  /// The largest snapshot stored, in bytes; nil for no cap.
  public let snapshotSizeLimit: Int?

  /// A scope's snapshot and bookkeeping; a failed refresh before any snapshot has no snapshot.
  private struct Entry {
    var snapshot: CustomerInfoSnapshot?
    var bookkeeping: ScopeBookkeeping
  }

  private struct State {
    var entries: [CacheScope: Entry] = [:]
    var writes: UInt64 = 0

    mutating func put(
      _ snapshot: CustomerInfoSnapshot, for scope: CacheScope, now: Date, boot: BootInstant?
    ) {
      let bookkeeping = ScopeBookkeeping(
        storedAt: now, serverTime: snapshot.customerInfo.requestDate, lastRefreshAttemptAt: now,
        deviceHighWaterMark: now, refreshBootInstant: boot, snapshotSize: snapshot.jsonData.count)
      entries[scope] = Entry(snapshot: snapshot, bookkeeping: bookkeeping)
      writes += 1
    }

    /// Raises the scope's high-water mark to the device time the read decided with: not to the
    /// wall clock, or a clock set back across a reboot would reopen access a read saw end.
    mutating func raiseMark(
      of scope: CacheScope, now: Date, boot: BootInstant?, policy: OfflinePolicy
    ) {
      guard var entry = entries[scope] else { return }
      let seen = EntitlementEvaluator.effectiveDeviceTime(
        now: now, bookkeeping: entry.bookkeeping, bootInstant: boot, policy: policy)
      entry.bookkeeping.deviceHighWaterMark = max(entry.bookkeeping.deviceHighWaterMark, seen)
      entries[scope] = entry
    }
  }

  private let state = LockedValue(State())

  /// An empty cache.
  ///
  /// - Throws: `CacheError.invalidConfiguration` for a policy out of range.
  public init(
    clock: CacheClock = .system, policy: OfflinePolicy = .conservative,
    snapshotSizeLimit: Int? = CustomerInfoSnapshot.defaultSizeLimit
  ) throws(CacheError) {
    try policy.validate(trustRoots: nil)
    self.clock = clock
    self.policy = policy
    self.snapshotSizeLimit = snapshotSizeLimit
  }

  // MARK: Writes

  /// Stores `snapshot` as a successful refresh now, replacing whatever `scope` held.
  public func store(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope) throws(CacheError) {
    try checkSize(snapshot)
    let (now, boot) = (clock.now(), clock.bootInstant())
    state.withLock { $0.put(snapshot, for: scope, now: now, boot: boot) }
  }

  /// Stores a server's answer unless that would take `scope` backwards, decided under the
  /// same lock as the write.
  public func storeAnswer(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope)
    throws(CacheError) -> StoreOutcome
  {
    try checkSize(snapshot)
    let (now, boot) = (clock.now(), clock.bootInstant())
    return state.withLock { state in
      let stored = state.entries[scope].map {
        CachedCustomerInfo(snapshot: $0.snapshot, bookkeeping: $0.bookkeeping)
      }
      let outcome = StoreOutcome.deciding(snapshot, over: stored, at: now)
      if outcome == .stored { state.put(snapshot, for: scope, now: now, boot: boot) }
      return outcome
    }
  }

  // AdoptingOnAnInstalledBase.md, a cache of your own: begin
  /// Stores a previous cache's snapshot as of its save, only into a scope that holds no
  /// snapshot, decided under the same lock as the write.
  public func importSnapshot(_ request: SnapshotImport, for scope: CacheScope) throws(CacheError)
    -> ImportOutcome
  {
    try checkSize(request.snapshot)
    let (now, boot) = (clock.now(), clock.bootInstant())
    return state.withLock { state in
      let existing = state.entries[scope]
      guard existing?.snapshot == nil else { return .scopeAlreadyFilled }
      do throws(ImportRefusal) {
        // Over what a failed refresh left, so its high-water mark is kept; with the policy
        // reads use when they pass none.
        let bookkeeping = try request.bookkeeping(
          at: now, bootInstant: boot, over: existing?.bookkeeping, policy: policy)
        state.entries[scope] = Entry(snapshot: request.snapshot, bookkeeping: bookkeeping)
        state.writes += 1
        return .imported
      } catch {
        return .refused(error)
      }
    }
  }
  // AdoptingOnAnInstalledBase.md, a cache of your own: end

  /// Records a failed refresh now; the snapshot and its access stay as they were. The mark
  /// rises as a read's does, to the device time a read now decides with: in the refresh's boot
  /// session the boot clock's, so a wall clock set forward there is no time seen.
  public func recordRefreshFailure(for scope: CacheScope, reason: String?) throws(CacheError) {
    let (now, boot) = (clock.now(), clock.bootInstant())
    state.withLock { state in
      var entry =
        state.entries[scope]
        ?? Entry(snapshot: nil, bookkeeping: ScopeBookkeeping(storedAt: nil))
      entry.bookkeeping.lastRefreshAttemptAt = now
      entry.bookkeeping.lastRefreshFailedAt = now
      entry.bookkeeping.lastRefreshFailureReason = reason
      let seen = EntitlementEvaluator.effectiveDeviceTime(
        now: now, bookkeeping: entry.bookkeeping, bootInstant: boot)
      entry.bookkeeping.deviceHighWaterMark = max(entry.bookkeeping.deviceHighWaterMark, seen)
      state.entries[scope] = entry
      state.writes += 1
    }
  }

  /// Forgets everything stored for `scope`.
  public func remove(_ scope: CacheScope) throws(CacheError) {
    state.withLock { state in
      state.entries[scope] = nil
      state.writes += 1
    }
  }

  // MARK: Reads

  /// The stored snapshot and bookkeeping of `scope`, or nil when nothing is stored.
  public func load(_ scope: CacheScope) throws(CacheError) -> CachedCustomerInfo? {
    state.withLock { state in
      state.entries[scope].map {
        CachedCustomerInfo(snapshot: $0.snapshot, bookkeeping: $0.bookkeeping)
      }
    }
  }

  /// The decision for `entitlement` now; `offlineUnavailable(.unreadable)` for a policy out of
  /// range.
  public func access(to entitlement: String, for scope: CacheScope, policy: OfflinePolicy?)
    -> AccessDecision
  {
    let (now, boot) = (clock.now(), clock.bootInstant())
    let policy = policy ?? self.policy
    guard (try? policy.validate(trustRoots: nil)) != nil else {
      var decision = EntitlementEvaluator.decision(
        for: entitlement, in: nil, bookkeeping: nil, now: now)
      decision.state = .offlineUnavailable(.unreadable)
      return decision
    }
    return state.withLock { state in
      let entry = state.entries[scope]
      let decision = EntitlementEvaluator.decision(
        for: entitlement, in: entry?.snapshot?.customerInfo, bookkeeping: entry?.bookkeeping,
        now: now, bootInstant: boot, policy: policy)
      state.raiseMark(of: scope, now: now, boot: boot, policy: policy)
      return decision
    }
  }

  /// The keys usable now; empty for a policy out of range.
  public func activeEntitlementKeys(for scope: CacheScope, policy: OfflinePolicy?) -> Set<String> {
    let evaluated = try? evaluatedCustomerInfo(for: scope, policy: policy)
    return evaluated?.activeEntitlementKeys ?? []
  }

  /// The stored CustomerInfo re-evaluated now, or nil when no snapshot is stored.
  ///
  /// - Throws: `CacheError.invalidConfiguration` for a policy out of range.
  public func evaluatedCustomerInfo(for scope: CacheScope, policy: OfflinePolicy?)
    throws(CacheError) -> EvaluatedCustomerInfo?
  {
    let (now, boot) = (clock.now(), clock.bootInstant())
    let policy = policy ?? self.policy
    try policy.validate(trustRoots: nil)
    return state.withLock { state -> EvaluatedCustomerInfo? in
      guard let entry = state.entries[scope], let snapshot = entry.snapshot else { return nil }
      let evaluated = EntitlementEvaluator.evaluate(
        snapshot.customerInfo, bookkeeping: entry.bookkeeping, now: now, bootInstant: boot,
        policy: policy)
      state.raiseMark(of: scope, now: now, boot: boot, policy: policy)
      return evaluated
    }
  }

  /// The number of writes so far: only this instance writes its dictionary.
  public func changeMark() -> UInt64? { state.withLock { $0.writes } }

  private func checkSize(_ snapshot: CustomerInfoSnapshot) throws(CacheError) {
    let size = snapshot.jsonData.count
    if let limit = snapshotSizeLimit, size > limit {
      throw .invalidSnapshot(SnapshotError(path: "", problem: .tooLarge(size: size, limit: limit)))
    }
  }
}
