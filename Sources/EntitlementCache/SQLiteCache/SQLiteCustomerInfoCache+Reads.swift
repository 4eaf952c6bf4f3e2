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
  /// statement. Never throws: a file that cannot be opened or read yet answers
  /// `offlineUnavailable(.storageUnavailable)`, a newer build's file this one does not read
  /// `offlineUnavailable(.newerSchema)`, any other storage failure
  /// `offlineUnavailable(.unreadable)`.
  public func access(
    to entitlement: String, for scope: CacheScope, policy: OfflinePolicy? = nil
  ) -> AccessDecision {
    let decision = decide(entitlement, for: scope, policy: policy)
    // A file that could not be opened yet is tried again here, at most every two seconds:
    // only reads that found no file pay for it.
    if case .offlineUnavailable(.storageUnavailable) = decision.state,
      retryAwaitedStorageForRead()
    {
      return decide(entitlement, for: scope, policy: policy)
    }
    return decision
  }

  private func decide(
    _ entitlement: String, for scope: CacheScope, policy: OfflinePolicy?
  ) -> AccessDecision {
    let now = clock.now()
    var rules = configuration.policy
    if let policy {
      // Checked per call: a NaN or negative window would fail open.
      if case .failure(let error) = resolve(policy) {
        reportInvalid(error, for: scope, at: now)
        return EntitlementEvaluator.unavailable(
          entitlement, .unreadable, clock: ClockReading(unstoredAt: now))
      }
      rules = policy
    }
    // The due test inline: the hot read pays a clock read and a load, not a call.
    let version = watch.isDue ? otherConnectionsVersion() : nil
    var noticed: [(DiagnosticEvent, CacheScope?)]?
    let decision = reads.withLock { path in
      if let version {
        path.observe(dataVersion: version.dataVersion, writerSerial: version.writer)
      }
      let decision = path.decision(
        entitlement, scope: scope, now: now, boot: clock.bootInstant, policy: rules)
      // Only a read that went to the file notices anything: the hot read tests a count.
      noticed = path.takeNoticed()
      return decision
    }
    tell(noticed)
    // Only an answer that could not read has a failure to report; the hot read tests the
    // state's tag.
    if case .offlineUnavailable(let reason) = decision.state,
      reason == .unreadable || reason == .storageUnavailable || reason == .newerSchema,
      let (failure, tell) = reads.withLock({ $0.takeFailure(for: scope) })
    {
      report(failure, for: scope, at: now, telling: tell)
    }
    return decision
  }

  /// The keys usable now, offline included. Empty when nothing usable can be read.
  public func activeEntitlementKeys(
    for scope: CacheScope, policy: OfflinePolicy? = nil
  ) -> Set<String> {
    let now = clock.now()
    let rules: OfflinePolicy
    switch resolve(policy) {
    case .success(let resolved): rules = resolved
    case .failure(let error):
      reportInvalid(error, for: scope, at: now)
      return []
    }
    var keys: Set<String> = []
    let failure = withResident(scope, whole: false, at: now) { path, resident in
      for (key, facts) in resident.entitlements
      where path.evaluate(
        resident, key, facts, now: now, boot: clock.bootInstant, policy: rules
      ).isGranted {
        keys.insert(key)
      }
    }
    return failure == nil ? keys : []
  }

  /// The stored CustomerInfo re-evaluated now, or nil when no snapshot is stored.
  ///
  /// From memory, as ``access(to:for:policy:)`` is: the same facts decide each key, and the
  /// body is decoded once per stored snapshot (by the first such read, or taken from the write
  /// that stored it), never once per read. With trust roots, a read from the file is checked
  /// first, as every read from disk is.
  ///
  /// - Throws: ``CacheError/storage(_:_:)`` when the file cannot be read;
  ///   ``CacheError/unreadableSnapshot(_:)`` when the stored bytes no longer decode;
  ///   ``CacheError/invalidConfiguration(field:problem:)`` for a policy out of range.
  public func evaluatedCustomerInfo(
    for scope: CacheScope, policy: OfflinePolicy? = nil
  ) throws(CacheError) -> EvaluatedCustomerInfo? {
    let now = clock.now()
    let rules = try resolve(policy).get()
    // Set under the lock, rather than returned through it: a generic result copies every
    // part of the reading through the runtime's witnesses.
    var reading: WholeReading?
    let failure = withResident(scope, whole: true, at: now) { _, resident throws(ReadFailure) in
      guard resident.hasSnapshot, let details = resident.details,
        let snapshot = details.snapshot
      else { return }
      let info: CustomerInfo
      switch snapshot {
      case .success(let snapshot): info = snapshot.customerInfo
      case .failure(let error): throw ReadFailure.snapshot(error)
      }
      let clock = resident.clockReading(now: now, boot: clock.bootInstant, policy: rules)
      var bookkeeping = details.completing(resident.scopeRow.bookkeeping)
      // Evaluated against the mark before this read, as a key's decision is.
      bookkeeping.deviceHighWaterMark = resident.highWaterMark
      resident.recordRead(at: clock.effectiveDeviceNow, wallClock: now)
      reading = WholeReading(
        info: info, plan: resident.evaluationPlan(for: info),
        snapshot: resident.scopeRow.snapshotFacts, bookkeeping: bookkeeping, clock: clock)
    }
    if let failure { throw failure.cacheError }
    guard let reading else { return nil }
    // Outside the lock: the evaluation touches only these copies.
    return EntitlementEvaluator.evaluate(
      reading.info, plan: reading.plan, snapshot: reading.snapshot,
      bookkeeping: reading.bookkeeping, clock: reading.clock, policy: rules)
  }

  /// What ``evaluatedCustomerInfo(for:policy:)`` takes from memory under the lock.
  private struct WholeReading {
    var info: CustomerInfo
    var plan: EvaluationPlan
    var snapshot: SnapshotFacts
    var bookkeeping: ScopeBookkeeping
    var clock: ClockReading
  }

  /// Reads `scope` from the file again and checks its signature and rows now
  /// (<doc:TrustedSnapshots>), whatever memory held: what `entitlement-cache verify` runs. Later
  /// reads use the result.
  ///
  /// - Returns: The verdict; nil when no snapshot is stored.
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` when the cache has no
  ///   ``CacheConfiguration/trustRoots``; ``CacheError/storage(_:_:)`` when the file cannot be
  ///   read.
  public func verifySnapshot(for scope: CacheScope) throws(CacheError) -> TrustVerdict? {
    guard configuration.trustRoots != nil else {
      throw .invalidConfiguration(field: "trustRoots", problem: "are needed to verify")
    }
    var noticed: [(DiagnosticEvent, CacheScope?)]?
    let read = reads.withLock { path -> Result<TrustVerdict?, ReadFailure> in
      defer { noticed = path.takeNoticed() }
      do throws(ReadFailure) {
        let resident = try path.readResident(scope)
        return .success(
          resident.hasSnapshot ? resident.scopeRow.snapshotFacts.decidedVerdict : nil)
      } catch {
        return .failure(error)
      }
    }
    tell(noticed)
    return try read.mapError(\.cacheError).get()
  }

  /// The policy a read uses: the configuration's, or `policy` once it is checked. A policy out
  /// of range (NaN, negative, infinite) would fail open, granting lifetime access forever.
  func resolve(_ policy: OfflinePolicy?) -> Result<OfflinePolicy, CacheError> {
    guard let policy else { return .success(configuration.policy) }
    do {
      try policy.validate(prefix: "policy.", trustRoots: configuration.trustRoots)
      return .success(policy)
    } catch {
      return .failure(error)
    }
  }

  /// The stored snapshot and bookkeeping of `scope`, from memory as every read is (the body
  /// decoded once per stored snapshot); with trust roots, a read from the file is checked
  /// first, and the verdict comes with it. The device high-water mark is the one the cache
  /// holds, reads not yet flushed to the file included.
  ///
  /// - Throws: ``CacheError/storage(_:_:)`` when the file cannot be read;
  ///   ``CacheError/unreadableSnapshot(_:)`` when the stored bytes no longer decode.
  public func load(_ scope: CacheScope) throws(CacheError) -> CachedCustomerInfo? {
    let now = clock.now()
    let hasTrustRoots = configuration.trustRoots != nil
    var cached: CachedCustomerInfo?
    let failure = withResident(scope, whole: true, at: now) { _, resident throws(ReadFailure) in
      guard resident.hasRow, let details = resident.details else { return }
      var bookkeeping = details.completing(resident.scopeRow.bookkeeping)
      bookkeeping.deviceHighWaterMark = resident.highWaterMark
      switch details.snapshot {
      case nil:
        cached = CachedCustomerInfo(snapshot: nil, bookkeeping: bookkeeping)
      case .failure(let error)?:
        throw .snapshot(error)
      case .success(let snapshot)?:
        cached = CachedCustomerInfo(
          snapshot: snapshot, bookkeeping: bookkeeping,
          verdict: hasTrustRoots ? resident.scopeRow.snapshotFacts.decidedVerdict : nil)
      }
    }
    if let failure { throw failure.cacheError }
    return cached
  }

  /// Runs `body` under the reads lock on the resident of `scope` that holds every key
  /// (`whole`: and its body and details), reading the file when memory does not, after the
  /// cross-connection check when one is due. A read that fails is reported, and returned.
  private func withResident(
    _ scope: CacheScope, whole: Bool, at now: Date,
    _ body: (ScopeReader, ResidentScope) throws(ReadFailure) -> Void
  ) -> ReadFailure? {
    let failure = readResident(scope, whole: whole, at: now, body)
    // A file that could not be opened yet is tried again, at most every two seconds.
    if case .unavailable? = failure, retryAwaitedStorageForRead() {
      return readResident(scope, whole: whole, at: now, body)
    }
    return failure
  }

  private func readResident(
    _ scope: CacheScope, whole: Bool, at now: Date,
    _ body: (ScopeReader, ResidentScope) throws(ReadFailure) -> Void
  ) -> ReadFailure? {
    let version = otherConnectionsVersion()
    var failure: ReadFailure?
    var tellFailure = false
    var noticed: [(DiagnosticEvent, CacheScope?)]?
    reads.withLock { path in
      if let version {
        path.observe(dataVersion: version.dataVersion, writerSerial: version.writer)
      }
      do throws(ReadFailure) {
        let resident = try path.resident(scope, whole: whole)
        try body(path, resident)
      } catch {
        failure = error
        tellFailure = path.noteFailure(error, for: scope)
      }
      noticed = path.takeNoticed()
    }
    tell(noticed)
    if let failure { report(failure, for: scope, at: now, telling: tellFailure) }
    return failure
  }

  /// Drops the memory-resident state of `scope`, so its next read goes to the file as it does
  /// after an invalidation. Read-time bookkeeping not yet persisted is kept. With
  /// `forgettingBodies`, the bodies a checked read decoded are forgotten too, so the next
  /// checked read of the scope decodes its body as a new process's first read does.
  ///
  /// Apps never need this; the benchmarks use it to time the read-through path.
  package func dropResidentState(for scope: CacheScope, forgettingBodies: Bool = false) {
    reads.withLock { path in
      path.residents.markForReread(scope.key)
      if forgettingBodies { path.forgetParsedBodies() }
    }
  }

  /// Keeps why a read failed for ``lastReadFailure`` and, when the reader said to
  /// (``ScopeReader/noteFailure(_:for:)``), tells ``CacheConfiguration/onDiagnostic``.
  /// Called with no lock held.
  func report(_ failure: ReadFailure, for scope: CacheScope, at now: Date, telling: Bool) {
    let error = failure.cacheError
    readFailure.withLock {
      $0 = ReadFailureReport(scopeHashPrefix: scope.key.hexPrefix, error: error, at: now)
    }
    guard telling else { return }
    if case .storage(let operation, let storageFailure) = error {
      tellStorageFailure(operation, storageFailure, scope: scope)
    } else {
      tell(.readFailed(error), scope: scope)
    }
  }

  /// Reports a read refused for its policy out of range, told as other read failures are.
  private func reportInvalid(_ error: CacheError, for scope: CacheScope, at now: Date) {
    let failure = ReadFailure.invalid(error)
    let telling = reads.withLock { $0.noteFailure(failure, for: scope) }
    report(failure, for: scope, at: now, telling: telling)
  }
}
