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
