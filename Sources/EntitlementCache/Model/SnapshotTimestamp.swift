#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The timestamps of the snapshot format (<doc:SnapshotFormat>), read and written with the
/// library's own rules, for an adapter that maps another format's dates to this one's
/// (such as `EntitlementCacheImport`): what it accepts is what a snapshot accepts.
public enum SnapshotTimestamp {
  /// The instant `text` names: ISO-8601 `YYYY-MM-DDTHH:MM:SS[.fraction]` with `Z`, `±HH:MM` or
  /// `±HHMM`, the fraction floored to the millisecond, years 0000 through 9999; nil for
  /// anything else.
  public static func date(from text: String) -> Date? { Date(iso8601: text) }

  /// `date` as a snapshot's timestamps are written, in UTC: `2026-11-30T12:00:00Z`, with the
  /// milliseconds when they are not zero.
  public static func text(of date: Date) -> String { date.iso8601 }
}
