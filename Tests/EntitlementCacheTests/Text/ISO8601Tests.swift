import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The strict timestamp parser and formatter that every snapshot date goes through.
@Suite("ISO8601")
struct ISO8601Tests {
  /// 2026-11-30T12:00:00Z in milliseconds since the Unix epoch.
  static let noonMilliseconds: Int64 = 1_796_040_000_000

  /// Parses `text` and returns its Unix milliseconds, or `nil` when it is rejected.
  ///
  /// - Parameter text: The timestamp to parse.
  /// - Returns: The parsed instant in milliseconds.
  static func milliseconds(_ text: String) -> Int64? {
    ISO8601.parse(text)?.unixMilliseconds
  }

  /// A UTC timestamp with `Z` (or `z`, or a lowercase `t`) is the instant it names.
  @Test(
    "Z designator",
    arguments: [
      "2026-11-30T12:00:00Z", "2026-11-30T12:00:00z", "2026-11-30t12:00:00Z",
      "2026-11-30T12:00:00+00:00", "2026-11-30T12:00:00-00:00", "2026-11-30T12:00:00+0000",
    ])
  func utc(text: String) {
    #expect(Self.milliseconds(text) == Self.noonMilliseconds)
  }

  /// Fractions of 1 to 9 digits are truncated, never rounded, to whole milliseconds.
  @Test(
    "Fractional seconds truncate to milliseconds",
    arguments: [
      (".2", 200), (".25", 250), (".250", 250), (".123", 123), (".9999", 999),
      (".123456", 123), (".999999", 999), (".000999", 0), (".123456789", 123),
      (".999999999", 999), (".000000001", 0),
    ] as [(String, Int64)])
  func fraction(fraction: String, expectedMilliseconds: Int64) {
    let text = "2026-11-30T12:00:00\(fraction)Z"
    #expect(Self.milliseconds(text) == Self.noonMilliseconds + expectedMilliseconds)
  }

  /// Offsets name local time: the UTC instant is the local time minus the offset.
  @Test(
    "Offsets convert to the UTC instant",
    arguments: [
      ("2026-11-30T17:30:00+05:30", "2026-11-30T12:00:00Z"),
      ("2026-11-30T17:30:00+0530", "2026-11-30T12:00:00Z"),
      ("2026-11-30T04:00:00-08:00", "2026-11-30T12:00:00Z"),
      ("2026-11-30T04:00:00-0800", "2026-11-30T12:00:00Z"),
      ("2026-12-01T02:15:00.5+14:15", "2026-11-30T12:00:00.500Z"),
      ("2026-11-29T22:00:00-14:00", "2026-11-30T12:00:00Z"),
      ("2027-01-01T01:00:00+01:00", "2027-01-01T00:00:00Z"),
      ("2026-12-31T23:30:00-00:30", "2027-01-01T00:00:00Z"),
    ])
  func offsets(local: String, utc: String) throws {
    let parsed = try #require(ISO8601.parse(local))
    #expect(parsed == ISO8601.parse(utc))
    #expect(ISO8601.format(parsed) == utc)
  }

  /// 2024 is a leap year; 2026, 1900 and 2100 are not; 2000 and year 0 are.
  @Test(
    "February 29 only in leap years",
    arguments: [
      ("2024-02-29T00:00:00Z", true), ("2026-02-29T00:00:00Z", false),
      ("2000-02-29T00:00:00Z", true), ("1900-02-29T00:00:00Z", false),
      ("2100-02-29T00:00:00Z", false), ("0000-02-29T00:00:00Z", true),
      ("2026-02-28T23:59:59Z", true),
    ])
  func leapYears(text: String, isValid: Bool) {
    #expect((ISO8601.parse(text) != nil) == isValid)
  }

  /// The day after February 29 follows it by exactly one day.
  @Test("Leap day arithmetic")
  func leapDayArithmetic() throws {
    let leapDay = try #require(Self.milliseconds("2024-02-29T00:00:00Z"))
    let nextDay = try #require(Self.milliseconds("2024-03-01T00:00:00Z"))
    #expect(nextDay - leapDay == 86_400_000)
    #expect(leapDay == 1_709_164_800_000)
  }

