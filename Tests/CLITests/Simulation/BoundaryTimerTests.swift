import Foundation
import TestSupport
import Testing

/// The client's boundary timer crosses a boundary once and moves on, end to end through
/// `simulate`, whose virtual clock lands a refresh at a fractional millisecond.
@Suite(.enabled(if: CLI.simulates)) struct BoundaryTimerTests {
  /// A refresh answered after 112 ms, at +7 min: its stale boundary five minutes later lies
  /// a fraction of a microsecond ahead of the instant the timer wakes at. The timer used to be
  /// set for zero, find the boundary not crossed, and set itself again: 100% CPU, no output,
  /// no end. The runner's 30 s watchdog turns such a spin into a failure here.
  @Test func aStaleBoundaryAfterAFractionalLatencyIsCrossedOnce() throws {
    let directory = try TemporaryDirectory()
    let script = try directory.write(
      "script.json",
      """
      {"start":"2026-11-30T12:00:00Z",
       "identity":{"sdkKey":"k","installation":"i","environment":"production","user":"alice"},
       "server":{"alice":[{"snapshot":{"verification":"verified","entitlements":{}}},
                          {"snapshot":{"verification":"verified","entitlements":{}},"latency":"112ms"}]},
       "steps":[{"at":"+0s","do":"start"},{"at":"+7m","do":"refresh"},
                {"at":"+1h","do":"check","entitlement":"pro"}]}
      """)
    let result = try CLI.run(["simulate", "--script", script], in: directory.path)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    // After the refresh's own publish, the stale boundary five minutes on publishes once: the
    // first millisecond at which the evaluator reads the snapshot as stale.
    let updates = lines.filter { $0.contains(" update ") }.map { String($0.prefix(24)) }
    #expect(
      updates.suffix(2) == ["2026-11-30T12:07:00.112Z", "2026-11-30T12:12:00.113Z"],
      "\(result.stdout)")
    #expect(lines.last?.hasPrefix("2026-11-30T13:00:00Z      check   alice  pro: denied") == true)
  }
}
