#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Instants of a simulation in whole milliseconds, the cache's own precision.
///
/// Every printed time is rebuilt from an integer count of milliseconds the way the library
/// builds a parsed date, so it formats as exactly that instant: a `Date` summed from offsets in
/// floating point can land a hair below a whole millisecond and print one millisecond early.
enum SimulationTime {
  /// Milliseconds from the Unix epoch to `Date`'s reference date, 2001-01-01T00:00:00Z.
  private static let referenceDate: Int64 = 978_307_200_000

  /// The instants the ISO-8601 form without expansion writes, 0000-01-01T00:00:00Z through
  /// 9999-12-31T23:59:59.999Z, as the library parses and formats them.
  static let range: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

  /// `date` in whole milliseconds since the Unix epoch; nil outside years 0000-9999 (every
  /// parsed date is inside).
  static func milliseconds(_ date: Date) -> Int64? {
    let scaled = (date.timeIntervalSinceReferenceDate * 1000).rounded()
    guard let relative = Int64(exactly: scaled) else { return nil }
    let (milliseconds, overflow) = relative.addingReportingOverflow(referenceDate)
    return !overflow && range.contains(milliseconds) ? milliseconds : nil
  }

  /// The instant `milliseconds` after the Unix epoch, built as the library builds parsed dates.
  static func date(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSinceReferenceDate: Double(milliseconds - referenceDate) / 1000)
  }

  /// `duration` in whole milliseconds, rounded toward zero, clamped rather than trapping. In a
  /// simulation every wait is whole milliseconds (the client rounds its timers up to them), so
  /// nothing is lost.
  static func milliseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
    guard !overflow else { return seconds < 0 ? .min : .max }
    let (total, overflowAgain) = whole.addingReportingOverflow(
      attoseconds / 1_000_000_000_000_000)
    return overflowAgain ? (whole < 0 ? .min : .max) : total
  }
}
