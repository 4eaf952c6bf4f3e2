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

  /// The longest duration read: 100 years. Every window of a policy or a script fits, and a
  /// longer one is a typo, not a setting.
  static let longestSeconds: Int64 = 36_500 * 86_400

  /// Why a text is not a duration.
  enum Problem: Error, CustomStringConvertible {
    /// Not the form at all: a fraction, a sign, a space, an unknown unit.
    case notADuration
    /// The form, but longer than ``longestSeconds``.
    case outOfRange

    var description: String {
      switch self {
      case .notADuration: "is not a duration such as 90, 90s, 5m, 12h or 30d"
      case .outOfRange: "is out of range: at most 36500d (100 years)"
      }
    }
  }

  /// Parses a whole number of seconds, minutes, hours or days; a bare number is seconds.
  static func parse(_ text: String) -> Result<TimeInterval, Problem> {
    wholeSeconds(Substring(text)).map { TimeInterval($0) }
  }

  /// Parses what ``parse(_:)`` reads, and whole milliseconds too (`500ms`), as an exact
  /// duration: the simulation's virtual clock schedules to the millisecond, and a
  /// `TimeInterval` would make `1500ms` a sum of rounded binary fractions.
  static func parseMilliseconds(_ text: String) -> Result<Duration, Problem> {
    if text.hasSuffix("ms") {
      return wholeNumber(text.dropLast(2)).flatMap { milliseconds in
        milliseconds <= longestSeconds * 1000
          ? .success(.milliseconds(milliseconds)) : .failure(.outOfRange)
      }
    }
    return wholeSeconds(Substring(text)).map { .seconds($0) }
  }

  private static func wholeSeconds(_ text: Substring) -> Result<Int64, Problem> {
    var digits = text
    var multiplier: Int64 = 1
    if let last = digits.last, let unit = units.first(where: { $0.suffix == last }) {
      multiplier = unit.seconds
      digits = digits.dropLast()
    }
    return wholeNumber(digits).flatMap { number in
      let (seconds, overflow) = number.multipliedReportingOverflow(by: multiplier)
      return !overflow && seconds <= longestSeconds ? .success(seconds) : .failure(.outOfRange)
    }
  }

  /// ASCII digits; a number too large for an Int64 is out of range, not malformed.
  private static func wholeNumber(_ digits: Substring) -> Result<Int64, Problem> {
    guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else {
      return .failure(.notADuration)
    }
    return Int64(digits).map { .success($0) } ?? .failure(.outOfRange)
  }
}
