/// An instant in whole Unix milliseconds: the precision the cache keeps, so every comparison
/// this module makes (a grace end after an expiry, an expiry before the request) is the one the
/// cache will make on the same dates.
///
/// Written on integers rather than Foundation's formatters, which accept forms (a missing
/// offset, a two-digit field) that would let a malformed date decide an entitlement, and whose
/// fractional output can round a millisecond the wrong way.
struct Timestamp: Hashable, Comparable {
  /// Milliseconds since 1970-01-01T00:00:00Z.
  var milliseconds: Int64

  /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: the instants the cache reads.
  static let earliest: Int64 = -62_167_219_200_000
  static let latest: Int64 = 253_402_300_799_999

  /// An instant within ``earliest`` and ``latest``; nil outside them, which the cache would
  /// refuse.
  init?(milliseconds: Int64) {
    guard (Self.earliest...Self.latest).contains(milliseconds) else { return nil }
    self.milliseconds = milliseconds
  }

  static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

  /// Parses an ISO-8601 timestamp with a UTC offset, the forms the cache reads:
  /// `YYYY-MM-DDTHH:MM:SS[.fraction]` then `Z`, `±HH:MM` or `±HHMM`, the `T` and `Z` in either
  /// case, the fraction 1 to 9 digits and floored to the millisecond. Nil for anything else, and
  /// for an instant the cache would not read, so a date this accepts is one the cache accepts.
  init?(rfc3339 text: String) {
    let bytes = Array(text.utf8)
    guard bytes.count >= 20, bytes[4] == dash, bytes[7] == dash,
      bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
      bytes[13] == colon, bytes[16] == colon,
      let year = Self.digits(bytes, 0, 4), let month = Self.digits(bytes, 5, 2),
      let day = Self.digits(bytes, 8, 2), let hour = Self.digits(bytes, 11, 2),
      let minute = Self.digits(bytes, 14, 2), let second = Self.digits(bytes, 17, 2),
      (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day),
      hour <= 23, minute <= 59, second <= 60
    else { return nil }
    var index = 19
    var fraction: Int64 = 0
    if bytes[index] == UInt8(ascii: ".") {
      index += 1
      let start = index
      while index < bytes.count, Self.isDigit(bytes[index]) {
        if index - start < 3 { fraction = fraction * 10 + Int64(bytes[index] - zero) }
        index += 1
      }
      let count = index - start
      guard (1...9).contains(count) else { return nil }
      for _ in min(count, 3)..<3 { fraction *= 10 }
    }
    guard let offsetMinutes = Self.offset(bytes, from: index) else { return nil }
    // A leap second is held at 59.999, as the cache holds it: `Date` has no 60th second.
    let secondMilliseconds = second == 60 ? 59_999 : second * 1000 + fraction
    let local =
      Self.days(year: year, month: month, day: day) * 86_400_000 + hour * 3_600_000
      + minute * 60_000 + secondMilliseconds
    self.init(milliseconds: local - offsetMinutes * 60_000)
  }

  /// The instant in UTC as the cache writes it: `2026-11-30T12:00:00Z`, with `.250` before the
  /// `Z` when the milliseconds are not zero.
  var rfc3339: String {
    let days = floorDivide(milliseconds, 86_400_000)
    let time = milliseconds - days * 86_400_000
    let (year, month, day) = Self.civil(days: days)
    var text =
      pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(time / 3_600_000, 2)
      + ":" + pad(time / 60_000 % 60, 2) + ":" + pad(time / 1000 % 60, 2)
    if time % 1000 != 0 { text += "." + pad(time % 1000, 3) }
    return text + "Z"
  }

  // MARK: Calendar arithmetic (proleptic Gregorian, days since 1970-01-01)

  private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = floorDivide(shiftedYear, 400)
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  private static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let shifted = days + 719_468
    let era = floorDivide(shifted, 146_097)
    let dayOfEra = shifted - era * 146_097
    let yearOfEra =
      (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    return (year, month, day)
  }

  private static func daysIn(month: Int64, year: Int64) -> Int64 {
    switch month {
    case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// The offset east of UTC in minutes, which must end the text.
  private static func offset(_ bytes: [UInt8], from index: Int) -> Int64? {
    guard index < bytes.count else { return nil }
    let sign = bytes[index]
    if sign == UInt8(ascii: "Z") || sign == UInt8(ascii: "z") {
      return index + 1 == bytes.count ? 0 : nil
    }
    let minutesAt: Int
    switch bytes.count - index {
    case 6 where bytes[index + 3] == colon: minutesAt = index + 4
    case 5: minutesAt = index + 3
    default: return nil
    }
    guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"),
      let hours = digits(bytes, index + 1, 2), hours <= 23,
      let minutes = digits(bytes, minutesAt, 2), minutes <= 59
    else { return nil }
    return sign == UInt8(ascii: "-") ? -(hours * 60 + minutes) : hours * 60 + minutes
  }

  private static func digits(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int64? {
    var value: Int64 = 0
    for byte in bytes[start..<start + count] {
      guard isDigit(byte) else { return nil }
      value = value * 10 + Int64(byte - zero)
    }
    return value
  }

  private static func isDigit(_ byte: UInt8) -> Bool { (zero...UInt8(ascii: "9")).contains(byte) }
}

private let zero = UInt8(ascii: "0")
private let dash = UInt8(ascii: "-")
private let colon = UInt8(ascii: ":")

private func floorDivide(_ dividend: Int64, _ divisor: Int64) -> Int64 {
  let quotient = dividend / divisor
  return dividend % divisor < 0 ? quotient - 1 : quotient
}

private func pad(_ value: Int64, _ width: Int) -> String {
  let text = String(value)
  return String(repeating: "0", count: max(0, width - text.count)) + text
}
