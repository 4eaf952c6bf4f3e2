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

  /// `2026-12-07T12:00:00Z (in 7 d)`, or `—`: relative to `now`, the device clock.
  static func time(_ date: Date?, now: Date) -> String {
    guard let date else { return none }
    guard Date.iso8601Range.contains(date) else { return timestamp(date) }
    return "\(date.iso8601) (\(relative(date, to: now)))"
  }

  /// A server-issued instant relative to the server's time as the cache estimates it:
  /// `2026-12-07T12:00:00Z (in 7 d)`, and `(in 7 d by server time)` when that estimate is a
  /// second or more from the device clock, so the relative part never seems to contradict the
  /// device time printed beside it.
  static func serverTime(_ date: Date?, serverNow: Date, deviceNow: Date) -> String {
    guard let date else { return none }
    guard Date.iso8601Range.contains(date) else { return timestamp(date) }
    let clock = abs(serverNow.timeIntervalSince(deviceNow)) >= 1 ? " by server time" : ""
    return "\(date.iso8601) (\(relative(date, to: serverNow))\(clock))"
  }

  /// `2026-12-07T12:00:00Z`; past the years 0000-9999, which the tool cannot read back,
  /// `beyond 9999-12-31T23:59:59.999Z` or `before 0000-01-01T00:00:00Z`.
  static func timestamp(_ date: Date) -> String {
    let range = Date.iso8601Range
    if date > range.upperBound { return "beyond \(range.upperBound.iso8601)" }
    if date < range.lowerBound { return "before \(range.lowerBound.iso8601)" }
    return date.iso8601
  }

  /// `date` within the years 0000-9999, the instants the tool reads back.
  static func clamped(_ date: Date) -> Date {
    min(max(date, Date.iso8601Range.lowerBound), Date.iso8601Range.upperBound)
  }

  /// `in 3 d`, `2 h ago`, `in <1 s`, `now`: one unit, rounded to the nearest, so it reads at a
  /// glance; `now` only at the instant itself.
  static func relative(_ date: Date, to now: Date) -> String {
    let seconds = date.timeIntervalSince(now)
    guard seconds != 0 else { return "now" }
    // A boundary half a second ahead is still ahead: "now" would read as already passed.
    guard abs(seconds) >= 0.5 else { return seconds > 0 ? "in <1 s" : "<1 s ago" }
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
    // One decimal with integer arithmetic: String(format:) needs ICU. Whole units and the
    // remainder apart, so a size the file claims near Int.max cannot overflow.
    let tenths = bytes / divisor * 10 + ((bytes % divisor) * 10 + divisor / 2) / divisor
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
  /// are trimmed. Each row becomes one line with `indent` before it. A cell may hold a
  /// server's or a user's string: it is escaped (``TerminalText/field(_:)``) so it stays in
  /// its cell and its line.
  static func table(_ rows: [[String]], indent: String = "") -> String {
    let rows = rows.map { $0.map(TerminalText.field) }
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

  /// `imported (LABEL): never verified; a put replaces it`, the label made safe for a terminal.
  static func importOrigin(_ label: String) -> String {
    "imported (\(TerminalText.excerpt(label))): never verified; a put replaces it"
  }
}