  /// Anything but the exact accepted form is rejected rather than guessed at.
  @Test(
    "Malformed input is rejected",
    arguments: [
      "",
      "2026-11-30T12:00:00",  // no offset
      "2026-11-30T12:00:00.250",  // fraction, no offset
      "2026-13-01T12:00:00Z",  // month 13
      "2026-00-01T12:00:00Z",  // month 0
      "2026-11-31T12:00:00Z",  // November has 30 days
      "2026-11-00T12:00:00Z",  // day 0
      "2026-11-30T24:00:00Z",  // hour 24
      "2026-11-30T12:60:00Z",  // minute 60
      "2026-11-30T12:00:61Z",  // second 61
      "2026-11-30T12:00:00Zjunk",  // trailing garbage
      "2026-11-30T12:00:00Z ",  // trailing space
      " 2026-11-30T12:00:00Z",  // leading space
      "2026-11-30 12:00:00Z",  // space instead of T
      "2026-11-30T12:00:00.1234567890Z",  // 10 fraction digits
      "2026-11-30T12:00:00.Z",  // empty fraction
      "2026-11-30T12:00:00,5Z",  // comma fraction
      "2026-11-30T12:00Z",  // no seconds
      "2026-11-30",  // date only
      "26-11-30T12:00:00Z",  // two-digit year
      "2026-1-30T12:00:00Z",  // one-digit month
      "+2026-11-30T12:00:00Z",  // signed year
      "12026-11-30T12:00:00Z",  // five-digit year
      "2026/11/30T12:00:00Z",  // wrong separators
      "20261130T120000Z",  // basic format
      "2026-11-30T12:00:00+05",  // offset without minutes
      "2026-11-30T12:00:00+5:30",  // one-digit offset hour
      "2026-11-30T12:00:00+24:00",  // offset hour 24
      "2026-11-30T12:00:00+05:60",  // offset minute 60
      "2026-11-30T12:00:00+05:30:00",  // offset with seconds
      "2026-11-30T12:00:00+05-30",  // wrong offset separator
      "2026-11-30T12:00:00UTC",  // named zone
      "2026-11-30T12:00:00ZZ",  // two designators
      "2026-11-30T12:00:00\u{FF3A}",  // fullwidth Z
      "2026-11-30T12:00:0\u{0661}Z",  // Arabic-Indic digit
    ])
  func rejects(text: String) {
    #expect(ISO8601.parse(text) == nil)
  }

  /// A leap second cannot be represented, so it clamps to the last millisecond of its minute.
  @Test("Leap second clamps to 59.999")
  func leapSecond() {
    #expect(Self.milliseconds("2016-12-31T23:59:60Z") == 1_483_228_799_999)
    #expect(Self.milliseconds("2016-12-31T23:59:60.5Z") == 1_483_228_799_999)
    #expect(Self.milliseconds("2017-01-01T05:29:60+05:30") == 1_483_228_799_999)
  }

