import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Instants as the command line writes them: ISO-8601 with a UTC offset, the form snapshot
/// dates take, within years 0000-9999.
enum TimeText {
  /// The instant `text` names, or a usage error for `flag` that says whether it is malformed
  /// or out of range.
  static func parse(_ text: String, flag: String) throws(CLIError) -> Date {
    if let date = Date(iso8601: text) { return date }
    throw CLIError.usage("\(flag): '\(TerminalText.excerpt(text))' is \(problem(text))")
  }

  /// Why `text` is not an instant the tool reads: `out of range: …` or `not an ISO-8601 …`.
  static func problem(_ text: String) -> String {
    Date.iso8601IsOutOfRange(text)
      ? "out of range: times are years 0000 through 9999 in UTC"
      : "not an ISO-8601 time with a UTC offset, such as 2026-11-30T12:00:00Z"
  }
}
