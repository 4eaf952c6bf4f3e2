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
  /// read of the rows now would install, without the read (see ``ScopeRow``).
  func installing(
    _ rows: SnapshotRows, written: WrittenSnapshot, for scope: CacheScope,
    marks: [ScopeKey: ReadMarks]
  ) -> (ScopeReader) -> Void {
    let now = rows.writtenAt
    let scopeRow = ScopeRow(
      writtenAt: now, rowID: written.rowID, revision: written.revision,
      requestDate: rows.snapshot.customerInfo.requestDate, boot: rows.boot, facts: rows.facts,
      lastUsedAt: max(now, marks[scope.key]?.lastUsedAt ?? now),
      pendingPurchase: written.pendingPurchase, imported: rows.imported)
    let details = ScopeDetails(
      written: rows.snapshot, at: rows.imported?.savedAt ?? now, digest: rows.digest)
    let entitlements = rows.entitlements
    return { path in
      path.residents.install(
        ResidentScope(
          scopeRow: scopeRow, entitlements: entitlements, isComplete: true, details: details),
        for: scope.key)
    }
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

  /// Runs `body` in a write transaction together with the pending read-time bookkeeping, then
  /// applies the returned change to memory, all under the writer lock, so memory never shows
  /// an older write after a newer one.
  ///
  /// When SQLite finds the file damaged and the configuration says `.moveAside`, the damaged
  /// file is moved aside, a new empty database takes its place, and the write is tried once
  /// more there: a refresh is what brings a damaged cache back.
  ///
  /// - Parameter onlyReadMarks: The write is the read marks alone (a flush): with none to
  ///   persist, no transaction is opened.
  /// - Parameter durable: The commit is on disk before this returns, whatever
  ///   ``CacheConfiguration/durability`` says: what a move needs before it removes the file
  ///   it merged.
  func write(
    _ operation: CacheOperation, scope: CacheScope?, onlyReadMarks: Bool = false,
    durable: Bool = false,
    _ body: (StoreWriter, [ScopeKey: ReadMarks]) throws(SQLiteError) -> (ScopeReader) -> Void
  ) throws(CacheError) {
    var seen = WriteSeen()
    // Told after every lock is released, as observers are, in the order seen under the lock.
    defer {
      if seen.movedAside { tell(.storageDamaged(operation, movedAside: true)) }
      if seen.storageCameBack { tell(.storageAvailable) }
    }
    do {
      try writeTransaction(
        operation, onlyReadMarks: onlyReadMarks, durable: durable, seen: &seen, body)
    } catch {
      if case .storage(let failed, let failure) = error {
        if failure.kind != .unavailable {
          tellStorageFailure(failed, failure, scope: scope)
        } else if seen.storageWentAway {
          tell(.storageUnavailable(failed), scope: scope)
        }
      }
      throw error
    }
  }

  /// What a write saw of the storage, under the writer's lock, for the diagnostics told after
  /// it.
  private struct WriteSeen {
    /// The file was damaged, and moved aside.
    var movedAside = false
    /// The storage refused the write, and was not known to be unavailable before.
    var storageWentAway = false
    /// A transaction committed, and the storage was known to be unavailable before.
    var storageCameBack = false
  }

  private func writeTransaction(
    _ operation: CacheOperation, onlyReadMarks: Bool, durable: Bool, seen: inout WriteSeen,
    _ body: (StoreWriter, [ScopeKey: ReadMarks]) throws(SQLiteError) -> (ScopeReader) -> Void
  ) throws(CacheError) {
    // After the lock is released, failed or not: an observer reads the cache. Not for a write
    // refused before it touched anything, the file not being open: observers would only wake
    // each other with their own refused attempts.
    var touchedTheFile = true
    defer { if !onlyReadMarks, touchedTheFile { writeObservers.notify() } }
    openAwaitedStorage()
    try writer.withLock { connection throws(CacheError) in
      guard var open = connection else {
        touchedTheFile = false
        throw awaitedStorageError(operation) ?? .closed
      }
      if let newer = readOnlySchema.withLock({ $0 }) { throw .sqlite(operation, newer) }
      // Counted whether the write committed or failed: a mark that moves for nothing costs an
      // observer one read, one that stays put for a write would hide it.
      defer { committedWrites.withLock { $0 += 1 } }
      var attempt = Result { () throws(SQLiteError) in
        try attemptWrite(on: open, onlyReadMarks: onlyReadMarks, durable: durable, body)
      }
      if case .failure(let error) = attempt, error.isMissingSchema,
        let newer = migratedByANewerBuild(open)
      {
        // Another process's newer build migrated the file since it opened: what this build's
        // statements miss is that build's change, no damage. Never written again, as a newer
        // build's file met at open is not.
        readOnlySchema.withLock { $0 = newer }
        throw .sqlite(operation, newer)
      }
      if case .failure(let error) = attempt, error.isDamage,
        configuration.damageHandling == .moveAside
      {
        try replaceDamagedFile(&open, cause: error)
        seen.movedAside = true
        connection = open
        attempt = Result { () throws(SQLiteError) in
          try attemptWrite(on: open, onlyReadMarks: onlyReadMarks, durable: durable, body)
        }
      }
      switch attempt {
      case .success(let committed):
        // Only a transaction that ran says the storage answers: a flush with nothing to
        // persist touched nothing.
        if committed { seen.storageCameBack = storageHealth.markAvailable() }
      case .failure(let error):
        // Marked here, under the lock, so that a read or write that succeeds after this one
        // tells the storage came back after this tells it went away.
        if error.storageFailureKind == .unavailable {
          seen.storageWentAway = storageHealth.markUnavailable()
        }
        throw .sqlite(operation, error)
      }
    }
  }

  /// The refusal of a newer build's file, when `connection`'s file is now at a schema version
  /// this build does not write; nil while it is at this build's.
  private func migratedByANewerBuild(_ store: StoreWriter) -> SQLiteCacheError? {
    let supported = Migrator.embedded.latestVersion
    // A version that cannot be read says nothing newer: the failure stays the damage it is.
    guard let found = store.schemaVersion(), found > supported else {
      return nil
    }
    return .newerSchema(path: path, found: Int(clamping: found), supported: supported)
  }

  /// - Returns: Whether a transaction committed: false for a flush with nothing to persist.
  @discardableResult
  func attemptWrite(
    on store: StoreWriter, onlyReadMarks: Bool = false, durable: Bool = false,
    _ body: (StoreWriter, [ScopeKey: ReadMarks]) throws(SQLiteError) -> (ScopeReader) -> Void
  ) throws(SQLiteError) -> Bool {
    // What reads learned goes to the file only when the configuration says so: an inspection
    // tool reading with a clock of its own must not move the app's device time.
    let marks =
      configuration.persistsReadTimeBookkeeping
      ? reads.withLock { $0.residents.unpersistedMarks() } : [:]
    // Releasing a cache that only read must not wait for another process's write lock.
    if onlyReadMarks, marks.isEmpty { return false }
    let apply = try store.transaction(
      durable: durable, raisingFromNormal: configuration.durability != .full
    ) { () throws(SQLiteError) -> (ScopeReader) -> Void in
      try store.persist(marks)
      return try body(store, marks)
    }
    reads.withLock { path in
      path.residents.markPersisted(marks)
      apply(path)
      // What the file holds changed: a read failure told before is told again if it recurs.
      path.forgetToldFailures()
    }
    return true
  }

  /// Closes both connections to the damaged file, keeping its log unmerged, moves it aside and
  /// installs connections to a new, empty database. Called with the writer lock held.
  private func replaceDamagedFile(
    _ writerConnection: inout StoreWriter, cause: SQLiteError
  ) throws(CacheError) {
    try reads.withLock { state throws(CacheError) in
      // The old connections must be closed before the files move, or their close would find
      // the new file's companions under the same names. In-memory placeholders stand in for
      // them meanwhile; no other thread can see them, both locks are held.
      let placeholder: (writer: StoreWriter, reader: StoreReader)
      do throws(SQLiteError) {
        try writerConnection.skipCheckpointOnClose()
        try state.reader?.skipCheckpointOnClose()
        placeholder = (
          StoreWriter(try SQLiteConnection(path: ":memory:")),
          StoreReader(try SQLiteConnection(path: ":memory:"))
        )
      } catch {
        throw .sqlite(.open, error)
      }
      writerConnection = placeholder.writer
      state.replaceReader(
        with: placeholder.reader, dataVersion: nil, writerSerial: placeholder.writer.serial)
      let opened = try DatabaseOpener(path: path, configuration: configuration, clock: clock)
        .replaceDamaged(cause)
      writerConnection = opened.writer
      state.replaceReader(
        with: opened.reader, dataVersion: opened.dataVersion, writerSerial: opened.writer.serial)
      damage.withLock { $0 = opened.damage }
    }
  }
}

