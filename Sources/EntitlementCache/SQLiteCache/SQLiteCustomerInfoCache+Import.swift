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
  /// ``SnapshotImport/bookkeeping(at:bootInstant:over:policy:)``, its `verification` column `not_requested`
  /// and no signed material: with trust roots or without, an import is never verified.
  ///
  /// - Throws: ``CacheError/invalidSnapshot(_:)`` when the snapshot is over
  ///   ``CacheConfiguration/snapshotSizeLimit`` or its device access cannot be kept;
  ///   ``CacheError/storage(_:_:)``. Whichever, nothing changed.
  public func importSnapshot(_ request: SnapshotImport, for scope: CacheScope) throws(CacheError)
    -> ImportOutcome
  {
    let snapshot = request.snapshot
    try refuseOversized(snapshot)
    openAwaitedStorage()
    let now = clock.now().truncatedToMilliseconds
    let boot = clock.bootInstant()
    // Refused before anything is hashed or written: the label, and a save ahead of the clock.
    do {
      _ = try request.savedTime(at: now, policy: configuration.policy)
    } catch {
      return .refused(error)
    }
    let digest = SHA256.hash(Array(snapshot.jsonData))
    var facts = SnapshotFacts(snapshot.customerInfo)
    facts.verification = .known(.notRequested)
    let deviceBlock: String?
    do {
      deviceBlock = try DeviceBlockColumn.encode(facts)
    } catch {
      throw .invalidSnapshot(error)
    }
    let policy = configuration.policy
    var outcome = ImportOutcome.imported
    try write(.store, scope: scope) { store, marks throws(SQLiteError) in
      let row = try store.scopeRow(for: scope)
      guard row?.hasSnapshot != true else {
        outcome = .scopeAlreadyFilled
        return { _ in }
      }
      let bookkeeping: ScopeBookkeeping
      do throws(ImportRefusal) {
        bookkeeping = try request.bookkeeping(
          at: now, bootInstant: boot, over: row?.bookkeeping, policy: policy, digest: digest)
      } catch {
        outcome = .refused(error)
        return { _ in }
      }
      let rows = SnapshotRows(
        snapshot: snapshot, digest: digest,
        entitlements: EntitlementFacts.table(for: snapshot.customerInfo), facts: facts,
        trust: StoredTrust(signature: nil, requestNonce: nil, checkedAt: nil, writerVerdict: nil),
        deviceBlock: deviceBlock, writtenAt: bookkeeping.deviceHighWaterMark, boot: nil,
        imported: (bookkeeping.storedAt ?? bookkeeping.deviceHighWaterMark, bookkeeping.origin))
      let written = try store.writeSnapshot(rows, for: scope)
      return installing(rows, written: written, for: scope, marks: marks)
    }
    return outcome
  }
}
