#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What reads learn about a scope and the file must eventually hold: the latest device time a
/// read saw (raising the high-water mark; <doc:Storage#Bookkeeping>) and the latest use (for
/// retention).
///
/// Reads raise them in memory only; the next write transaction, ``SQLiteCustomerInfoCache/flush()``
/// or ``SQLiteCustomerInfoCache/close()`` persists them, so the hot read never writes. One name
/// for one idea, wherever the marks are: on a resident, dropped with one, or on their way to
/// the file.
struct ReadMarks: Sendable, Hashable {
  /// The latest device time a read saw.
  var highWaterMark: Date
  var lastUsedAt: Date
  /// The refresh the reads were made under (``ScopeRow/refreshRevision``): the mark applies
  /// to that refresh only, since the next one resets it (<doc:TimeModel>).
  var refreshRevision: Int64?

  /// Both sets of marks in one. `self` is the newer: when the two were read under different
  /// refreshes, its mark is kept and the other's dropped with its refresh.
  func merged(with other: ReadMarks?) -> ReadMarks {
    guard let other else { return self }
    var merged = self
    if other.refreshRevision == refreshRevision {
      merged.highWaterMark = max(highWaterMark, other.highWaterMark)
    }
    merged.lastUsedAt = max(lastUsedAt, other.lastUsedAt)
    return merged
  }

  /// Whether `other` holds nothing these marks do not.
  func covers(_ other: ReadMarks) -> Bool {
    other.highWaterMark <= highWaterMark && other.lastUsedAt <= lastUsedAt
  }
}
