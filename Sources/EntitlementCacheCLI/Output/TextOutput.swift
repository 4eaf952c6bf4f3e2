import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Human-readable pieces: times in ISO-8601 and relative form, sizes, aligned columns.
/// Hand-written because Foundation's formatters load ICU, which costs start-up time.
enum TextOutput {
  /// Shown where a value does not apply.
  static let none = "—"

  /// `2026-12-07T12:00:00Z (in 7 d)`, or `—`.
  static func time(_ date: Date?, now: Date) -> String {
    guard let date else { return none }
    return "\(date.iso8601) (\(relative(date, to: now)))"
  }

  /// `in 3 d`, `2 h ago`, `now`: one unit, rounded to the nearest, so it reads at a glance.
  static func relative(_ date: Date, to now: Date) -> String {
    let seconds = date.timeIntervalSince(now)
    guard abs(seconds) >= 0.5 else { return "now" }
    let amount = duration(abs(seconds))
    return seconds > 0 ? "in \(amount)" : "\(amount) ago"
  }

  /// `42 s`, `10 m`, `5 h`, `20 d`: one unit, rounded to the nearest.
  static func duration(_ magnitude: TimeInterval) -> String {
    // The unit is chosen after rounding, so 59.6 minutes reads "1 h", not "60 m". Dates are
    // years 0000-9999, so every rounded amount fits an Int.
    if magnitude.rounded() < 60 {
      return "\(Int(magnitude.rounded())) s"
    } else if (magnitude / 60).rounded() < 60 {
      return "\(Int((magnitude / 60).rounded())) m"
    } else if (magnitude / 3600).rounded() < 48 {
      return "\(Int((magnitude / 3600).rounded())) h"
    }
    return "\(Int((magnitude / 86_400).rounded())) d"
  }

  /// `0 s`, `+10 m (the server's clock was ahead of this device's)`, `-20 d (...behind...)`:
  /// the evidence's `clockOffset`, or `—`.
  static func clockOffset(_ seconds: Int?) -> String {
    guard let seconds else { return none }
    guard seconds != 0 else { return "0 s" }
    let side = seconds > 0 ? "ahead of" : "behind"
    return "\(signedDuration(seconds)) (the server's clock was \(side) this device's at the "
      + "last refresh)"
  }

  /// `+20 d`, `-10 m`: a whole number of seconds with its sign, in one unit.
  static func signedDuration(_ seconds: Int) -> String {
    "\(seconds > 0 ? "+" : "-")\(duration(TimeInterval(seconds.magnitude)))"
  }

  /// `512 B`, `48.0 KiB`, `1.5 MiB`.
  static func size(_ bytes: Int?) -> String {
    guard let bytes else { return none }
    guard bytes >= 1024 else { return "\(bytes) B" }
    let (unit, divisor) = bytes >= 1 << 20 ? ("MiB", 1 << 20) : ("KiB", 1024)
    // One decimal with integer arithmetic: String(format:) needs ICU.
    let tenths = (bytes * 10 + divisor / 2) / divisor
    return "\(tenths / 10).\(tenths % 10) \(unit)"
  }

  /// A count with thousands separators: `49,152`.
  static func count(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var grouped = ""
    for (index, digit) in digits.enumerated() {
      if index > 0, (digits.count - index) % 3 == 0 { grouped += "," }
      grouped.append(digit)
    }
    return (value < 0 ? "-" : "") + grouped
  }

  /// `verified`, `failed (tampered)` when the library decided why, the body's claim as it is
  /// without trust roots, `—` when unknown.
  static func verification(
    _ status: OpenEnum<VerificationStatus>?, _ failure: VerificationFailure?
  ) -> String {
    guard let status else { return none }
    guard let failure else { return status.rawValue }
    return "\(status.rawValue) (\(failure.rawValue))"
  }

  /// `yes` or `no`, `—` when unknown.
  static func yesNo(_ value: Bool?) -> String {
    value.map { $0 ? "yes" : "no" } ?? none
  }

  /// Rows with every column padded to its widest cell, joined by two spaces; trailing spaces
  /// are trimmed. Each row becomes one line with `indent` before it.
  static func table(_ rows: [[String]], indent: String = "") -> String {
    var widths: [Int] = []
    for row in rows {
      for (column, cell) in row.enumerated() {
        if column == widths.count { widths.append(0) }
        widths[column] = max(widths[column], cell.count)
      }
    }
    var output = ""
    for row in rows {
      var line = indent
      for (column, cell) in row.enumerated() {
        line +=
          column < row.count - 1
          ? cell + String(repeating: " ", count: widths[column] - cell.count + 2) : cell
      }
      while line.last == " " { line.removeLast() }
      output += line + "\n"
    }
    return output
  }

  /// `production 3fa4c1d2e5f6…`: the environment and a prefix of the scope hash.
  static func scope(_ scope: CacheScope) -> String {
    "\(scope.environment.rawValue) \(scope.key.hexPrefix)…"
  }
}
