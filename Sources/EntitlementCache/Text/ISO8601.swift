#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A strict ISO-8601 (RFC 3339 profile) timestamp parser and formatter for snapshot dates.
///
/// Foundation's formatters are avoided on purpose: they are slow on the hot path, and they
/// accept forms (missing offsets, two-digit fields, out-of-range days) that would let a malformed
/// server date slip into an expiry decision. Everything here works on UTF-8 bytes and integers.
enum ISO8601 {
  /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]` followed by `Z`, `z`, `+HH:MM`, `-HH:MM`, `+HHMM`
  /// or `-HHMM`.
  ///
  /// The `T` may also be `t`. The fraction has 1 to 9 digits. Fields are range-checked: month
  /// 1-12, day within the month (leap years included), hour 0-23, minute 0-59, second 0-59, and
  /// offset hours 0-23 and minutes 0-59. A leap second (`:60`) is accepted and clamped to
  /// 59.999 seconds, because `Date` cannot represent it and rejecting a server's date for it
  /// would be worse. The instant itself, once the offset is applied, must fall within
  /// 0000-01-01T00:00:00Z through 9999-12-31T23:59:59.999Z: `9999-12-31T23:59:59-08:00` is in
  /// year 10000 in UTC and is rejected, so every date this accepts formats and parses back to
  /// the same instant (``format(_:)`` writes UTC).
  ///
  /// - Parameter text: The timestamp, with nothing before or after it.
  /// - Returns: The instant, truncated (floored) to whole milliseconds because the cache keeps
  ///   times at millisecond precision, or `nil` when `text` is not exactly that form.
  static func parse(_ text: String) -> Date? {
    parse(text, checkingRange: true)
  }

  /// Whether `text` is a well-formed timestamp whose instant lies outside the range
  /// ``parse(_:)`` reads: `9999-12-31T23:59:59-08:00`, or a year in ISO-8601's expanded form
  /// (`+10000-01-30T23:59:59Z`, `-0001-…`, `10000-…`). Lets an error say "out of range"
  /// rather than "not a timestamp".
  static func isOutOfRange(_ text: String) -> Bool {
    var rest = Substring(text)
    let sign = rest.first == "+" || rest.first == "-" ? rest.first : nil
    if sign != nil { rest = rest.dropFirst() }
    let digits = rest.prefix { $0.isASCII && $0.isNumber }
    if sign != nil || digits.count > 4 {
      // An expanded year: out of range when its value is (`+2026-…` is merely another form),
      // and the rest must be a valid timestamp's, checked on a year that is in range.
      guard digits.count >= 4,
        parse("2000" + rest.dropFirst(digits.count), checkingRange: true) != nil
      else { return false }
      let value = Int(digits.drop { $0 == "0" }.prefix(9)) ?? 0
      return sign == "-" ? value > 0 : value > 9999 || digits.drop { $0 == "0" }.count > 9
    }
    return parse(text, checkingRange: false) != nil && parse(text) == nil
  }

  private static func parse(_ text: String, checkingRange: Bool) -> Date? {
    if let result = text.utf8.withContiguousStorageIfAvailable({
      parse(bytes: $0, checkingRange: checkingRange)
    }) {
      return result
    }
    // Only strings bridged from other representations land here; native strings are contiguous.
    return Array(text.utf8).withUnsafeBufferPointer {
      parse(bytes: $0, checkingRange: checkingRange)
    }
  }

  /// Formats `date` in UTC: `2026-11-30T12:00:00Z`, or `2026-11-30T12:00:00.250Z` when the
  /// milliseconds are not zero.
  ///
  /// Sub-millisecond precision is floored away, matching ``parse(_:)``. Years outside
  /// 0000-9999 use ISO-8601's expanded form (`+10000-…`, `-0001-…`), which ``parse(_:)``
  /// deliberately rejects. No parsed date is ever outside that range (see ``parse(_:)``), so a
  /// snapshot rebuilt from its model always reads back.
  ///
  /// - Parameter date: The instant to format.
  /// - Returns: The timestamp text.
  static func format(_ date: Date) -> String {
    let milliseconds = date.unixMilliseconds
    let days = floorDivide(milliseconds, millisecondsPerDay)
    let timeOfDay = milliseconds - days * millisecondsPerDay
    let (year, month, day) = civil(fromDays: days)

    var bytes: [UInt8] = []
    bytes.reserveCapacity(32)
    if (0...9999).contains(year) {
      appendDigits(year, count: 4, to: &bytes)
    } else {
      let digits = Array(String(year.magnitude).utf8)
      bytes.append(year < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
      bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, 4 - digits.count)))
      bytes.append(contentsOf: digits)
    }
    bytes.append(UInt8(ascii: "-"))
    appendDigits(month, count: 2, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    appendDigits(day, count: 2, to: &bytes)
    bytes.append(UInt8(ascii: "T"))
    appendDigits(timeOfDay / 3_600_000, count: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendDigits(timeOfDay / 60_000 % 60, count: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendDigits(timeOfDay / 1000 % 60, count: 2, to: &bytes)
    let fraction = timeOfDay % 1000
    if fraction != 0 {
      bytes.append(UInt8(ascii: "."))
      appendDigits(fraction, count: 3, to: &bytes)
    }
    bytes.append(UInt8(ascii: "Z"))
    return String(decoding: bytes, as: UTF8.self)
  }

  // MARK: - Parsing

  /// The number of milliseconds in a day.
  private static let millisecondsPerDay: Int64 = 86_400_000

  /// Parses the whole of `bytes` as a timestamp; see ``parse(_:)`` for the accepted form.
  ///
  /// - Parameter bytes: The UTF-8 text.
  /// - Returns: The instant, or `nil` when the text is not exactly a valid timestamp.
  private static func parse(bytes: UnsafeBufferPointer<UInt8>, checkingRange: Bool) -> Date? {
    // The fixed-width prefix: "YYYY-MM-DDTHH:MM:SS" is 19 bytes.
    guard bytes.count >= 20,
      bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
      bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
      bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
      let year = number(bytes, at: 0, count: 4),
      let month = number(bytes, at: 5, count: 2),
      let day = number(bytes, at: 8, count: 2),
      let hour = number(bytes, at: 11, count: 2),
      let minute = number(bytes, at: 14, count: 2),
      let second = number(bytes, at: 17, count: 2),
      (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
      hour <= 23, minute <= 59, second <= 60
    else { return nil }

    var index = 19
    var millisecond: Int64 = 0
    if bytes[index] == UInt8(ascii: ".") {
      index += 1
      let start = index
      while index < bytes.count, isDigit(bytes[index]) {
        // Digits past the third only need validating: truncation drops them.
        if index - start < 3 {
          millisecond = millisecond * 10 + Int64(bytes[index] &- UInt8(ascii: "0"))
        }
        index += 1
      }
      let digitCount = index - start
      guard (1...9).contains(digitCount) else { return nil }
      for _ in min(digitCount, 3)..<3 { millisecond *= 10 }
    }

    guard let offsetMinutes = offset(bytes, at: index) else { return nil }

    let days = daysFromCivil(year: year, month: month, day: day)
    let secondMilliseconds =
      second == 60 ? 59_999 : Int64(second) * 1000 + millisecond
    let local =
      days * millisecondsPerDay + Int64(hour) * 3_600_000 + Int64(minute) * 60_000
      + secondMilliseconds
    let instant = local - Int64(offsetMinutes) * 60_000
    // The range is the UTC instant's, not the local fields': an offset can carry a date in
    // year 9999 or 0000 out of the range the formatter writes in the basic form.
    guard !checkingRange || (firstInstant...lastInstant).contains(instant) else { return nil }
    return Date(unixMilliseconds: instant)
  }

  /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, in Unix milliseconds: the instants
  /// ``format(_:)`` writes in the four-digit form that ``parse(_:)`` reads.
  static let firstInstant: Int64 = -62_167_219_200_000
  static let lastInstant: Int64 = 253_402_300_799_999

  /// Parses the UTC offset that must end the text, starting at `index`.
  ///
  /// - Parameters:
  ///   - bytes: The UTF-8 text.
  ///   - index: Where the offset starts.
  /// - Returns: The offset east of UTC in minutes, or `nil` when the rest of the text is not
  ///   exactly one of `Z`, `z`, `±HH:MM` or `±HHMM`.
  private static func offset(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
    let remaining = bytes.count - index
    guard remaining >= 1 else { return nil }
    let sign = bytes[index]
    if sign == UInt8(ascii: "Z") || sign == UInt8(ascii: "z") {
      return remaining == 1 ? 0 : nil
    }
    guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
    let minutesAt: Int
    switch remaining {
    case 6 where bytes[index + 3] == UInt8(ascii: ":"): minutesAt = index + 4
    case 5: minutesAt = index + 3
    default: return nil
    }
    guard let hours = number(bytes, at: index + 1, count: 2), hours <= 23,
      let minutes = number(bytes, at: minutesAt, count: 2), minutes <= 59
    else { return nil }
    let magnitude = hours * 60 + minutes
    return sign == UInt8(ascii: "-") ? -magnitude : magnitude
  }

  /// Reads exactly `count` ASCII digits starting at `index`.
  ///
  /// - Parameters:
  ///   - bytes: The UTF-8 text; the caller guarantees `index + count <= bytes.count`.
  ///   - index: The first digit.
  ///   - count: How many digits to read.
  /// - Returns: Their decimal value, or `nil` if any byte is not a digit.
  private static func number(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, count: Int)
    -> Int?
  {
    var value = 0
    for position in index..<(index + count) {
      let byte = bytes[position]
      guard isDigit(byte) else { return nil }
      value = value * 10 + Int(byte &- UInt8(ascii: "0"))
    }
    return value
  }

  /// Whether `byte` is an ASCII digit; other Unicode digits are not accepted.
  ///
  /// - Parameter byte: A UTF-8 code unit.
  /// - Returns: `true` for `0` through `9`.
  private static func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  // MARK: - Calendar arithmetic (proleptic Gregorian)

  /// Integer division rounded toward negative infinity, which the calendar arithmetic needs for
  /// dates before 1970 (Swift's `/` rounds toward zero).
  ///
  /// - Parameters:
  ///   - dividend: The value to divide.
  ///   - divisor: A positive divisor.
  /// - Returns: The floored quotient.
  private static func floorDivide(_ dividend: Int64, _ divisor: Int64) -> Int64 {
    let quotient = dividend / divisor
    return dividend % divisor < 0 ? quotient - 1 : quotient
  }

  /// The number of days in `month` of `year`.
  ///
  /// - Parameters:
  ///   - month: 1-12.
  ///   - year: Any year; leap years follow the Gregorian rule.
  /// - Returns: 28 to 31.
  private static func daysIn(month: Int, year: Int) -> Int {
    switch month {
    case 2:
      let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
      return isLeap ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// Days since 1970-01-01 of a valid civil date (Howard Hinnant's `days_from_civil`).
  ///
  /// - Parameters:
  ///   - year: The year.
  ///   - month: 1-12.
  ///   - day: 1-31, valid for the month.
  /// - Returns: The day number; negative before 1970.
  private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
    // Counting from March puts the leap day at the end of the shifted year.
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = floorDivide(y, 400)
    let yearOfEra = y - era * 400
    let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
    let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The civil date of a day number (Howard Hinnant's `civil_from_days`).
  ///
  /// - Parameter days: Days since 1970-01-01; negative before 1970.
  /// - Returns: The year, month (1-12) and day (1-31).
  private static func civil(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
    let shifted = days + 719_468
    let era = floorDivide(shifted, 146_097)
    let dayOfEra = shifted - era * 146_097
    let yearOfEra =
      (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
    let month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return (year, month, day)
  }

  // MARK: - Formatting helpers

  /// Appends `value` as exactly `count` zero-padded decimal digits.
  ///
  /// - Parameters:
  ///   - value: A non-negative value below `10^count`.
  ///   - count: The number of digits to write.
  ///   - bytes: The buffer to append to.
  private static func appendDigits<Value: BinaryInteger>(
    _ value: Value, count: Int, to bytes: inout [UInt8]
  ) {
    let start = bytes.count
    bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
    var remaining = value
    for position in stride(from: start + count - 1, through: start, by: -1) {
      bytes[position] = UInt8(ascii: "0") + UInt8(remaining % 10)
      remaining /= 10
    }
  }
}

extension Date {
  /// Milliseconds from the Unix epoch to `Date`'s reference date (2001-01-01T00:00:00Z).
  private static let referenceDateUnixMilliseconds: Int64 = 978_307_200_000

  /// Milliseconds since 1970-01-01T00:00:00Z, floored.
  ///
  /// Computed from `timeIntervalSinceReferenceDate`, the value `Date` actually stores, so that
  /// no floating-point epoch shift can round a value built by ``init(unixMilliseconds:)`` down
  /// by one millisecond. Non-finite or astronomically distant dates clamp to the `Int64` range.
  package var unixMilliseconds: Int64 {
    let seconds = timeIntervalSinceReferenceDate
    let scaled = (seconds * 1000).rounded(.down)
    // 9.2e18 is just inside Int64's range, so the conversion below cannot trap.
    guard scaled.isFinite, abs(scaled) < 9.2e18 else {
      return seconds < 0 ? .min : .max
    }
    var milliseconds = Int64(scaled)
    // `seconds * 1000` may land a hair below or above the exact product; settle on the largest
    // count whose own representation does not exceed the stored value. Far beyond year 9999
    // (2^50 ms is about 35,000 years) neighbouring counts share a Double, so skip the settling.
    if milliseconds.magnitude < 1 << 50 {
      while Double(milliseconds) / 1000 > seconds { milliseconds -= 1 }
      while Double(milliseconds + 1) / 1000 <= seconds { milliseconds += 1 }
    }
    let (result, overflow) = milliseconds.addingReportingOverflow(
      Self.referenceDateUnixMilliseconds)
    return overflow ? .max : result
  }

  /// This date floored to the millisecond, the precision the file keeps every time in.
  package var truncatedToMilliseconds: Date { Date(unixMilliseconds: unixMilliseconds) }

  /// The date at exactly `milliseconds` since the Unix epoch.
  ///
  /// - Parameter milliseconds: Milliseconds since 1970-01-01T00:00:00Z; negative before 1970.
  package init(unixMilliseconds milliseconds: Int64) {
    // Shifting to the reference date in integers keeps the only rounding in one division,
    // which ``unixMilliseconds`` can undo exactly.
    let (relative, overflow) = milliseconds.subtractingReportingOverflow(
      Self.referenceDateUnixMilliseconds)
    if overflow {
      self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    } else {
      self.init(timeIntervalSinceReferenceDate: Double(relative) / 1000)
    }
  }
}

extension Date {
  /// Parses a timestamp with exactly the rules snapshot dates follow (see ``ISO8601/parse(_:)``),
  /// so the command-line tool's `--now` accepts what a snapshot accepts and nothing else.
  package init?(iso8601 text: String) {
    guard let date = ISO8601.parse(text) else { return nil }
    self = date
  }

  /// The date as the cache writes it: `2026-11-30T12:00:00Z`, milliseconds when not zero.
  package var iso8601: String { ISO8601.format(self) }

  /// The instants ``init(iso8601:)`` reads: 0000-01-01T00:00:00Z through
  /// 9999-12-31T23:59:59.999Z. A computed instant (a boundary, the server's estimated time)
  /// can lie beyond them; output that must read back clamps to them.
  package static let iso8601Range: ClosedRange<Date> =
    Date(unixMilliseconds: ISO8601.firstInstant)...Date(unixMilliseconds: ISO8601.lastInstant)

  /// Whether `text` is a well-formed timestamp outside ``iso8601Range``, such as year 10000.
  package static func iso8601IsOutOfRange(_ text: String) -> Bool {
    ISO8601.isOutOfRange(text)
  }
}
