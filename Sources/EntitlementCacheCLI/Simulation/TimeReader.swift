import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Times of a script: ISO-8601, or `+DURATION` from `start`; `setClock` also takes
/// `-DURATION`. Every time lies within years 0000-9999, which the output can write.
struct TimeReader: Sendable {
  /// The start, in milliseconds since the Unix epoch.
  let start: Int64

  /// A step's time, as virtual time since the start.
  func offset(_ node: ScriptNode) throws(ScriptError) -> Duration {
    .milliseconds(try milliseconds(node, allowingEarlier: false) - start)
  }

  /// An instant; before the start only when `allowingEarlier`.
  func instant(_ node: ScriptNode, allowingEarlier: Bool) throws(ScriptError) -> Date {
    SimulationTime.date(try milliseconds(node, allowingEarlier: allowingEarlier))
  }

  private func milliseconds(_ node: ScriptNode, allowingEarlier: Bool) throws(ScriptError)
    -> Int64
  {
    let problem = "not a time (ISO-8601 such as 2026-11-30T12:00:00Z, or +DURATION from start)"
    guard case .string(let text) = node.value else { throw node.error(problem) }
    let sign = text.first
    guard sign == "+" || (sign == "-" && allowingEarlier) else {
      guard let date = Date(iso8601: text), let milliseconds = SimulationTime.milliseconds(date)
      else {
        throw node.error(Date.iso8601IsOutOfRange(text) ? TimeText.problem(text) : problem)
      }
      if !allowingEarlier, milliseconds < start { throw node.error("earlier than start") }
      return milliseconds
    }
    let duration: Duration
    switch DurationText.parseMilliseconds(String(text.dropFirst())) {
    case .success(let value): duration = value
    case .failure(.notADuration): throw node.error(problem)
    case .failure(.outOfRange):
      throw node.error("out of range: \"\(text)\" (at most 36500d, 100 years)")
    }
    let magnitude = SimulationTime.milliseconds(duration)
    let (milliseconds, overflow) =
      sign == "+"
      ? start.addingReportingOverflow(magnitude) : start.subtractingReportingOverflow(magnitude)
    guard !overflow, SimulationTime.range.contains(milliseconds) else {
      throw node.error("out of range: times are years 0000 through 9999 in UTC")
    }
    return milliseconds
  }
}
