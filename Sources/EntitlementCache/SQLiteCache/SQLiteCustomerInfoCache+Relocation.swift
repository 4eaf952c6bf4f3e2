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
  /// - Per scope, the newer snapshot wins, as ``storeAnswer(_:for:)`` decides: a snapshot the
  ///   file already holds (the widget stored it first) is kept when it is as new. The winner
  ///   keeps its bookkeeping, so a snapshot's age moves with it and an expiry that passed since
  ///   is still past; the later high-water mark of the two is kept.
  /// - Every queued purchase moves with its state and observer, unless this file queued its
  ///   transaction already: none is queued, or posted, twice.
  /// - The merge is one write transaction of this file. The old file is removed only after it
  ///   commits, and the commit records the old file's identity: killed at any point, every
  ///   snapshot and queued purchase is in one of the two files, and the next call completes the
  ///   move without merging anything again.
  /// - Once the old file is gone, a call costs one `stat` of `oldPath`.
  ///
  /// Call it before anything opens `oldPath`, and never open that path again: a write to the
  /// old file after the move merged it is not merged. A file still open elsewhere is merged
  /// and left (``RelocationOutcome/mergedNotRemoved(_:)``) for the next call to remove.
  ///
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` when `oldPath` names this
  ///   cache's own file; ``CacheError/storage(_:_:)`` of operation
  ///   ``CacheOperation/relocate`` when the old file cannot be opened (damaged, from a newer
  ///   schema, refused for now), or this file cannot be written. Whichever, both files are as
  ///   they were, but for the old one's migration to this build's schema.
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
    let move = try FileRelocation(path: oldPath, configuration: configuration, clock: clock)
    let now = clock.now().truncatedToMilliseconds
    let hasTrustRoots = configuration.trustRoots != nil
    var summary = RelocationSummary()
    try write(.relocate, scope: nil) { connection, _ throws(SQLiteError) in
      summary = try move.merge(into: connection, at: now, hasTrustRoots: hasTrustRoots)
      // Any scope may have changed: each is read from the file again.
      return { path in path.residents.dropAll() }
    }
    return try move.remove() ? .moved(summary) : .mergedNotRemoved(summary)
  }
}
