#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension SQLiteCustomerInfoCache {
  /// Moves the cache file at `oldPath` into this cache's file, then removes it: what an app
  /// runs at every launch once it moves its cache (into an App Group container, when a widget
  /// arrives). See <doc:AdoptingOnAnInstalledBase>.
  ///
  /// ```swift
  /// let cache = try SQLiteCustomerInfoCache(path: sharedContainerPath)
  /// _ = try cache.relocate(from: previousPath)
  /// ```
  ///
  /// - Per scope, the snapshot with the later `requestDate` wins, and a tie keeps this
  ///   file's: a snapshot the widget already stored here is kept when it is as new. With trust
  ///   roots, a verified snapshot (checked again from its file, as a read checks it) is kept
  ///   over one that is not, whatever their dates; without them, a snapshot whose body claims
  ///   `failed` never replaces one that claims verification. The winner keeps its
  ///   bookkeeping, so a snapshot's age moves with it and an expiry that passed since is still
  ///   past; the later high-water mark of the two is kept.
  /// - Every queued purchase moves with its state and observer. A transaction both files
  ///   queued is kept once: as the file that posted it has it, else as it was observed first,
  ///   so none is queued, or posted, twice. Entries keep the order they were observed in,
  ///   across both files.
  /// - The merge is one write transaction of this file, on disk before the old file is
  ///   removed whatever ``CacheConfiguration/durability`` says, and it records the old file's
  ///   identity: killed at any point, every snapshot and queued purchase is in one of the two
  ///   files, and the next call completes the move without merging anything again.
  /// - Once the old file is gone, a call costs one `stat` of `oldPath`.
  ///
  /// Call it before anything opens `oldPath`, and never open that path again: a write to the
  /// old file after the move merged it is not merged. A file still open elsewhere is merged
  /// and left (``RelocationOutcome/mergedNotRemoved(_:)``) for the next call to remove.
  ///
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` when `oldPath` names this
  ///   cache's own file; ``CacheError/closed``; ``CacheError/storage(_:_:)`` of operation
  ///   ``CacheOperation/relocate`` when this file cannot be written, or the old file cannot be
  ///   opened (damaged, from a newer schema, refused for now): both files are then as they
  ///   were, but for the old one's migration to this build's schema. A failure to remove the
  ///   old file after the merge committed leaves everything in both; the next call removes it.
  public func relocate(from oldPath: String) throws(CacheError) -> RelocationOutcome {
    switch DatabaseFile.presence(oldPath) {
    case .absent:
      return .nothingToMove
    case .file:
      break
    case .notAFile:
      throw .sqlite(.relocate, .fileSystem(path: oldPath, reason: "not a regular file"))
    case .refused(let code):
      throw .sqlite(.relocate, DatabaseFile.refused(errno: code))
    case .unknown(let code):
      throw .sqlite(.relocate, DatabaseFile.statFailed(oldPath, errno: code))
    }
    // Merged into itself and then removed, the file would be lost.
    if oldPath == path || DatabaseFile.fileNumber(oldPath) == DatabaseFile.fileNumber(path) {
      throw .invalidConfiguration(field: "oldPath", problem: "names this cache's own file")
    }
    // Nothing of the old file is touched for a move that could not write here.
    try refuseWritesNow(.relocate)
    // The file a link names, whose companions SQLite keeps beside it, is the one to remove.
    let file = DatabaseFile.resolvingLinks(oldPath)
    let move: FileRelocation
    do {
      move = try FileRelocation(path: file, configuration: configuration, clock: clock)
    } catch .storage(_, let failure) where failure.kind == .missing {
      // Another move (the widget's) removed it since the check above.
      return .nothingToMove
    }
    let now = clock.now().truncatedToMilliseconds
    let roots = configuration.trustRoots
    var summary = RelocationSummary()
    // On disk before the old file goes, whatever the configured durability: a purchase token
    // lost with an unsynced commit could not be fetched again.
    try write(.relocate, scope: nil, durable: true) { store, _ throws(SQLiteError) in
      summary = try move.merge(into: store, at: now, roots: roots)
      // Any scope may have changed: each is read from the file again.
      return { path in path.residents.dropAll() }
    }
    guard try move.remove() else { return .mergedNotRemoved(summary) }
    // The link too, once the file it named is gone.
    if file != oldPath {
      try DatabaseFile.remove(oldPath, vfs: configuration.vfsName, operation: .relocate)
    }
    return .moved(summary)
  }
}

extension SQLiteCustomerInfoCache {
  /// Throws what a write would throw before it touched the file: the cache is closed, its file
  /// is not there yet, or a newer build wrote it.
  fileprivate func refuseWritesNow(_ operation: CacheOperation) throws(CacheError) {
    _ = openAwaitedStorage()
    guard writer.withLock({ $0 != nil }) else { throw awaitedStorageError(operation) ?? .closed }
    if let newer = readOnlySchema.withLock({ $0 }) { throw .sqlite(operation, newer) }
  }
}
