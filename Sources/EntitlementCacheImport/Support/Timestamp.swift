import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An instant in whole Unix milliseconds: the precision the cache keeps, so every comparison
/// this module makes (a grace end after an expiry, an expiry before the request) is the one the
/// cache will make on the same dates. Read and written by the library's own rules
/// (`SnapshotTimestamp`), so a date this accepts is one the cache accepts.
struct Timestamp: Hashable, Comparable {
  /// Milliseconds since 1970-01-01T00:00:00Z.
  var milliseconds: Int64

  /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: the instants the cache reads.
  static let earliest: Int64 = -62_167_219_200_000
  static let latest: Int64 = 253_402_300_799_999

  /// Seconds from 1970 to 2001, in milliseconds: `Date` keeps its time since 2001, where a
  /// millisecond count converts to seconds and back without rounding a millisecond away.
  private static let referenceOffset: Int64 = 978_307_200_000

  /// An instant within ``earliest`` and ``latest``; nil outside them, which the cache would
  /// refuse.
  init?(milliseconds: Int64) {
    guard (Self.earliest...Self.latest).contains(milliseconds) else { return nil }
    self.milliseconds = milliseconds
  }

  static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

  /// Parses a timestamp as a snapshot's are read; nil for anything the cache would refuse.
  init?(rfc3339 text: String) {
    guard let date = SnapshotTimestamp.date(from: text) else { return nil }
    // The library keeps whole milliseconds, so the nearest one is the one it read.
    let relative = (date.timeIntervalSinceReferenceDate * 1000).rounded()
    guard let whole = Int64(exactly: relative) else { return nil }
    self.init(milliseconds: whole + Self.referenceOffset)
  }

  /// The instant in UTC as the cache writes it: `2026-11-30T12:00:00Z`, with `.250` before the
  /// `Z` when the milliseconds are not zero.
  var rfc3339: String {
    SnapshotTimestamp.text(
      of: Date(
        timeIntervalSinceReferenceDate: Double(milliseconds - Self.referenceOffset) / 1000))
  }
}
