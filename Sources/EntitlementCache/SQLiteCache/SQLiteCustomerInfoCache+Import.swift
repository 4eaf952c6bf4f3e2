#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension SQLiteCustomerInfoCache: CustomerInfoImporting {
  /// Stores a previous cache's snapshot as of its save, when `scope` holds no snapshot, decided
  /// in the write's own `BEGIN IMMEDIATE` transaction, so an app and its widget importing at
  /// once, or an import racing the first refresh, store it at most once and never over an
  /// answer (see ``CustomerInfoImporting/importSnapshot(_:for:)``).
  ///
  /// The snapshot is written like a refresh's, with the bookkeeping of
  /// ``SnapshotImport/bookkeeping(at:policy:)``, its `verification` column `not_requested`
  /// and no signed material: with trust roots or without, an import is never verified.
  ///
  /// - Throws: ``CacheError/invalidSnapshot(_:)`` when the snapshot is over
  ///   ``CacheConfiguration/snapshotSizeLimit`` or its device access cannot be kept;
  ///   ``CacheError/storage(_:_:)``. Whichever, nothing changed.
  public func importSnapshot(_ request: SnapshotImport, for scope: CacheScope) throws(CacheError)
    -> ImportOutcome
  {
    let snapshot = request.snapshot
    let limit = configuration.snapshotSizeLimit
    guard snapshot.jsonData.count <= limit else {
      throw .invalidSnapshot(
        SnapshotError(path: "", problem: .tooLarge(size: snapshot.jsonData.count, limit: limit)))
    }
    openAwaitedStorage()
    let now = clock.now().truncatedToMilliseconds
    let bookkeeping: ScopeBookkeeping
    do {
      bookkeeping = try request.bookkeeping(at: now, policy: configuration.policy)
        .truncatedToMilliseconds
    } catch {
      return .refused(error)
    }
    var facts = SnapshotFacts(snapshot.customerInfo)
    facts.verification = .known(.notRequested)
    let deviceBlock: String?
    do {
      deviceBlock = try DeviceBlockColumn.encode(facts)
    } catch {
      throw .invalidSnapshot(error)
    }
    let rows = SnapshotRows(
      snapshot: snapshot, digest: bookkeeping.snapshotSHA256 ?? [],
      entitlements: EntitlementFacts.table(for: snapshot.customerInfo), facts: facts,
      trust: StoredTrust(signature: nil, requestNonce: nil, checkedAt: nil, writerVerdict: nil),
      deviceBlock: deviceBlock, writtenAt: now,
      boot: nil, imported: (bookkeeping.storedAt ?? now, bookkeeping.origin))
    var filled = false
    try write(.store, scope: scope) { connection, marks throws(SQLiteError) in
      guard try ScopeSQL.storedAnswer(scope, on: connection) == nil else {
        filled = true
        return { _ in }
      }
      return try writeSnapshotRows(rows, for: scope, on: connection, marks: marks)
    }
    return filled ? .scopeAlreadyFilled : .imported
  }
}
