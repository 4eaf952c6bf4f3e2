#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension SQLiteCustomerInfoCache {
  /// The decision for one entitlement now, re-evaluated against the clock.
  ///
  /// From memory after the scope's first read: one lock, one table probe and the
  /// evaluation. The first read of a scope, or of a key not yet seen, costs one prepared
  /// statement. Never throws: a storage failure answers `offlineUnavailable(.unreadable)`.
  public func access(
    to entitlement: String, for scope: CacheScope, policy: OfflinePolicy? = nil
  ) -> AccessDecision {
    let now = clock.now()
    let policy = policy ?? configuration.policy
    return reads.withLock { state in
      revalidateIfDue(state)
      return state.decision(
        entitlement, scope: scope, now: now, boot: clock.bootInstant, policy: policy)
    }
  }

  /// The keys usable now, offline included. Empty when nothing usable can be read.
  public func activeEntitlementKeys(
    for scope: CacheScope, policy: OfflinePolicy? = nil
  ) -> Set<String> {
    let now = clock.now()
    let policy = policy ?? configuration.policy
    return reads.withLock { state in
      revalidateIfDue(state)
      guard let resident = try? state.completeResident(scope) else { return [] }
      var keys: Set<String> = []
      for (key, facts) in resident.entitlements
      where state.evaluate(
        resident, key, facts, now: now, boot: clock.bootInstant, policy: policy
      ).isGranted {
        keys.insert(key)
      }
      return keys
    }
  }

  /// The stored CustomerInfo re-evaluated now, or nil when no snapshot is stored.
  ///
  /// - Throws: ``CacheError/storage(_:_:)`` when the file cannot be read;
  ///   ``CacheError/unreadableSnapshot(_:)`` when the stored bytes no longer decode.
  public func evaluatedCustomerInfo(
    for scope: CacheScope, policy: OfflinePolicy? = nil
  ) throws(CacheError) -> EvaluatedCustomerInfo? {
    let now = clock.now()
    let policy = policy ?? configuration.policy
    guard let cached = try load(scope), let snapshot = cached.snapshot else { return nil }
    // Like access(to:), this read raises the high-water mark in memory, and evaluates against
    // the mark earlier reads raised, which the file may not have yet: when the resident holds
    // the same refresh as the row just loaded (another process may have written between).
    var bookkeeping = cached.bookkeeping
    if let read = reads.withLock({ $0.recordSnapshotRead(scope, now: now) }),
      read.storedAt == bookkeeping.storedAt, read.serverTime == bookkeeping.serverTime
    {
      bookkeeping.deviceHighWaterMark = max(bookkeeping.deviceHighWaterMark, read.highWaterMark)
    }
    return EntitlementEvaluator.evaluate(
      snapshot.customerInfo, bookkeeping: bookkeeping, now: now,
      bootInstant: bookkeeping.refreshBootInstant == nil ? nil : clock.bootInstant(),
      policy: policy)
  }

  /// The stored snapshot and bookkeeping of `scope`, read from the file.
  public func load(_ scope: CacheScope) throws(CacheError) -> CachedCustomerInfo? {
    let row: (header: ScopeHeader, json: Data?)?
    do {
      row = try reads.withLock { state throws(SQLiteError) in
        try state.reader.withStatement(ScopeSQL.snapshotRead) { statement throws(SQLiteError) in
          try statement.bind(scope.key.bytes, at: 1)
          guard try statement.step() else { return nil }
          return (ScopeHeader(fullRow: statement), statement.data(SnapshotColumn.snapshot))
        }
      }
    } catch {
      throw .storage(.load, error)
    }
    guard let row else { return nil }
    guard let json = row.json else {
      return CachedCustomerInfo(snapshot: nil, bookkeeping: row.header.bookkeeping)
    }
    do {
      let snapshot = try CustomerInfoSnapshot(
        jsonData: json, sizeLimit: Int.max)  // the cap was checked when it was stored
      return CachedCustomerInfo(snapshot: snapshot, bookkeeping: row.header.bookkeeping)
    } catch {
      throw .unreadableSnapshot(error)
    }
  }

  /// Drops the memory-resident state of `scope`, so its next read goes to the file as it does
  /// after an invalidation. Read-time bookkeeping not yet persisted is kept.
  ///
  /// Apps never need this; the benchmarks use it to time the read-through path.
  package func dropResidentState(for scope: CacheScope) {
    reads.withLock { $0.dropResident(scope.key) }
  }

  /// Asks the writer connection whether another connection committed, at most once per
  /// ``CacheConfiguration/crossProcessCheckInterval``.
  ///
  /// The writer connection is used because its `data_version` ignores this cache's own
  /// commits, whose results are already installed in memory. If a write holds it right now,
  /// the check waits for the next read rather than blocking this one.
  func revalidateIfDue(_ state: ReadState) {
    guard state.isCheckDue else { return }
    let version = writer.withLockIfAvailable { connection in
      try? connection.scalarInt("PRAGMA data_version")
    }
    guard let version else { return }
    guard let version else {
      // The file could not be asked; trust nothing resident.
      state.dropAllResidents()
      return
    }
    state.observe(dataVersion: version)
  }
}
