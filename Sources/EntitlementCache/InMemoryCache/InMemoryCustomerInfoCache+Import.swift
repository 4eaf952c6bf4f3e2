extension InMemoryCustomerInfoCache: CustomerInfoImporting {
  /// Stores a previous cache's snapshot as of its save, when `scope` holds no snapshot,
  /// decided under the same lock as the write (see
  /// ``CustomerInfoImporting/importSnapshot(_:for:)``).
  ///
  /// - Throws: ``CacheError/invalidSnapshot(_:)`` when the snapshot is over the size limit or
  ///   its device access cannot be kept; nothing changed.
  package func importSnapshot(_ request: SnapshotImport, for scope: CacheScope) throws(CacheError)
    -> ImportOutcome
  {
    let size = request.snapshot.jsonData.count
    guard size <= snapshotSizeLimit else {
      throw .invalidSnapshot(
        SnapshotError(path: "", problem: .tooLarge(size: size, limit: snapshotSizeLimit)))
    }
    // Kept to the millisecond, as the file keeps it, so both caches hold the same instants.
    let now = clock.now().truncatedToMilliseconds
    let boot = clock.bootInstant()
    // Refused before anything is hashed: the label, and a save ahead of the clock.
    do {
      _ = try request.savedTime(at: now, policy: policy)
    } catch {
      return .refused(error)
    }
    let digest = SHA256.hash(Array(request.snapshot.jsonData))
    // No verdict, with trust roots or without: the previous cache's bytes carry no signature
    // this library checked, and an import is never verified.
    let stored = try StoredSnapshot(request.snapshot, verdict: nil, sha256: digest)
    let policy = policy
    let outcome = scopes.withLock { scopes -> ImportOutcome in
      let existing = scopes[scope.key]
      guard existing?.snapshot == nil else { return .scopeAlreadyFilled }
      let bookkeeping: ScopeBookkeeping
      do throws(ImportRefusal) {
        bookkeeping = try request.bookkeeping(
          at: now, bootInstant: boot, over: existing?.bookkeeping, policy: policy, digest: digest)
      } catch {
        return .refused(error)
      }
      scopes[scope.key] = StoredScope(bookkeeping: bookkeeping, snapshot: stored)
      scopes.writes &+= 1
      return .imported
    }
    if outcome == .imported { writeObservers.notify() }
    return outcome
  }
}
