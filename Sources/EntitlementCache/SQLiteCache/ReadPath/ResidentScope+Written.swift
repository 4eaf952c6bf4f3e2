#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension ResidentScope {
  /// The scope as a read of the rows a write just put in the file would find it, built from
  /// what the write had in hand (see ``ScopeRow``): complete, with its details, so the next
  /// read of any key answers from memory.
  ///
  /// - Parameter lastUsedAt: The later of the write's time and the last use reads had marked.
  convenience init(written rows: SnapshotRows, as written: WrittenSnapshot, lastUsedAt: Date) {
    let scopeRow = ScopeRow(
      writtenAt: rows.writtenAt, rowID: written.rowID, revision: written.revision,
      requestDate: rows.snapshot.customerInfo.requestDate, boot: rows.boot, facts: rows.facts,
      lastUsedAt: lastUsedAt, pendingPurchase: written.pendingPurchase, imported: rows.imported)
    self.init(
      scopeRow: scopeRow, entitlements: rows.entitlements, isComplete: true,
      details: ScopeDetails(
        written: rows.snapshot, at: rows.imported?.savedAt ?? rows.writtenAt, digest: rows.digest))
  }
}
