import Foundation
import TestSupport
import Testing

// What `simulate` prints: start-up, the two output formats, and the demo chapter.
extension SimulateTests {
  @Test func startPublishesBeforeTheNetworkThenStoresTheAnswerExactly() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ \#(SimScript.answer(latency: "2s")) ] }"#,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+1m", "check", #""entitlement": "pro""#),
      ])
    let result = try run(script)
    let noSnapshot =
      #"{"device":null,"entitlement":"pro","evidence":{"clockOffset":null,"clockRollbackSuspected":false,"freshness":null,"importLabel":null,"isComputedOffline":null,"origin":null,"pendingPurchase":false,"source":null,"storedAt":null,"validUntil":null,"verification":null,"verificationFailure":null,"verifiedAt":null},"isHighTrust":false,"reason":"no_snapshot","recovery":null,"state":"offline_unavailable"}"#
    // The server stamped requestDate 12:00:00, when the request arrived; the answer landed
    // 2 s later, so the cache sees the server's clock 2 s behind its own.
    let granted =
      #"{"device":null,"entitlement":"pro","evidence":{"clockOffset":-2,"clockRollbackSuspected":false,"freshness":"fresh","importLabel":null,"isComputedOffline":false,"origin":"refresh","pendingPurchase":false,"source":"purchase","storedAt":"2026-11-30T12:00:02Z","validUntil":"2026-12-30T12:00:00Z","verification":"verified","verificationFailure":null,"verifiedAt":"2026-11-30T12:00:00Z"},"isHighTrust":true,"reason":null,"recovery":null,"state":"granted"}"#
    #expect(
      result.stdout.split(separator: "\n").map(String.init) == [
        #"{"at":"2026-11-30T12:00:00Z","decisions":{"pro":\#(noSnapshot)},"type":"update","user":"alice"}"#,
        #"{"at":"2026-11-30T12:00:02Z","flow":"start","outcome":"stored","requestedAt":"2026-11-30T12:00:00Z","type":"fetch","user":"alice"}"#,
        #"{"at":"2026-11-30T12:00:02Z","decisions":{"pro":\#(granted)},"type":"update","user":"alice"}"#,
        #"{"at":"2026-11-30T12:01:00Z","decision":\#(granted),"type":"check","user":"alice"}"#,
      ])
  }

  @Test func textOutputSaysTheSameOnAlignedLines() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ { "fail": "rejected", "status": 401 } ] }"#,
      steps: [SimScript.step("+0s", "start"), SimScript.step("+0s", "background")])
    let result = try run(script, json: false)
    #expect(
      result.stdout == """
        2026-11-30T12:00:00Z  update  alice  pro: offline unavailable: no_snapshot (no evidence: nothing stored)
        2026-11-30T12:00:00Z  fetch   alice  start: failed (rejected, status 401)
        2026-11-30T12:00:00Z  event   alice  refresh_failed flow=start reason=failed failure=rejected_401

        """)
  }

  @Test func diagnosticsArePrintedAsEventLinesNamingUsersByLabelOnly() throws {
    let script = SimScript.make(
      server: #"{ "alice@example.com": [ { "fail": "transient", "status": 503 } ] }"#,
      steps: [SimScript.step("+0s", "start"), SimScript.step("+0s", "background")],
      user: "alice@example.com")
    let result = try run(script)
    let events = result.stdout.split(separator: "\n").filter { $0.contains(#""type":"event""#) }
    #expect(
      events == [
        #"{"at":"2026-11-30T12:00:00Z","event":"refresh_failed","failure":"transient_503","flow":"start","reason":"failed","type":"event","user":"alice@example.com"}"#,
        #"{"at":"2026-11-30T12:00:00Z","delay":"0.933s","event":"retry_scheduled","type":"event","user":"alice@example.com","work":"refresh"}"#,
      ])
    for secret in ["sdk_secret_key", "install-secret"] {
      #expect(!result.stdout.contains(secret))
    }
  }

  @Test func aRichScriptPrintsTheSameBytesEveryRunWithSortedKeysAndNoIdentity() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer(latency: "2s")), { "fail": "transient", "latency": "30s" } ],
          "bob": [ { "fail": "rejected", "status": 401 } ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+10m", "foreground"),
        SimScript.step("+11m", "logIn", #""user": "bob""#),
        SimScript.step("+12m", "refresh", #""policy": "fetchCurrent", "timeout": "3s""#),
        SimScript.step("+13m", "purchase", #""transaction": "tx1", "product": "pro_monthly""#),
        SimScript.step("+14m", "restore"), SimScript.step("+15m", "logOut"),
        SimScript.step("+16m", "networkAvailable"), SimScript.step("+17m", "background"),
        SimScript.step("+18m", "relaunch"), SimScript.step("+18m", "background"),
        SimScript.step("+1d", "check", #""entitlement": "pro""#),
      ])
    let first = try run(script)
    let second = try run(script)
    #expect(first.stdout == second.stdout)
    #expect(try run(script, json: false).stdout == run(script, json: false).stdout)
    let parsed = try lines(first.stdout)
    #expect(parsed.count > 10)
    for line in first.stdout.split(separator: "\n") {
      #expect(line.hasPrefix(#"{"at":""#))
      #expect(!line.contains(" "), "not compact: \(line)")
    }
    for secret in ["sdk_secret_key", "install-secret"] {
      #expect(!first.stdout.contains(secret))
    }
    #expect(Set(parsed.compactMap { $0["user"] as? String }) == ["alice", "bob", "anonymous"])
  }

  // MARK: The demo chapter

  @Test func theDemoChapterShowsTheClientFlowsInOrder() throws {
    let result = try CLI.run(["demo"], in: directory.path, environment: ["TMPDIR": directory.path])
    #expect(result.status == 0)
    let output = result.stdout
    let expected = [
      "11. The refresh client launches offline",
      "2026-11-30T12:00:00Z      alice's stream: pro → granted, high trust",
      "2026-11-30T12:00:00Z      alice: start fetch → failed (transient)",
      "2026-11-30T12:00:00Z      alice's stream: pro → granted, not high trust",
      "12. A forced fetch that times out",
      "2026-11-30T12:00:03Z      alice: fetchPolicy fetch → timedOut",
      "2026-11-30T12:00:08Z      alice: fetchPolicy fetch → lateStored",
      "2026-11-30T12:00:08Z      alice's stream: pro → granted, high trust",
      "13. A late answer after a user switch",
      "2026-11-30T12:01:05Z      bob's stream: pro → offline unavailable: no_snapshot",
      "2026-11-30T12:01:07Z      bob: identityChange fetch → stored",
      "2026-11-30T12:01:20Z      alice: explicit fetch → stored",
      "2026-11-30T12:01:20Z      alice: her late answer is in the file, stored at 2026-11-30T12:01:20Z",
      "14. Expiry flips the stream, offline",
      "2026-11-30T13:00:00Z      bob's stream: pro → denied: expired",
      "2026-11-30T13:01:00Z      bob, cache only: pro → denied: expired",
      "Replay your own field report: entitlement-cache simulate --help",
    ]
    // In this order, each once.
    var rest = Substring(output)
    for line in expected {
      guard let found = rest.range(of: line) else {
        Issue.record("missing, or out of order: \(line)")
        continue
      }
      rest = rest[found.upperBound...]
    }
    // After Bob logs in, Alice's stream publishes nothing: her late answer never reaches his.
    let afterSwitch = try #require(output.range(of: "13. A late answer after a user switch"))
    #expect(!output[afterSwitch.upperBound...].contains("alice's stream"))
  }
}
