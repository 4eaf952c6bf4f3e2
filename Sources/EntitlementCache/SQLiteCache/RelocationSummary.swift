/// What a move brought into the cache's file.
public struct RelocationSummary: Sendable, Hashable {
  /// Scopes whose snapshot now comes from the old file: this file held none for them, or an
  /// older one.
  public var snapshotsMoved = 0
  /// Scopes whose snapshot in this file was kept, and the old file's dropped: this file's is
  /// as new or newer, or, with trust roots, verified where the old file's is not.
  public var snapshotsKept = 0
  /// Queued purchases copied from the old file, with their state and observer.
  public var purchasesMoved = 0
  /// Purchases of the old file that this file had queued already (by transaction ID): kept
  /// once, as the file that posted it had it, else as it was observed first.
  public var purchasesAlreadyQueued = 0
  /// Whether an earlier call merged the old file already and stopped before removing it (the
  /// app was killed, or the file was still open): this call only removed it, and every count
  /// is zero.
  public var mergedEarlier = false
}
