#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension SQLiteCustomerInfoCache {
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
