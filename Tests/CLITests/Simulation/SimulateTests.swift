import Foundation
import TestSupport
import Testing

/// `simulate`: the real refresh client against a scripted server in virtual time, end to end
/// through the built binary.
@Suite(.enabled(if: CLI.simulates)) struct SimulateTests {
  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  /// Runs `script` with `--json` (or text), and checks it succeeded with nothing on stderr.
  func run(
    _ script: String, json: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> CLIResult {
    let path = try directory.write("script.json", script)
    let result = try CLI.run(
      ["simulate", "--script", path] + (json ? ["--json"] : []), in: directory.path,
      environment: ["TMPDIR": directory.path])
    #expect(result.status == 0, "simulate failed: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.isEmpty, sourceLocation: sourceLocation)
    return result
  }

  /// Each JSON line, shortened to what tests compare: `12:00:02Z fetch alice start stored`,
  /// `12:00:02Z update alice pro=granted/fresh`, `12:01:00Z check bob pro=denied(expired)/stale`.
  func events(
    _ script: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> [String] {
    try lines(run(script, sourceLocation: sourceLocation).stdout).map(Self.brief)
  }

  func lines(_ stdout: String) throws -> [[String: Any]] {
    try stdout.split(separator: "\n").map { line in
      let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
      return try #require(value as? [String: Any], "not an object: \(line)")
    }
  }

  static func brief(_ event: [String: Any]) -> String {
    let at = (event["at"] as? String ?? "?").replacingOccurrences(of: "2026-11-30T", with: "")
    let head = "\(at) \(event["type"] as? String ?? "?") \(event["user"] as? String ?? "?")"
    switch event["type"] as? String {
    case "update":
      let decisions = event["decisions"] as? [String: [String: Any]] ?? [:]
      return head + " "
        + decisions.keys.sorted().map { "\($0)=\(briefDecision(decisions[$0] ?? [:]))" }
        .joined(separator: ",")
    case "fetch":
      let status = (event["status"] as? Int).map { " \($0)" } ?? ""
      return head
        + " \(event["flow"] as? String ?? "?") \(event["outcome"] as? String ?? "?")\(status)"
    case "check":
      let decision = event["decision"] as? [String: Any] ?? [:]
      return head + " \(decision["entitlement"] as? String ?? "?")=\(briefDecision(decision))"
    case "purchase":
      // `tx1 pending#0`, `tx1 pending#1 transient_503`, `tx1 conflict#1 login_required`.
      let attempts = (event["attempts"] as? Int).map { "#\($0)" } ?? ""
      let detail = [event["failure"], event["resolution"]].compactMap { $0 as? String }
      return head + " \(event["transaction"] as? String ?? "?") "
        + "\(event["state"] as? String ?? "?")\(attempts)"
        + detail.map { " \($0)" }.joined()
    case "event":
      // `12:00:00Z event alice refresh_failed flow=start reason=failed failure=transient`.
      let fields = event.keys.filter { !["at", "type", "user", "event"].contains($0) }.sorted()
      return head + " \(event["event"] as? String ?? "?")"
        + fields.map { " \($0)=\(event[$0] as? String ?? "?")" }.joined()
    default:
      return head + " unknown type"
    }
  }

  /// `granted/fresh`, `offline_unavailable(no_snapshot)`, `denied(expired)/offline`.
  static func briefDecision(_ decision: [String: Any]) -> String {
    var text = decision["state"] as? String ?? "?"
    if let reason = decision["reason"] as? String { text += "(\(reason))" }
    let evidence = decision["evidence"] as? [String: Any] ?? [:]
    if let freshness = evidence["freshness"] as? String { text += "/\(freshness)" }
    return text
  }
}