  /// Formatting is UTC, with milliseconds only when they are not zero.
  @Test(
    "Format",
    arguments: [
      (noonMilliseconds, "2026-11-30T12:00:00Z"),
      (noonMilliseconds + 250, "2026-11-30T12:00:00.250Z"),
      (noonMilliseconds + 1, "2026-11-30T12:00:00.001Z"),
      (noonMilliseconds + 999, "2026-11-30T12:00:00.999Z"),
      (0, "1970-01-01T00:00:00Z"),
      (-1, "1969-12-31T23:59:59.999Z"),
      (-86_400_000, "1969-12-31T00:00:00Z"),
      (951_782_400_000, "2000-02-29T00:00:00Z"),
      (-62_167_219_200_000, "0000-01-01T00:00:00Z"),
      (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
      (253_402_300_800_000, "+10000-01-01T00:00:00Z"),
      (-62_167_219_200_001, "-0001-12-31T23:59:59.999Z"),
    ] as [(Int64, String)])
  func format(milliseconds: Int64, expected: String) {
    #expect(ISO8601.format(Date(unixMilliseconds: milliseconds)) == expected)
  }

  /// Expanded years are formatted for honesty but never accepted back.
  @Test("Years outside 0000-9999 are not parsed")
  func expandedYearsRejected() {
    #expect(ISO8601.parse("+10000-01-01T00:00:00Z") == nil)
    #expect(ISO8601.parse("-0001-12-31T23:59:59.999Z") == nil)
  }

  /// The range applies to the UTC instant: an offset must not carry a date past the ends of
  /// the range the formatter writes in four digits (issue 9, found by fuzzing the round trip).
  @Test(
    "An offset that moves the instant out of 0000-9999 is rejected",
    arguments: [
      "9999-12-31T23:59:59-08:00", "9999-12-31T23:00:00-01:00", "9999-12-31T23:59:59.999-00:01",
      "0000-01-01T00:00:00+01:00", "0000-01-01T00:59:59+01:00", "0000-01-01T00:00:00.000+00:01",
    ])
  func offsetOutOfRange(text: String) {
    #expect(ISO8601.parse(text) == nil)
  }

  /// An error can say "out of range" only for a timestamp that is well-formed and outside the
  /// range, never for one that is malformed or one that parses.
  @Test(
    "Out-of-range timestamps are told apart from malformed ones",
    arguments: [
      ("+10000-01-30T23:59:59Z", true), ("10000-01-01T00:00:00Z", true),
      ("-0001-12-31T23:59:59.999Z", true), ("+2026-11-30T12:00:00Z", false),
      ("-0000-01-01T00:00:00Z", false), ("02026-11-30T12:00:00Z", false),
      ("+99999999999999999999-01-01T00:00:00Z", true),
      ("9999-12-31T23:59:59-08:00", true), ("0000-01-01T00:00:00+01:00", true),
      ("9999-12-31T23:59:59.999Z", false), ("0000-01-01T00:00:00Z", false),
      ("+10000-13-01T00:00:00Z", false), ("10000-01-01", false), ("+1-01-01T00:00:00Z", false),
      ("next tuesday", false), ("", false), ("+", false), ("99999", false),
    ] as [(String, Bool)])
  func outOfRangeIsToldApart(text: String, isOutOfRange: Bool) {
    #expect(ISO8601.isOutOfRange(text) == isOutOfRange)
    #expect(ISO8601.parse(text) == nil || !isOutOfRange)
  }

  /// What output clamps to is exactly what the parser reads at each end.
  @Test("The readable range's ends format and parse back")
  func readableRangeEnds() throws {
    for end in [Date.iso8601Range.lowerBound, Date.iso8601Range.upperBound] {
      #expect(ISO8601.parse(ISO8601.format(end)) == end)
    }
    #expect(ISO8601.format(Date.iso8601Range.upperBound) == "9999-12-31T23:59:59.999Z")
    let justPast = Date(unixMilliseconds: ISO8601.lastInstant + 1)
    #expect(ISO8601.parse(ISO8601.format(justPast)) == nil)
    #expect(ISO8601.isOutOfRange(ISO8601.format(justPast)))
  }

  @Test(
    "The last and first instants of the range still parse, with or without an offset",
    arguments: [
      ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
      ("9999-12-31T15:59:59.999-08:00", 253_402_300_799_999),
      ("0000-01-01T00:00:00Z", -62_167_219_200_000),
      ("0000-01-01T01:00:00+01:00", -62_167_219_200_000),
    ] as [(String, Int64)])
  func rangeEnds(text: String, expected: Int64) {
    #expect(Self.milliseconds(text) == expected)
  }

  /// Every text the parser accepts formats and parses back to the same instant: texts are
  /// generated field by field, with offsets, fractions and dates near both ends of the range.
  @Test("format(parse(t)) parses back to the same instant, for every accepted t")
  func acceptedTextsRoundTrip() throws {
    var generator = SplitMix64(seed: 0x150_8601)
    var accepted = 0
    for _ in 0..<20_000 {
      let text = Self.randomTimestamp(using: &generator)
      guard let parsed = ISO8601.parse(text) else { continue }
      accepted += 1
      let formatted = ISO8601.format(parsed)
      #expect(ISO8601.parse(formatted) == parsed, "\(text) → \(formatted)")
    }
    // Most generated texts are valid; a parser that rejected everything would pass vacuously.
    #expect(accepted > 15_000)
  }

  /// A timestamp in the accepted grammar, with fields that are mostly but not always in range.
  static func randomTimestamp(using generator: inout SplitMix64) -> String {
    func pad(_ value: Int, _ width: Int) -> String {
      let digits = String(value)
      return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
    let edgeYears = [0, 1, 1969, 1970, 9998, 9999]
    let year =
      Bool.random(using: &generator)
      ? edgeYears.randomElement(using: &generator) ?? 0
      : Int.random(in: 0...9999, using: &generator)
    let month = Int.random(in: 1...12, using: &generator)
    let day = Int.random(in: 1...31, using: &generator)
    var text =
      "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(Int.random(in: 0...23, using: &generator), 2))"
      + ":\(pad(Int.random(in: 0...59, using: &generator), 2)):\(pad(Int.random(in: 0...60, using: &generator), 2))"
    if Bool.random(using: &generator) {
      let digits = Int.random(in: 1...9, using: &generator)
      text +=
        "." + (0..<digits).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
    }
    switch Int.random(in: 0..<3, using: &generator) {
    case 0: text += "Z"
    case 1:
      let sign = Bool.random(using: &generator) ? "+" : "-"
      text +=
        "\(sign)\(pad(Int.random(in: 0...23, using: &generator), 2)):\(pad(Int.random(in: 0...59, using: &generator), 2))"
    default:
      let sign = Bool.random(using: &generator) ? "+" : "-"
      text +=
        "\(sign)\(pad(Int.random(in: 0...23, using: &generator), 2))\(pad(Int.random(in: 0...59, using: &generator), 2))"
    }
    return text
  }

  /// Sub-millisecond precision is floored away when formatting, in both directions from 1970.
  @Test("Format floors sub-millisecond time")
  func formatFloors() {
    #expect(ISO8601.format(Date(timeIntervalSince1970: 0.0009)) == "1970-01-01T00:00:00Z")
    #expect(ISO8601.format(Date(timeIntervalSince1970: -0.0001)) == "1969-12-31T23:59:59.999Z")
  }

  /// Pre-1970 timestamps parse to negative milliseconds.
  @Test(
    "Dates before 1970",
    arguments: [
      ("1969-12-31T23:59:59.999Z", -1),
      ("1969-12-31T23:59:59Z", -1000),
      ("1900-01-01T00:00:00Z", -2_208_988_800_000),
      ("0000-01-01T00:00:00Z", -62_167_219_200_000),
      ("1969-12-31T16:00:00-08:00", 0),
    ] as [(String, Int64)])
  func beforeEpoch(text: String, expected: Int64) {
    #expect(Self.milliseconds(text) == expected)
  }

  /// Every millisecond in the supported range survives format then parse unchanged.
  @Test("parse(format(d)) == d for random millisecond dates")
  func roundTrip() throws {
    var generator = SplitMix64(seed: 0x5EED_1508)
    let range: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999
    for _ in 0..<5000 {
      let date = Date(unixMilliseconds: Int64.random(in: range, using: &generator))
      let text = ISO8601.format(date)
      let parsed = try #require(ISO8601.parse(text), "\(text)")
      #expect(parsed == date, "\(text)")
    }
  }

  /// Building a date from milliseconds and reading them back is exact, including before 1970
  /// and around the values where floating-point epoch shifts usually lose a millisecond.
  @Test("Date(unixMilliseconds:) round trips exactly")
  func unixMillisecondsRoundTrip() {
    var generator = SplitMix64(seed: 42)
    var samples: [Int64] = [
      0, 1, -1, 999, -999, 1000, -1000, 978_307_200_000, 978_307_199_999, 978_307_200_001,
      -62_167_219_200_000, 253_402_300_799_999, -2_208_988_800_001,
    ]
    let wide: ClosedRange<Int64> = -100_000_000_000_000...300_000_000_000_000
    for _ in 0..<20_000 {
      samples.append(Int64.random(in: wide, using: &generator))
    }
    for _ in 0..<5000 {
      samples.append(Int64.random(in: -5_000_000...5_000_000, using: &generator))
    }
    // Collected first so a regression reports the failing values in one expectation.
    let failures = samples.filter { Date(unixMilliseconds: $0).unixMilliseconds != $0 }
    #expect(failures.isEmpty)
  }

  /// `unixMilliseconds` floors, so a date just before a millisecond boundary stays below it.
  @Test("unixMilliseconds floors")
  func unixMillisecondsFloors() {
    #expect(Date(timeIntervalSince1970: 1.0009).unixMilliseconds == 1000)
    #expect(Date(timeIntervalSince1970: -0.0005).unixMilliseconds == -1)
    #expect(Date(timeIntervalSince1970: -1.0).unixMilliseconds == -1000)
  }

  /// Dates that cannot be counted in `Int64` milliseconds clamp instead of trapping.
  @Test("unixMilliseconds clamps non-finite dates")
  func unixMillisecondsClamps() {
    #expect(Date(timeIntervalSinceReferenceDate: .infinity).unixMilliseconds == .max)
    #expect(Date(timeIntervalSinceReferenceDate: -.infinity).unixMilliseconds == .min)
    #expect(Date(timeIntervalSinceReferenceDate: 1e300).unixMilliseconds == .max)
  }
}
