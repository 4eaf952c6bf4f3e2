import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The values a script's fields hold: durations, latencies and timeouts, and instants.
extension ScriptParser {
  /// A duration such as `500ms`, `2s`, `10m`, `1h` or `30d`.
  static func duration(_ node: ScriptNode) throws(ScriptError) -> Duration {
    guard case .string(let text) = node.value else {
      throw node.error("not a duration (a string such as \"500ms\", \"2s\", \"10m\" or \"1h\")")
    }
    switch DurationText.parseMilliseconds(text) {
    case .success(let duration): return duration
    case .failure(.notADuration):
      throw node.error("not a duration: \"\(text)\" (write 500ms, 2s, 10m, 1h or 30d)")
    case .failure(.outOfRange):
      throw node.error("out of range: \"\(text)\" (at most 36500d, 100 years)")
    }
  }

  /// A latency or a timeout: a duration of at most ``longestWait``.
  static func wait(_ node: ScriptNode) throws(ScriptError) -> Duration {
    let value = try duration(node)
    guard value <= longestWait else { throw node.error("longer than 1d") }
    return value
  }

  static func iso8601(_ node: ScriptNode) throws(ScriptError) -> Date {
    guard case .string(let text) = node.value else {
      throw node.error("not an ISO-8601 time with a UTC offset, such as 2026-11-30T12:00:00Z")
    }
    guard let date = Date(iso8601: text) else {
      throw node.error(TimeText.problem(text))
    }
    return date
  }
}
