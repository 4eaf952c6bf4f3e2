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
    var digits = Substring(text)
    var multiplier: Int64 = 1
    if let last = digits.last, let unit = units.first(where: { $0.suffix == last }) {
      multiplier = unit.seconds
      digits = digits.dropLast()
    }
    guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
      let value = Int64(digits)
    else { return nil }
    return TimeInterval(value * multiplier)
  }
}