extension SQLiteCustomerInfoCache: CustomerInfoChangeSignaling {
  /// This instance's writes, and the change check's answer (the writer's `data_version`),
  /// which moves with every commit of another connection (another instance, another process)
  /// and ignores this one's own: one statement step, no read of any row. The same check a
  /// read makes, asked now whether or not one is due, so memory drops what another process
  /// wrote over before the client reads. Nil while this instance is writing (its writer is
  /// busy), while it waits for its file, and once it is closed. A cache waiting for its file
  /// tries to open it here too, at most every two seconds, so a client's periodic check
  /// notices the device's unlock.
  public func changeMark() -> UInt64? {
    openAwaitedStorage(waitingForWrites: false)
    let own = committedWrites.withLock { $0 }
    guard let asked = checkForOtherWrites(), let external = asked.dataVersion else { return nil }
    let serial = asked.writer
    // What memory holds must answer for the version this mark names: a reader told of another
    // connection's write drops what it wrote over, rather than waiting for the read's own
    // check. Asked before the reads lock, as every check is.
    reads.withLock { $0.observe(dataVersion: external, writerSerial: serial) }
    return UInt64(truncatingIfNeeded: external) << 32 | own & 0xFFFF_FFFF
  }

  /// Calls `observer` after every write through this instance: a snapshot stored, a failed
  /// refresh recorded, a removal, a purchase queued or changed. A flush of read marks changes
  /// nothing a read answers, and calls nothing.
  public func observeWrites(_ observer: @escaping @Sendable () -> Void) -> WriteObservation {
    writeObservers.add(observer)
  }
}
