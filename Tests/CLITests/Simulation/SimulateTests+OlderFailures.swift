import Foundation
import TestSupport
import Testing

// A fetch already in the air when another flow stores an answer: its failure or timeout, older
// news than that answer, is reported but neither marks the scope offline nor is retried.
extension SimulateTests {
  @Test func aRetryAlreadyInTheAirWhenAPurchaseStoresAnAnswerDoesNotMarkTheScopeOffline() throws {
    // The start fails; its retry's fetch leaves at once and takes 20 s; a purchase post stores
    // a fresh answer at +5 s, while that fetch is still out; then the fetch fails. The
    // purchase's own refresh, queued behind the retry, is answered 30 s after it leaves.
    let script = SimScript.make(
      server: """
        { "alice": [ { "fail": "transient" }, { "fail": "transient", "latency": "20s" },
                     { "post": "synced", "snapshot": \(SimScript.snapshot()) },
                     \(SimScript.answer(latency: "30s")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"),
        SimScript.step("+5s", "purchase", #""transaction": "t1", "product": "pro_monthly""#),
        SimScript.step("+25s", "check", #""entitlement": "pro""#),
        SimScript.step("+2m", "check", #""entitlement": "pro""#),
      ])
    let lines = try events(script)
    #expect(lines.contains("12:00:05Z update alice pro=granted/fresh"))
    // The late failure is reported, as it happened, and changes nothing: the scope stays
    // fresh, and no retry follows it.
    let after = lines.filter { $0 > "12:00:06" }
    #expect(after.filter { $0.contains(" retry ") } == ["12:00:20.933Z fetch alice retry failed"])
    #expect(after.contains("12:00:25Z check alice pro=granted/fresh"))
    #expect(!after.contains { $0.contains("/offline") || $0.contains("retry_scheduled") })
    #expect(after.last == "12:02:00Z check alice pro=granted/fresh")
  }

  @Test func aFetchCurrentTimingOutAfterAPurchaseStoredAnAnswerDoesNotMarkTheScopeOffline() throws {
    // The fetch leaves at +1m and takes 20 s; a purchase post stores a fresh answer at +1m5s;
    // the caller stops waiting at +1m10s.
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer()),
                     \(SimScript.answer(requestDate: "2026-11-30T12:01:00Z", latency: "20s")),
                     { "post": "synced",
                       "snapshot": \(SimScript.snapshot(requestDate: "2026-11-30T12:01:05Z")) },
                     \(SimScript.answer(requestDate: "2026-11-30T12:01:20Z")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"),
        SimScript.step("+1m", "refresh", #""policy": "fetchCurrent", "timeout": "10s""#),
        SimScript.step("+65s", "purchase", #""transaction": "t1", "product": "pro_monthly""#),
        SimScript.step("+2m", "check", #""entitlement": "pro""#),
      ])
    let lines = try events(script)
    #expect(lines.contains("12:01:05Z update alice pro=granted/fresh"))
    let after = lines.filter { $0 > "12:01:06" }
    #expect(after.first == "12:01:10Z fetch alice fetchPolicy timedOut")
    #expect(!after.contains { $0.contains("/offline") })
    // Nothing was recorded, so there is no failure to diagnose: the report says it timed out.
    #expect(!after.contains { $0.contains("refresh_failed") }, "\(after)")
    #expect(after.last == "12:02:00Z check alice pro=granted/fresh")
  }
}
