#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Durations as the command line writes them: `90`, `90s`, `5m`, `12h`, `30d`.
enum DurationText {
  private static let units: [(suffix: Character, seconds: Int64)] = [
    ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1),
  ]

  /// Parses a whole number of seconds, minutes, hours or days; a bare number is seconds.
  /// Nil for anything else, including fractions, signs, spaces and overflow.
  static func parse(_ text: String) -> TimeInterval? {
    wholeSeconds(text).map { TimeInterval($0) }
  }

  /// Parses what ``parse(_:)`` reads, and whole milliseconds too (`500ms`), as an exact
  /// duration: the simulation's virtual clock schedules to the millisecond, and a
  /// `TimeInterval` would make `1500ms` a sum of rounded binary fractions.
  static func parseMilliseconds(_ text: String) -> Duration? {
    if text.hasSuffix("ms") {
      return wholeNumber(text.dropLast(2)).map { .milliseconds($0) }
    }
    return wholeSeconds(text).map { .seconds($0) }
  }

  private static func wholeSeconds(_ text: String) -> Int64? {
    var digits = Substring(text)
    var multiplier: Int64 = 1
    if let last = digits.last, let unit = units.first(where: { $0.suffix == last }) {
      multiplier = unit.seconds
      digits = digits.dropLast()
    }
    return wholeNumber(digits).map { $0 * multiplier }
  }

  /// At most twelve ASCII digits, so that a number of days times 86,400 still fits an Int64.
  private static func wholeNumber(_ digits: Substring) -> Int64? {
    guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy({ $0.isASCII && $0.isNumber })
    else { return nil }
    return Int64(digits)
  }
}
