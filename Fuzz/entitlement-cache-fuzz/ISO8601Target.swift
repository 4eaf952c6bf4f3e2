import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The library's ISO-8601 parser and formatter (`Text/ISO8601.swift`), on the input as text:
/// - the parser agrees with a plain reference reading of the same rules, written differently
///   (fields by position, days counted from year 0), on whether the text is a date and which
///   instant it is;
/// - a parsed date is a whole millisecond, formats to text that parses back to it, and that
///   text formats to itself;
/// - an instant made of the input's first eight bytes formats to text that parses back to it
///   inside 0000-9999, and is rejected outside.
enum ISO8601Target {
  static func run(_ data: Data) {
    let text = String(decoding: data, as: UTF8.self)
    let parsed = Date(iso8601: text)
    let expected = ReferenceISO8601.milliseconds(Array(text.utf8))
    require(
      parsed?.unixMilliseconds == expected,
      "parse gives \(parsed.map { String($0.unixMilliseconds) } ?? "nil") ms, the reference "
        + "\(expected.map(String.init) ?? "nil")")
    if let parsed {
      checkRoundTrip(parsed)
    }
    if data.count >= 8 {
      let raw = data.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      // Within ±2^49 ms (±17,800 years): both sides of the range, and within the 2^50 ms in
      // which `Date` holds every millisecond apart (farther out, neighbours share a Double).
      let milliseconds = Int64(bitPattern: raw) % (1 << 49)
      let date = Date(unixMilliseconds: milliseconds)
      require(date.unixMilliseconds == milliseconds, "\(milliseconds) ms does not read back")
      if ReferenceISO8601.range.contains(milliseconds) {
        checkRoundTrip(date)
      } else {
        require(
          Date(iso8601: date.iso8601) == nil,
          "\(date.iso8601), outside 0000-9999, parses")
      }
    }
  }

  private static func checkRoundTrip(_ date: Date) {
    require(
      Date(unixMilliseconds: date.unixMilliseconds) == date, "a parsed date is not whole ms")
    let formatted = date.iso8601
    guard let again = Date(iso8601: formatted) else {
      require(false, "the formatted date \(formatted) does not parse")
      return
    }
    require(again == date, "\(formatted) parses to another instant")
    require(again.iso8601 == formatted, "\(formatted) formats differently once parsed")
  }
}

/// The accepted form read the plain way, as an oracle for the parser: exactly
/// `YYYY-MM-DD[Tt]HH:MM:SS[.f{1,9}](Z|z|±HH:MM|±HHMM)`, fields range-checked, `:60` read as
/// 59.999 s, the fraction truncated to milliseconds, the UTC instant within 0000-9999.
enum ReferenceISO8601 {
  /// Unix milliseconds of 0000-01-01T00:00:00Z through 9999-12-31T23:59:59.999Z.
  static let range: ClosedRange<Int64> = {
    let first = (daysBefore(year: 0) - daysBefore(year: 1970)) * 86_400_000
    let end = (daysBefore(year: 10_000) - daysBefore(year: 1970)) * 86_400_000
    return first...(end - 1)
  }()

  static func milliseconds(_ bytes: [UInt8]) -> Int64? {
    guard bytes.count >= 20 else { return nil }
    func digits(_ from: Int, _ count: Int) -> Int? {
      guard from + count <= bytes.count else { return nil }
      var value = 0
      for byte in bytes[from..<from + count] {
        guard (48...57).contains(byte) else { return nil }
        value = value * 10 + Int(byte) - 48
      }
      return value
    }
    func at(_ index: Int, _ characters: String) -> Bool {
      index < bytes.count && characters.utf8.contains(bytes[index])
    }
    guard at(4, "-"), at(7, "-"), at(10, "Tt"), at(13, ":"), at(16, ":"),
      let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
      let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2)
    else { return nil }
    var index = 19
    var fraction = 0
    if at(index, ".") {
      var count = 0
      index += 1
      while index < bytes.count, (48...57).contains(bytes[index]) {
        if count < 3 { fraction = fraction * 10 + Int(bytes[index]) - 48 }
        count += 1
        index += 1
      }
      guard (1...9).contains(count) else { return nil }
      for _ in count..<max(count, 3) { fraction *= 10 }
    }
    let offsetMinutes: Int
    switch bytes.count - index {
    case 1 where at(index, "Zz"):
      offsetMinutes = 0
    case 5 where at(index, "+-"), 6 where at(index, "+-") && at(index + 3, ":"):
      guard let hours = digits(index + 1, 2), let minutes = digits(bytes.count - 2, 2),
        hours < 24, minutes < 60
      else { return nil }
      offsetMinutes = (at(index, "-") ? -1 : 1) * (hours * 60 + minutes)
    default:
      return nil
    }
    let leap = year % 400 == 0 || (year % 4 == 0 && year % 100 != 0)
    let monthLengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    guard (1...12).contains(month), (1...monthLengths[month - 1]).contains(day), hour < 24,
      minute < 60, second <= 60
    else { return nil }
    let days =
      daysBefore(year: year) - daysBefore(year: 1970)
      + Int64(monthLengths.prefix(month - 1).reduce(0, +) + day - 1)
    let secondMilliseconds = second == 60 ? 59_999 : second * 1000 + fraction
    let local =
      days * 86_400_000 + Int64(hour * 3_600_000 + minute * 60_000 + secondMilliseconds)
    let instant = local - Int64(offsetMinutes) * 60_000
    return range.contains(instant) ? instant : nil
  }

  /// Days from 0000-01-01 to January 1 of `year` (≥ 0): 365 a year plus the leap years
  /// 0, 4, 8, ... before it, less the centuries, plus the fourth centuries.
  static func daysBefore(year: Int) -> Int64 {
    let y = Int64(year)
    return 365 * y + (y + 3) / 4 - (y + 99) / 100 + (y + 399) / 400
  }
}
