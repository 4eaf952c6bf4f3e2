#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The reference ``CustomerInfoCache``: the rules of ``SQLiteCustomerInfoCache`` with memory
/// as its only storage.
///
/// It keeps one snapshot and its ``ScopeBookkeeping`` per scope and decides with the same
/// evaluator, on the same time model (<doc:TimeModel>): times are kept to the millisecond, a
/// successful refresh resets the device high-water mark, and every failed refresh and every
/// read raises it. For the same calls on the same clock it gives the same decisions, evaluated
/// CustomerInfo and ``load(_:)`` bookkeeping as the SQLite cache (once that one has persisted
/// what its reads raised: see below), so it can stand in for it wherever a file is in the way:
///
/// - An SDK's unit tests, which then need no temporary directory, with a `ManualClock` from
///   the `EntitlementCacheTesting` product to move time.
/// - SwiftUI previews, which show a screen in any entitlement state without a network or a
///   file.
///
/// ```swift
/// let clock = ManualClock(Date(timeIntervalSince1970: 1_796_040_000))
/// let cache = InMemoryCustomerInfoCache(clock: clock.cacheClock)
/// try cache.store(try CustomerInfoSnapshot(jsonData: proUntilTomorrow), for: scope)
/// cache.hasActiveEntitlement("pro", for: scope)  // true
/// clock.advance(by: .seconds(2 * 86_400))
/// cache.access(to: "pro", for: scope).state      // .denied(.expired), with no write between
/// ```
///
/// Nothing outlives the instance: there is no file, no retention and nothing to flush. Unlike
/// the SQLite cache, whose reads raise the high-water mark in memory and persist it with the
/// next write or ``SQLiteCustomerInfoCache/flush()``, ``load(_:)`` here shows a mark that
/// reads raised at once. A snapshot built in code is decided as its stored bytes read back,
/// to the millisecond, by every read (see ``store(_:for:)``).
///
/// Concurrency: every call takes one lock around a dictionary of scopes, and reads the clocks
/// before taking it, so a clock never runs under the lock.
package final class InMemoryCustomerInfoCache: CustomerInfoCache {
  /// The policy reads use when they do not pass one.
  package let policy: OfflinePolicy
  /// The largest snapshot ``store(_:for:)`` accepts, in bytes, as
  /// ``CacheConfiguration/snapshotSizeLimit`` is for the SQLite cache.
  package let snapshotSizeLimit: Int
  /// The clock every read and write uses.
  package let clock: CacheClock
  /// The pinned roots, as ``CacheConfiguration/trustRoots`` is for the SQLite cache: with them
  /// the library decides each snapshot's verification when it is stored. Nothing is read back
  /// from a file here, so nothing is checked again.
  package let trustRoots: TrustRoots?

  /// The scopes and the purchase queue, under one lock, so a read sees the scope and whether
  /// it has a purchase to post at one instant.
  let scopes = Locked(InMemoryState())
  /// Who ``observeWrites(_:)`` registered.
  let writeObservers = WriteObservers()
  /// Why ``policy`` is out of range, found once at init; nil when it is valid.
  private let policyError: CacheError?

  /// An empty cache.
  ///
  /// Unlike ``SQLiteCustomerInfoCache/init(path:configuration:clock:)`` it cannot fail, so a
  /// preview or a test builds one without `try`. Out-of-range values fail closed instead: a
  /// limit of zero or less rejects every snapshot, and a policy with a negative, infinite or
  /// NaN window makes every read that uses it answer as an out-of-range policy passed to one
  /// read does (see ``access(to:for:policy:)``).
  ///
  /// - Parameters:
  ///   - policy: The policy reads use when they do not pass one; by default
  ///     ``OfflinePolicy/conservative``, as ``CacheConfiguration/policy``.
  ///   - snapshotSizeLimit: The largest snapshot accepted, in bytes; by default
  ///     ``CustomerInfoSnapshot/defaultSizeLimit``, as ``CacheConfiguration/snapshotSizeLimit``.
  ///   - clock: The wall clock and, where there is one, the boot clock; by default
  ///     ``CacheClock/system``. Pass a `ManualClock`'s `cacheClock` in tests.
  ///   - trustRoots: The pinned roots; by default none, as ``CacheConfiguration/trustRoots``.
  ///     A policy that requires verified snapshots without them fails every read that uses it.
  package init(
    policy: OfflinePolicy = .conservative,
    snapshotSizeLimit: Int = CustomerInfoSnapshot.defaultSizeLimit,
    clock: CacheClock = .system,
    trustRoots: TrustRoots? = nil
  ) {
    self.policy = policy
    self.snapshotSizeLimit = snapshotSizeLimit
    self.clock = clock
    self.trustRoots = trustRoots
    if case .failure(let error) = Self.check(policy, trustRoots: trustRoots) {
      policyError = error
    } else {
      policyError = nil
    }
  }

  /// The policy a read uses: `policy` once it is checked, else the cache's own. A window out
  /// of range (NaN compares false with everything) would fail open, so it is an error.
  private func resolve(_ policy: OfflinePolicy?) -> Result<OfflinePolicy, CacheError> {
    guard let policy else {
      if let policyError { return .failure(policyError) }
      return .success(self.policy)
    }
    return Self.check(policy, trustRoots: trustRoots)
  }

  private static func check(
    _ policy: OfflinePolicy, trustRoots: TrustRoots?
  ) -> Result<OfflinePolicy, CacheError> {
    do {
      try policy.validate(prefix: "policy.", trustRoots: trustRoots)
      return .success(policy)
    } catch {
      return .failure(error)
    }
  }

  // MARK: Writes

  /// Stores `snapshot` for `scope` as a successful refresh now: the snapshot, its bookkeeping
  /// and a reset high-water mark change together. A failed refresh recorded earlier is
  /// cleared.
  ///
  /// What is kept is the snapshot, which is its bytes decoded, as a read of the SQLite cache's
  /// file gives them: a CustomerInfo built in code with dates finer than a millisecond is
  /// decided on its dates as encoded.
  ///
  /// - Parameters:
  ///   - snapshot: The server's validated snapshot.
  ///   - scope: The scope the request was made for, captured when it started.
  /// - Throws: ``CacheError/invalidSnapshot(_:)`` when the snapshot is over
  ///   the size limit given at ``init(policy:snapshotSizeLimit:clock:trustRoots:)`` or its
  ///   device access cannot be kept; the previous snapshot is then still readable.
  ///   With trust roots, ``CacheError/unverifiedSnapshot(_:)`` when it failed verification
  ///   and the stored snapshot is verified.
  package func store(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope) throws(CacheError) {
    if case .refusedUnverified(let failure?) = try write(snapshot, for: scope, conditional: false) {
      throw .unverifiedSnapshot(failure)
    }
  }

  /// Stores a server's answer unless that would take `scope` backwards (see
  /// ``CustomerInfoCache/storeAnswer(_:for:)``), decided under the same lock as the write.
  ///
  /// - Throws: ``CacheError/invalidSnapshot(_:)`` when the snapshot is over
  ///   the size limit given at ``init(policy:snapshotSizeLimit:clock:trustRoots:)`` or its
  ///   device access cannot be kept; the previous snapshot is then still readable.
  package func storeAnswer(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope)
    throws(CacheError) -> StoreOutcome
  {
    try write(snapshot, for: scope, conditional: true)
  }

  /// Stores `snapshot` unless the rule book (``ConditionalStore``) refuses it against what the
  /// scope holds under the lock: both rules when `conditional`, only "a failed verification
  /// never replaces a verified one" otherwise, as the SQLite cache decides.
  private func write(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope, conditional: Bool)
    throws(CacheError) -> StoreOutcome
  {
    // First, as the SQLite cache does: a body over the limit is neither hashed nor verified.
    let size = snapshot.jsonData.count
    guard size <= snapshotSizeLimit else {
      throw .invalidSnapshot(
        SnapshotError(path: "", problem: .tooLarge(size: size, limit: snapshotSizeLimit)))
    }
    // Kept to the millisecond, as the file keeps it, so both caches hold the same instants.
    let now = clock.now().truncatedToMilliseconds
    let boot = clock.bootInstant()?.truncatedToMilliseconds
    let digest = SHA256.hash(Array(snapshot.jsonData))
    let verdict = trustRoots.map { roots in
      // The scope's trusted server time, as the SQLite cache takes it (SnapshotTrust).
      let verified = scopes.withLock { scopes -> ScopeBookkeeping? in
        guard let stored = scopes[scope.key], stored.snapshot?.verdict == .verified else {
          return nil
        }
        return stored.bookkeeping
      }
      return SnapshotTrust.arrivalVerdict(
        snapshot, bodyDigest: digest, for: scope, roots: roots,
        serverNow: SnapshotTrust.arrivalServerTime(
          requestDate: snapshot.customerInfo.requestDate, now: now, verified: verified,
          boot: clock.bootInstant()))
    }
    let stored = try StoredSnapshot(snapshot, verdict: verdict, sha256: digest)
    let bookkeeping = ScopeBookkeeping(
      storedAt: now, serverTime: snapshot.customerInfo.requestDate, lastRefreshAttemptAt: now,
      deviceHighWaterMark: now, refreshBootInstant: boot, snapshotSize: size,
      snapshotSHA256: stored.sha256)
    let hasTrustRoots = trustRoots != nil
    let outcome = scopes.withLock { scopes -> StoreOutcome in
      let claims = scopes[scope.key].flatMap { current in
        current.snapshot.map { stored in
          StoredAnswer(
            requestDate: stored.snapshot.customerInfo.requestDate,
            claimed: stored.facts.verification, writerVerdict: stored.verdict,
            isImported: current.bookkeeping.origin.importedAt != nil)
        }
      }
      if let refusal = ConditionalStore.refusal(
        of: snapshot, verdict: verdict, over: claims, hasTrustRoots: hasTrustRoots,
        conditional: conditional, now: now)
      {
        return refusal
      }
      scopes[scope.key] = StoredScope(bookkeeping: bookkeeping, snapshot: stored)
      scopes.writes &+= 1
      return .stored
    }
    if outcome == .stored { writeObservers.notify() }
    return outcome
  }

  /// Records that a refresh attempt for `scope` failed now. Access is unchanged; evidence
  /// reads `offline` until the next successful refresh. With nothing stored yet, the scope
  /// then has bookkeeping but no snapshot.
  ///
  /// - Parameters:
  ///   - scope: The scope the failed request was for.
  ///   - reason: A short note for support engineers. Do not pass tokens or user IDs.
  package func recordRefreshFailure(for scope: CacheScope, reason: String? = nil)
    throws(CacheError)
  {
    let now = clock.now().truncatedToMilliseconds
    let boot = clock.bootInstant()
    defer { writeObservers.notify() }
    scopes.withLock { scopes in
      scopes.writes &+= 1
      guard var stored = scopes[scope.key] else {
        scopes[scope.key] = StoredScope(
          bookkeeping: ScopeBookkeeping(
            storedAt: nil, lastRefreshAttemptAt: now, lastRefreshFailedAt: now,
            lastRefreshFailureReason: reason, deviceHighWaterMark: now),
          snapshot: nil)
        return
      }
      // As the SQLite cache's upsert: the attempt is what happened last, even with a clock set
      // back; only the mark never moves back.
      stored.bookkeeping.lastRefreshAttemptAt = now
      stored.bookkeeping.lastRefreshFailedAt = now
      stored.bookkeeping.lastRefreshFailureReason = reason
      // To the device time a read now decides with: in the refresh's boot session, the boot
      // clock's, whatever the wall clock says (<doc:TimeModel>).
      stored.raiseMark(
        to: EntitlementEvaluator.effectiveDeviceTime(
          now: now, bookkeeping: stored.bookkeeping, bootInstant: boot))
      scopes[scope.key] = stored
    }
  }

  /// Deletes everything stored for `scope`, its high-water mark included.
  ///
  /// - Parameter scope: The scope to forget.
  package func remove(_ scope: CacheScope) throws(CacheError) {
    defer { writeObservers.notify() }
    scopes.withLock { scopes in
      scopes.removeValue(forKey: scope.key)
      scopes.writes &+= 1
    }
  }

  // MARK: Reads

  /// The stored snapshot and bookkeeping of `scope`, or nil when nothing is stored.
  ///
  /// The snapshot is the one stored, which is its bytes decoded, as the SQLite cache reads it
  /// from its file. The high-water mark includes what reads have raised.
  ///
  /// - Parameter scope: The scope to read.
  /// - Throws: Nothing here: with no file, nothing stored can become unreadable. The protocol
  ///   lets other caches throw.
  package func load(_ scope: CacheScope) throws(CacheError) -> CachedCustomerInfo? {
    guard let stored = scopes.withLock({ $0[scope.key] }) else { return nil }
    guard let snapshot = stored.snapshot else {
      return CachedCustomerInfo(snapshot: nil, bookkeeping: stored.bookkeeping)
    }
    return CachedCustomerInfo(
      snapshot: snapshot.snapshot, bookkeeping: stored.bookkeeping, verdict: snapshot.verdict)
  }

  /// The decision for one entitlement now, re-evaluated against the clock. Raises the scope's
  /// high-water mark to the device time the decision used.
  ///
  /// - Parameters:
  ///   - entitlement: The entitlement key, such as `pro`.
  ///   - scope: The scope to read.
  ///   - policy: The policy for this read; nil for the cache's own policy.
  /// - Returns: `offlineUnavailable(.noSnapshot)` when nothing is stored, and
  ///   `offlineUnavailable(.unreadable)` when the policy is out of range: fail-closed, and
  ///   distinct from `denied`.
  package func access(
    to entitlement: String, for scope: CacheScope, policy: OfflinePolicy? = nil
  ) -> AccessDecision {
    let now = clock.now()
    guard case .success(let policy) = resolve(policy) else {
      return EntitlementEvaluator.unavailable(
        entitlement, .unreadable, clock: ClockReading(unstoredAt: now))
    }
    let boot = clock.bootInstant()
    return scopes.withLock { scopes in
      guard var stored = scopes[scope.key] else {
        return EntitlementEvaluator.unavailable(
          entitlement, .noSnapshot, clock: ClockReading(unstoredAt: now),
          pendingPurchase: scopes.purchases.hasUnsentEntry(scope.key))
      }
      let reading = stored.clockReading(now: now, boot: boot, policy: policy)
      stored.raiseMark(to: reading.effectiveDeviceNow)
      scopes[scope.key] = stored
      return stored.decide(entitlement, clock: reading, policy: policy)
    }
  }

  /// The keys usable now, offline included: those whose ``access(to:for:policy:)`` is
  /// granted. Empty when nothing is stored or the policy is out of range.
  ///
  /// - Parameters:
  ///   - scope: The scope to read.
  ///   - policy: The policy for this read; nil for the cache's own policy.
  package func activeEntitlementKeys(
    for scope: CacheScope, policy: OfflinePolicy? = nil
  ) -> Set<String> {
    let now = clock.now()
    guard case .success(let policy) = resolve(policy) else { return [] }
    let boot = clock.bootInstant()
    return scopes.withLock { scopes in
      guard var stored = scopes[scope.key], let snapshot = stored.snapshot else { return [] }
      var keys: Set<String> = []
      // Key by key, each a read, as the SQLite cache evaluates them: a snapshot without keys
      // is then no read at all, and raises no mark there either.
      for key in snapshot.entitlements.keys {
        let reading = stored.clockReading(now: now, boot: boot, policy: policy)
        stored.raiseMark(to: reading.effectiveDeviceNow)
        if stored.decide(key, clock: reading, policy: policy).isGranted { keys.insert(key) }
      }
      scopes[scope.key] = stored
      return keys
    }
  }

  /// The stored CustomerInfo re-evaluated now, or nil when no snapshot is stored. Raises the
  /// scope's high-water mark to the device time the evaluation used.
  ///
  /// - Parameters:
  ///   - scope: The scope to read.
  ///   - policy: The policy for this read; nil for the cache's own policy.
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` for a policy out of range.
  package func evaluatedCustomerInfo(
    for scope: CacheScope, policy: OfflinePolicy? = nil
  ) throws(CacheError) -> EvaluatedCustomerInfo? {
    let now = clock.now()
    let policy = try resolve(policy).get()
    let boot = clock.bootInstant()
    let read = try scopes.withLock {
      scopes throws(CacheError) -> ViewInput? in
      guard var stored = scopes[scope.key], let snapshot = stored.snapshot else { return nil }
      let info = snapshot.snapshot.customerInfo
      // The view is evaluated with the mark as it was before this read, as a key's decision is.
      let bookkeeping = stored.bookkeeping
      let reading = stored.clockReading(now: now, boot: boot, policy: policy)
      // The effective time, not the wall clock: in the refresh's boot session it is what the
      // boot clock measured, which a reboot must not take back (ClockReading).
      stored.raiseMark(to: reading.effectiveDeviceNow)
      scopes[scope.key] = stored
      return (
        info, bookkeeping, bookkeeping.refreshBootInstant == nil ? nil : boot, snapshot.verdict
      )
    }
    guard let read else { return nil }
    return EntitlementEvaluator.evaluate(
      read.info, verdict: read.verdict, bookkeeping: read.bookkeeping, now: now,
      bootInstant: read.boot, policy: policy)
  }
}

/// What an evaluated view is computed from, taken under the lock and evaluated outside it.
private typealias ViewInput = (
  info: CustomerInfo, bookkeeping: ScopeBookkeeping, boot: BootInstant?, verdict: TrustVerdict?
)

extension InMemoryCustomerInfoCache: CustomerInfoChangeSignaling {
  /// The number of writes so far: a snapshot stored, a failed refresh, a removal, a purchase
  /// queued or changed. This cache is one process's memory, so nothing else writes it.
  package func changeMark() -> UInt64? {
    scopes.withLock { $0.writes }
  }

  /// Calls `observer` after every write: a snapshot stored, a failed refresh recorded, a
  /// removal, a purchase queued or changed.
  package func observeWrites(_ observer: @escaping @Sendable () -> Void) -> WriteObservation {
    writeObservers.add(observer)
  }
}
