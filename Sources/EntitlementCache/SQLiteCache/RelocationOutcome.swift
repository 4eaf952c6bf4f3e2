/// What ``SQLiteCustomerInfoCache/relocate(from:)`` did.
public enum RelocationOutcome: Sendable, Hashable {
  /// Nothing is at the old path: the move is complete, or there never was a file. One
  /// `stat`, what every launch after the move costs.
  case nothingToMove
  /// The old file was merged into this cache's file and removed.
  case moved(RelocationSummary)
  /// The old file was merged into this cache's file, but another connection (another process,
  /// or another cache instance in this one) still has it open, so it was left where it is.
  /// Nothing is lost: the next call removes it and merges nothing again.
  case mergedNotRemoved(RelocationSummary)
}

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
