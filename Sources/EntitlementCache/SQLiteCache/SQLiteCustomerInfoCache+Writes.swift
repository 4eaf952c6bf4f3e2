#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension SQLiteCustomerInfoCache {
  /// Stores `snapshot` for `scope` as a successful refresh now, in one transaction: the
  /// snapshot row, its normalized entitlements and the bookkeeping change together or not at
  /// all. A failed refresh recorded earlier is cleared.
  ///
  /// The next read in this process sees the write at once; other processes within the
  /// cross-process check interval.
  ///
  /// With ``CacheConfiguration/trustRoots`` set, the signature is checked here
  /// (<doc:TrustedSnapshots>), the intermediate's expiry against the scope's trusted server time
  /// (<doc:TimeModel>), and the verdict is stored with the signed material, to be checked again on
  /// every read from the file.
  ///
  /// - Throws: ``CacheError/invalidSnapshot(_:)`` when the snapshot is over
  ///   ``CacheConfiguration/snapshotSizeLimit``; ``CacheError/unverifiedSnapshot(_:)`` when it
  ///   failed verification and the stored one is verified; ``CacheError/storage(_:_:)``.
  ///   Whichever, the previous snapshot is still readable.
  public func store(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope) throws(CacheError) {
    if case .refusedUnverified(let failure?) = try write(snapshot, for: scope, conditional: false) {
      throw .unverifiedSnapshot(failure)
    }
  }

  /// Stores a server's answer unless that would take `scope` backwards (see
  /// ``CustomerInfoCache/storeAnswer(_:for:)``): the stored snapshot's `requestDate` and
  /// verification are read in the write's own `BEGIN IMMEDIATE` transaction, so no other
  /// process or instance can store between the comparison and the write.
  ///
  /// - Throws: ``CacheError/invalidSnapshot(_:)`` when the snapshot is over
  ///   ``CacheConfiguration/snapshotSizeLimit``; ``CacheError/storage(_:_:)``. Whichever, the
  ///   previous snapshot is still readable.
  public func storeAnswer(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope)
    throws(CacheError) -> StoreOutcome
  {
    try write(snapshot, for: scope, conditional: true)
  }

  /// Writes `snapshot` for `scope` as a refresh now, in one transaction, unless the rule book
  /// (``ConditionalStore``) refuses it against the row as stored in that transaction: both
  /// rules when `conditional`, only "a failed verification never replaces a verified one"
  /// otherwise.
  private func write(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope, conditional: Bool)
    throws(CacheError) -> StoreOutcome
  {
    try refuseOversized(snapshot)
    // Before the stored snapshot is judged: a file that opens now holds what it is judged by.
    openAwaitedStorage()
    // Times are stored to the millisecond; memory must hold exactly what the file holds.
    let now = clock.now().truncatedToMilliseconds
    let boot = clock.bootInstant()?.truncatedToMilliseconds
    let info = snapshot.customerInfo
    let entitlements = EntitlementFacts.table(for: info)
    let digest = SHA256.hash(Array(snapshot.jsonData))
    let (verdict, checkedAt, stored) = arrivalVerdict(
      of: snapshot, bodyDigest: digest, for: scope, now: now)
    let facts = SnapshotFacts(info, verdict: verdict)
    var refusal: StoreOutcome?
    let deviceBlock: String?
    do {
      deviceBlock = try DeviceBlockColumn.encode(facts)
    } catch {
      throw .invalidSnapshot(error)
    }
    let hasTrustRoots = configuration.trustRoots != nil
    try write(.store, scope: scope) { store, marks throws(SQLiteError) in
      if conditional || verdict?.failure != nil {
        let claims = try store.storedAnswer(for: scope).map { answer, revision in
          // The row's record says verified; what a check from disk found at that very
          // revision overrules it, so a fresh answer may replace a snapshot the file was
          // edited under.
          var answer = answer
          if stored?.revision == revision, stored?.verdict != .verified {
            answer.isVerifiedByTrustRoots = false
          }
          return answer
        }
        if let refused = ConditionalStore.refusal(
          of: snapshot, verdict: verdict, over: claims, hasTrustRoots: hasTrustRoots,
          conditional: conditional, now: now)
        {
          refusal = refused
          return { _ in }
        }
      }
      let rows = SnapshotRows(
        snapshot: snapshot, digest: digest, entitlements: entitlements, facts: facts,
        trust: StoredTrust(snapshot, verdict: verdict, checkedAt: checkedAt),
        deviceBlock: deviceBlock, writtenAt: now, boot: boot)
      let written = try store.writeSnapshot(rows, for: scope)
      return installing(rows, written: written, for: scope, marks: marks)
    }
    if let failure = verdict?.failure {
      tell(.snapshotUnverified(failure, stored: refusal == nil), scope: scope)
    }
    return refusal ?? .stored
  }

  /// Refuses a snapshot over ``CacheConfiguration/snapshotSizeLimit`` before anything is
  /// hashed, verified or written.
  func refuseOversized(_ snapshot: CustomerInfoSnapshot) throws(CacheError) {
    let limit = configuration.snapshotSizeLimit
    guard snapshot.jsonData.count <= limit else {
      throw .invalidSnapshot(
        SnapshotError(path: "", problem: .tooLarge(size: snapshot.jsonData.count, limit: limit)))
    }
  }

  /// What installs `scope` in memory after `rows` were written as `written`: the resident a
  /// read of the rows now would install, without the read.
  func installing(
    _ rows: SnapshotRows, written: WrittenSnapshot, for scope: CacheScope,
    marks: [ScopeKey: ReadMarks]
  ) -> (ScopeReader) -> Void {
    let resident = ResidentScope(
      written: rows, as: written,
      lastUsedAt: max(rows.writtenAt, marks[scope.key]?.lastUsedAt ?? rows.writtenAt))
    return { path in path.residents.install(resident, for: scope.key) }
  }

  /// With trust roots, the verdict on `snapshot` arriving for `scope`, the trusted server time
  /// its intermediate's expiry was checked against, and the verdict on the snapshot stored now
  /// with the revision of the row it was checked at; without them, nil for all three.
  private func arrivalVerdict(
    of snapshot: CustomerInfoSnapshot, bodyDigest: [UInt8], for scope: CacheScope, now: Date
  ) -> (TrustVerdict?, Date?, (verdict: TrustVerdict, revision: Int64)?) {
    guard let roots = configuration.trustRoots else { return (nil, nil, nil) }
    // The scope as stored, checked as any read from disk is.
    var noticed: [(DiagnosticEvent, CacheScope?)]?
    defer { tell(noticed) }
    let current = reads.withLock { path -> (ScopeBookkeeping, TrustVerdict, Int64?)? in
      defer { noticed = path.takeNoticed() }
      guard let resident = try? path.resident(scope, whole: false), resident.hasSnapshot else {
        return nil
      }
      let scopeRow = resident.scopeRow
      return (scopeRow.bookkeeping, scopeRow.snapshotFacts.verdict, scopeRow.version?.revision)
    }
    let checkedAt = SnapshotTrust.arrivalServerTime(
      requestDate: snapshot.customerInfo.requestDate, now: now,
      verified: current.flatMap { $0.1 == .verified ? $0.0 : nil }, boot: clock.bootInstant())
    let stored = current.flatMap { current in current.2.map { (current.1, $0) } }
    return (
      SnapshotTrust.arrivalVerdict(
        snapshot, bodyDigest: bodyDigest, for: scope, roots: roots, serverNow: checkedAt),
      checkedAt, stored
    )
  }

  /// Records that a refresh attempt for `scope` failed now. Access is unchanged; evidence
  /// reads `offline` until the next successful refresh.
  public func recordRefreshFailure(for scope: CacheScope, reason: String? = nil)
    throws(CacheError)
  {
    let now = clock.now().truncatedToMilliseconds
    let boot = clock.bootInstant()
    try write(.recordRefreshFailure, scope: scope) { store, _ throws(SQLiteError) in
      try store.recordRefreshFailure(for: scope, at: now, boot: boot, reason: reason)
      // The next read re-reads the row, which now carries the failure.
      return { path in path.residents.markForReread(scope.key) }
    }
  }

  /// Deletes everything stored for `scope`.
  public func remove(_ scope: CacheScope) throws(CacheError) {
    try write(.remove, scope: scope) { store, _ throws(SQLiteError) in
      try store.deleteScope(storedKey: scope.key.bytes)
      return { path in path.residents.forget(scope.key) }
    }
  }

  /// Persists read-time bookkeeping (the raised high-water marks and last-use times) that reads
  /// keep in memory. Every write does this too; call it when the app goes to the background.
  ///
  /// Does nothing when there is nothing to persist, or for a support tool's read-only look at
  /// the file: no transaction is opened,
  /// so releasing a cache that only read never waits for another process's write lock.
  public func flush() throws(CacheError) {
    // A cache still waiting for its file has read nothing from it: nothing to persist. A
    // newer build's file is never written: what reads learned stays in memory.
    guard !isAwaitingStorage, readOnlySchema.withLock({ $0 == nil }) else { return }
    try write(.flush, scope: nil, onlyReadMarks: true) { _, _ throws(SQLiteError) in { _ in } }
  }
}
