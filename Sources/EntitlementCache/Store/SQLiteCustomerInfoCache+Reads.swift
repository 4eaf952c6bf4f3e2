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
    let version = otherConnectionsVersion()
    var failure: ReadFailure?
    let decision = reads.withLock { path in
      if let version { path.observe(dataVersion: version) }
      return path.decision(
        entitlement, scope: scope, now: now, boot: clock.bootInstant, policy: policy,
        failure: &failure)
    }
    if let failure { report(failure, for: scope, at: now) }
    return decision
  }

  /// The keys usable now, offline included. Empty when nothing usable can be read.
  public func activeEntitlementKeys(
    for scope: CacheScope, policy: OfflinePolicy? = nil
  ) -> Set<String> {
    let now = clock.now()
    let policy = policy ?? configuration.policy
    let version = otherConnectionsVersion()
    let keys = reads.withLock { path -> Result<Set<String>, ReadFailure> in
      if let version { path.observe(dataVersion: version) }
      let resident: ResidentScope
      do throws(ReadFailure) {
        resident = try path.completeResident(scope)
      } catch {
        return .failure(error)
      }
      var keys: Set<String> = []
      for (key, facts) in resident.entitlements
      where path.evaluate(
        resident, key, facts, now: now, boot: clock.bootInstant, policy: policy
      ).isGranted {
        keys.insert(key)
      }
      return .success(keys)
    }
    switch keys {
    case .success(let keys):
      return keys
    case .failure(let failure):
      report(failure, for: scope, at: now)
      return []
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
    if let read = try? reads.withLock({ path throws(ReadFailure) in
      try path.recordSnapshotRead(scope, now: now)
    }),
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
    let row = try reads.withLock { path throws(CacheError) in
      guard let reader = path.reader else { throw CacheError.closed }
      return try Self.readSnapshotRow(scope, on: reader)
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

  private static func readSnapshotRow(
    _ scope: CacheScope, on reader: SQLiteConnection
  ) throws(CacheError) -> (header: ScopeHeader, json: Data?)? {
    do {
      return try reader.withStatement(ScopeSQL.snapshotRead) { statement throws(SQLiteError) in
        try statement.bind(scope.key.bytes, at: 1)
        guard try statement.step() else { return nil }
        return (ScopeHeader(fullRow: statement), statement.data(SnapshotColumn.snapshot))
      }
    } catch {
      throw .storage(.load, error)
    }
  }

  /// Drops the memory-resident state of `scope`, so its next read goes to the file as it does
  /// after an invalidation. Read-time bookkeeping not yet persisted is kept.
  ///
  /// Apps never need this; the benchmarks use it to time the read-through path.
  package func dropResidentState(for scope: CacheScope) {
    reads.withLock { $0.residents.markForReread(scope.key) }
  }

  /// Asks the writer connection whether another connection committed, at most once per
  /// ``CacheConfiguration/crossProcessCheckInterval``: nil when no check is due or a write
  /// holds the writer right now (the next check asks); `.some(nil)` when the file could not be
  /// asked, which trusts nothing resident.
  ///
  /// The writer connection is used because its `data_version` ignores this cache's own
  /// commits, whose results are already installed in memory. It is asked before the read
  /// takes the reads lock, never while holding it: that is the lock order.
  func otherConnectionsVersion() -> Int64?? {
    guard watch.isDue else { return nil }
    let asked = writer.withLockIfAvailable { connection -> Int64? in
      guard let connection else { return nil }
      return try? connection.scalarInt("PRAGMA data_version")
    }
    // Busy or not, the attempt counts: retrying on every read while a write holds the lock
    // cost each read a failed try-lock, a system call, for as long as the write lasted. The
    // write is this cache's own, whose result memory holds; another process's commit meanwhile
    // is seen at the next check, one interval later.
    watch.checked()
    guard let asked else { return nil }
    return .some(asked)
  }

  /// Keeps why a read failed for ``lastReadFailure`` and hands it to
  /// ``CacheConfiguration/onReadFailure``; called with no lock held.
  func report(_ failure: ReadFailure, for scope: CacheScope, at now: Date) {
    let error: CacheError =
      switch failure {
      case .storage(let error): .storage(.load, error)
      case .snapshot(let error): .unreadableSnapshot(error)
      case .closed: .closed
      }
    let report = ReadFailureReport(scopeHashPrefix: scope.key.hexPrefix, error: error, at: now)
    readFailure.withLock { $0 = report }
    configuration.onReadFailure?(report)
  }
}
