import Foundation
import TestSupport
import Testing

/// Scripts for `simulate`, built from parts so each test says only what it is about.
enum SimScript {
  static let start = "2026-11-30T12:00:00Z"

  /// A snapshot object granting pro until `proUntil`; without `requestDate` the scripted
  /// server stamps the time the request arrived.
  static func snapshot(
    requestDate: String? = nil, proUntil: String = "2026-12-30T12:00:00Z",
    status: String = "active", verification: String = "verified"
  ) -> String {
    let date = requestDate.map { #""requestDate": "\#($0)", "# } ?? ""
    return """
      { \(date)"verification": "\(verification)",
        "entitlements": { "pro": { "status": "\(status)", "expiresAt": "\(proUntil)",
          "verifiedAt": "\(requestDate ?? start)", "productId": "pro_monthly",
          "source": "purchase" } } }
      """
  }

  /// An answer carrying ``snapshot(requestDate:proUntil:status:verification:)``.
  static func answer(
    requestDate: String? = nil, proUntil: String = "2026-12-30T12:00:00Z",
    latency: String = "0s"
  ) -> String {
    #"{ "snapshot": \#(snapshot(requestDate: requestDate, proUntil: proUntil)), "latency": "\#(latency)" }"#
  }

  /// A whole script: alice on a throw-away database, watching pro, unless told otherwise.
  static func make(
    server: String = "{}", steps: [String], db: String = "null",
    policy: String = "conservative", watch: String = #"["pro"]"#, user: String = "alice"
  ) -> String {
    """
    { "start": "\(start)", "db": \(db), "policy": "\(policy)", "watch": \(watch),
      "identity": { "sdkKey": "sdk_secret_key", "installation": "install-secret",
                    "environment": "production", "user": "\(user)" },
      "server": \(server),
      "steps": [ \(steps.joined(separator: ",\n  ")) ] }
    """
  }

  /// `{"at": AT, "do": ACTION, ...}`; `fields` are written as they are given.
  static func step(_ at: String, _ action: String, _ fields: String = "") -> String {
    #"{ "at": "\#(at)", "do": "\#(action)"\#(fields.isEmpty ? "" : ", " + fields) }"#
  }
}

/// `simulate`: the real refresh client against a scripted server in virtual time, end to end
/// through the built binary.
@Suite(.enabled(if: CLI.simulates)) struct SimulateTests {
  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  /// Runs `script` with `--json` (or text), and checks it succeeded with nothing on stderr.
  private func run(
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
  private func events(
    _ script: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> [String] {
    try lines(run(script, sourceLocation: sourceLocation).stdout).map(Self.brief)
  }

  private func lines(_ stdout: String) throws -> [[String: Any]] {
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

  // MARK: Signed answers

  @Test func signedAnswersAreVerifiedAndEachBadSignatureFailsWithItsReason() throws {
    let snapshot =
      #"{ "verification": "verified", "entitlements": { "pro": { "status": "active", "expiresAt": "2026-12-30T12:00:00Z" } } }"#
    var results: [String: String] = [:]
    for mode in [
      "valid", "none", "wrong_nonce", "other_user", "expired_key", "untrusted_key", "forged",
    ] {
      let script = SimScript.make(
        server: #"{ "alice": [ { "snapshot": \#(snapshot), "signature": "\#(mode)" } ] }"#,
        steps: [
          SimScript.step("+0s", "start"), SimScript.step("+1m", "check", #""entitlement": "pro""#),
        ]
      ).replacingOccurrences(of: #""db": null,"#, with: #""db": null, "signed": true,"#)
      let lines = try run(script, json: false).stdout.split(separator: "\n")
      results[mode] = lines.last.map(String.init)
    }
    #expect(results["valid"]?.contains("granted, high trust (fresh, verified,") == true)
    for (mode, reason) in [
      ("none", "missing_signature"), ("wrong_nonce", "nonce_mismatch"),
      ("other_user", "scope_mismatch"), ("expired_key", "intermediate_expired"),
      ("untrusted_key", "untrusted_intermediate"), ("forged", "signature_mismatch"),
    ] {
      #expect(
        results[mode]?.contains("granted, not high trust (fresh, failed (\(reason)),") == true,
        "\(mode): \(results[mode] ?? "")")
    }
  }

  @Test func aSignatureOutsideASignedScriptOrUnknownIsAnError() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ { "snapshot": { "entitlements": {} }, "signature": "sloppy" } ] }"#,
      steps: [SimScript.step("+0s", "start")])
    let file = directory.path("bad.json")
    try Data(script.utf8).write(to: URL(fileURLWithPath: file))
    let result = try CLI.run(["simulate", "--script", file], in: directory.path)
    #expect(result.status == 2)
    #expect(
      result.stderr.contains("server.alice[0].signature: needs \"signed\": true"),
      "\(result.stderr)")
    let signed = script.replacingOccurrences(
      of: #""db": null,"#, with: #""db": null, "signed": true,"#)
    try Data(signed.utf8).write(to: URL(fileURLWithPath: file))
    let unknown = try CLI.run(["simulate", "--script", file], in: directory.path)
    #expect(unknown.status == 2)
    #expect(unknown.stderr.contains("unknown signature \"sloppy\""), "\(unknown.stderr)")
  }

  // MARK: Start-up and the output format

  @Test func startPublishesBeforeTheNetworkThenStoresTheAnswerExactly() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ \#(SimScript.answer(latency: "2s")) ] }"#,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+1m", "check", #""entitlement": "pro""#),
      ])
    let result = try run(script)
    let noSnapshot =
      #"{"device":null,"entitlement":"pro","evidence":{"clockOffset":null,"clockRollbackSuspected":false,"freshness":null,"isComputedOffline":null,"pendingPurchase":false,"source":null,"storedAt":null,"validUntil":null,"verification":null,"verificationFailure":null,"verifiedAt":null},"isHighTrust":false,"reason":"no_snapshot","recovery":null,"state":"offline_unavailable"}"#
    // The server stamped requestDate 12:00:00, when the request arrived; the answer landed
    // 2 s later, so the cache sees the server's clock 2 s behind its own.
    let granted =
      #"{"device":null,"entitlement":"pro","evidence":{"clockOffset":-2,"clockRollbackSuspected":false,"freshness":"fresh","isComputedOffline":false,"pendingPurchase":false,"source":"purchase","storedAt":"2026-11-30T12:00:02Z","validUntil":"2026-12-30T12:00:00Z","verification":"verified","verificationFailure":null,"verifiedAt":"2026-11-30T12:00:00Z"},"isHighTrust":true,"reason":null,"recovery":null,"state":"granted"}"#
    #expect(
      result.stdout.split(separator: "\n").map(String.init) == [
        #"{"at":"2026-11-30T12:00:00Z","decisions":{"pro":\#(noSnapshot)},"type":"update","user":"alice"}"#,
        #"{"at":"2026-11-30T12:00:02Z","flow":"start","outcome":"stored","type":"fetch","user":"alice"}"#,
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

  // MARK: Flows

  @Test func foregroundRefreshesOnlyWhenStale() throws {
    let script = SimScript.make(
      server:
        #"{ "alice": [ \#(SimScript.answer()), \#(SimScript.answer(requestDate: "2026-11-30T12:10:00Z")) ] }"#,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+1m", "background"),
        SimScript.step("+2m", "foreground"), SimScript.step("+3m", "background"),
        SimScript.step("+10m", "foreground"),
      ])
    let lines = try events(script)
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:00Z fetch alice start stored",
        "12:00:00Z update alice pro=granted/fresh",
        // Fresh at 12:02: coming to the foreground fetches nothing.
        "12:05:00Z update alice pro=granted/stale",
        "12:10:00Z fetch alice foreground stored",
        "12:10:00Z update alice pro=granted/fresh",
      ])
  }

  @Test func fetchCurrentTimesOutAndItsLateAnswerIsStored() throws {
    let script = SimScript.make(
      server:
        #"{ "alice": [ \#(SimScript.answer()), \#(SimScript.answer(requestDate: "2026-11-30T12:01:08Z", latency: "8s")) ] }"#,
      steps: [
        SimScript.step("+0s", "start"),
        SimScript.step("+1m", "refresh", #""policy": "fetchCurrent", "timeout": "3s""#),
      ])
    let lines = try events(script)
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:00Z fetch alice start stored",
        "12:00:00Z update alice pro=granted/fresh",
        "12:01:03Z fetch alice fetchPolicy timedOut",
        "12:01:03Z event alice refresh_failed flow=fetchPolicy reason=timedOut",
        "12:01:03Z update alice pro=granted/offline",
        // After the last step the run goes on while the answer is on its way.
        "12:01:08Z fetch alice fetchPolicy lateStored",
        "12:01:08Z update alice pro=granted/fresh",
      ])
  }

  @Test func fetchPoliciesFetchOnlyWhenTheyShould() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer()), \(SimScript.answer(requestDate: "2026-11-30T12:10:00Z")),
                     \(SimScript.answer(requestDate: "2026-11-30T12:20:00Z")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+0s", "background"),
        SimScript.step("+1m", "refresh", #""policy": "cacheOnly""#),
        SimScript.step("+2m", "refresh", #""policy": "notStaleCachedOrFetched""#),
        SimScript.step("+3m", "refresh", #""policy": "cachedOrFetched""#),
        SimScript.step("+4m", "foreground"),
        SimScript.step("+10m", "refresh", #""policy": "cacheOnly""#),
        SimScript.step("+10m", "refresh", #""policy": "cachedOrFetched""#),
        SimScript.step("+20m", "refresh", #""policy": "notStaleCachedOrFetched""#),
      ])
    let lines = try events(script)
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:00Z fetch alice start stored",
        "12:00:00Z update alice pro=granted/fresh",
        // Fresh until 12:05: neither notStale nor cachedOrFetched fetches, cacheOnly never.
        "12:05:00Z update alice pro=granted/stale",
        "12:10:00Z fetch alice fetchPolicy stored",
        "12:10:00Z update alice pro=granted/fresh",
        "12:15:00Z update alice pro=granted/stale",
        "12:20:00Z fetch alice fetchPolicy stored",
        "12:20:00Z update alice pro=granted/fresh",
      ])
  }

  @Test func failedFetchesRetryWithBackoffUntilTheBackground() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ { "fail": "transient", "status": 503 } ] }"#,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+5s", "refresh"),
        SimScript.step("+10s", "background"),
        SimScript.step("+10m", "check", #""entitlement": "pro""#),
      ])
    let lines = try events(script)
    #expect(lines.first == "12:00:00Z update alice pro=offline_unavailable(no_snapshot)")
    #expect(lines[1] == "12:00:00Z fetch alice start failed 503")
    // Backed off with jitter (deterministic: the simulation's random numbers are seeded), and
    // no answer left means a transient failure at once.
    let retries = lines.filter { $0.contains(" retry ") }
    #expect(retries.count >= 2)
    #expect(retries.allSatisfy { $0.hasSuffix("fetch alice retry failed") })
    #expect(lines.contains("12:00:05Z fetch alice explicit failed"))
    // Nothing after the background but the check.
    let afterBackground = lines.filter { $0 > "12:00:10Z" }
    #expect(afterBackground == ["12:10:00Z check alice pro=offline_unavailable(no_snapshot)"])
  }

  @Test func aLateAnswerForThePreviousUserLandsUnderThatUserOnly() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer(requestDate: "2026-11-30T12:00:20Z", latency: "20s")) ],
          "bob": [ \(SimScript.answer(requestDate: "2026-11-30T12:00:07Z", latency: "2s")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+5s", "logIn", #""user": "bob""#),
        SimScript.step("+2m", "logIn", #""user": "alice""#),
      ])
    let result = try run(script)
    let parsed = try lines(result.stdout)
    #expect(
      parsed.map(Self.brief) == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:05Z update bob pro=offline_unavailable(no_snapshot)",
        "12:00:07Z fetch bob identityChange stored",
        "12:00:07Z update bob pro=granted/fresh",
        // Stored under alice; bob's stream shows nothing of it.
        "12:00:20Z fetch alice start stored",
        // Back to alice: her cache holds the late answer (her next fetch fails: no answers).
        "12:02:00Z update alice pro=granted/fresh",
        "12:02:00Z fetch alice identityChange failed",
        "12:02:00Z event alice refresh_failed failure=transient flow=identityChange reason=failed",
        "12:02:00Z event alice retry_scheduled delay=0.831s work=refresh",
        "12:02:00Z update alice pro=granted/offline",
      ])
    let aliceAgain = try #require(parsed.count > 5 ? parsed[5] : nil)
    let decision = (aliceAgain["decisions"] as? [String: Any])?["pro"] as? [String: Any]
    let evidence = decision?["evidence"] as? [String: Any]
    #expect(evidence?["storedAt"] as? String == "2026-11-30T12:00:20Z")
  }

  @Test func logOutSwitchesToAnonymousAndRemovesThePreviousSnapshot() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer()) ],
          "anonymous": [ \(SimScript.answer(requestDate: "2026-11-30T12:01:00Z", proUntil: "2026-11-30T12:00:00Z")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+1m", "logOut"),
        SimScript.step("+2m", "check", #""entitlement": "pro""#),
        SimScript.step("+2m", "background"), SimScript.step("+3m", "logIn", #""user": "alice""#),
      ])
    let lines = try events(script)
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:00Z fetch alice start stored",
        "12:00:00Z update alice pro=granted/fresh",
        "12:01:00Z update anonymous pro=offline_unavailable(no_snapshot)",
        "12:01:00Z fetch anonymous identityChange stored",
        "12:01:00Z update anonymous pro=denied(expired)/fresh",
        "12:02:00Z check anonymous pro=denied(expired)/fresh",
        // The log-out removed alice's snapshot (a shared device). In the background her fetch
        // first waits a random 0-5 s (seeded: the same every run).
        "12:03:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:03:00.234Z fetch alice identityChange failed",
        // In the background no retry is scheduled.
        "12:03:00.234Z event alice refresh_failed failure=transient flow=identityChange reason=failed",
      ])
  }

  @Test func purchaseRestoreAndSyncEachWaitForAFetchOfTheirOwn() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer()), \(SimScript.answer(requestDate: "2026-11-30T12:01:00Z")),
                     \(SimScript.answer(requestDate: "2026-11-30T12:02:00Z")),
                     \(SimScript.answer(requestDate: "2026-11-30T12:03:00Z")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"),
        SimScript.step("+1m", "purchase", #""transaction": "tx1", "product": "pro_monthly""#),
        SimScript.step("+2m", "restore"), SimScript.step("+3m", "sync"),
      ])
    let lines = try events(script)
    #expect(
      lines.filter { $0.contains(" fetch ") } == [
        "12:00:00Z fetch alice start stored", "12:01:00Z fetch alice purchase stored",
        "12:02:00Z fetch alice restore stored", "12:03:00Z fetch alice sync stored",
      ])
    // No post answer is scripted: the post fails transiently, before the purchase's fetch.
    #expect(
      lines.filter { $0.contains(" purchase alice") }.prefix(3) == [
        "12:01:00Z purchase alice tx1 pending#0", "12:01:00Z purchase alice tx1 posting#1",
        "12:01:00Z purchase alice tx1 pending#1 transient",
      ])
  }

  @Test func networkAvailableRefreshesOnlyWhenServingOffline() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ { "fail": "transient" }, \(SimScript.answer(requestDate: "2026-11-30T12:02:00Z")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+0s", "background"),
        SimScript.step("+2m", "networkAvailable"), SimScript.step("+3m", "networkAvailable"),
      ])
    let lines = try events(script)
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:00Z fetch alice start failed",
        "12:00:00Z event alice refresh_failed failure=transient flow=start reason=failed",
        "12:00:00Z event alice retry_scheduled delay=0.933s work=refresh",
        // In the background a refresh first waits a random 0-5 s (seeded: the same every run);
        // at 12:03 the snapshot is fresh and the network coming back fetches nothing.
        "12:02:02.204Z fetch alice networkAvailable stored",
        "12:02:02.204Z update alice pro=granted/fresh",
      ])
  }

  @Test func relaunchLosesTheFetchInFlightAndStartsAgainOnTheSameFile() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer()),
                     \(SimScript.answer(requestDate: "2026-11-30T12:10:00Z", latency: "10s")),
                     \(SimScript.answer(requestDate: "2026-11-30T12:10:05Z", latency: "1s")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+10m", "refresh"),
        SimScript.step("+605s", "relaunch"),
      ])
    let lines = try events(script)
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:00Z fetch alice start stored",
        "12:00:00Z update alice pro=granted/fresh",
        "12:05:00Z update alice pro=granted/stale",
        // Killed at 12:10:05 with the explicit fetch in the air: its answer is lost. The new
        // process publishes what the file holds, then its own start fetch takes the next one.
        "12:10:05Z update alice pro=granted/stale",
        "12:10:06Z fetch alice start stored",
        "12:10:06Z update alice pro=granted/fresh",
      ])
  }

  @Test func answersTheClientRefusesAreReportedAndChangeNothing() throws {
    let invalid =
      #"{ "snapshot": { "entitlements": { "pro": { "expiresAt": "2026-12-30T12:00:00Z" } } } }"#
    let unverified = """
      { "snapshot": \(SimScript.snapshot(requestDate: "2026-11-30T12:02:00Z", verification: "failed")) }
      """
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer()), \(invalid), \(unverified),
                     \(SimScript.answer(requestDate: "2026-11-30T12:03:10Z", latency: "10s")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+0s", "background"),
        SimScript.step("+1m", "refresh"), SimScript.step("+2m", "refresh"),
        SimScript.step("+3m", "refresh"), SimScript.step("+185s", "logOut"),
      ])
    let lines = try events(script)
    #expect(
      lines.filter { $0.contains(" fetch ") } == [
        "12:00:00Z fetch alice start stored",
        // In the background each refresh first waits a random 0-5 s (seeded).
        "12:01:01.824Z fetch alice explicit invalidResponse",
        "12:02:00.810Z fetch alice explicit verificationFailed",
        "12:03:05.883Z fetch anonymous identityChange failed",
        // Alice logged out while her answer was on its way: it is not stored back.
        "12:03:11.732Z fetch alice explicit discardedLoggedOut",
      ])
    #expect(!lines.contains { $0.hasPrefix("12:03:14.271Z update") })
    // Neither the invalid nor the unverified answer replaced the verified grant.
    let lastAlice = lines.last { $0.contains(" update alice ") }
    #expect(lastAlice?.hasSuffix("update alice pro=granted/offline") == true)
  }

  @Test func theStreamFlipsAtExpiryAndCheckReadsTheCacheOnly() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ \#(SimScript.answer(proUntil: "2026-11-30T13:00:00Z")) ] }"#,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+1m", "background"),
        SimScript.step("2026-11-30T12:59:59Z", "check", #""entitlement": "pro""#),
        SimScript.step("+1h", "check", #""entitlement": "pro""#),
      ])
    let lines = try events(script)
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:00Z fetch alice start stored",
        "12:00:00Z update alice pro=granted/fresh",
        "12:05:00Z update alice pro=granted/stale",
        "12:59:59Z check alice pro=granted/stale",
        // At expiresAt, with no network: the boundary timer republishes before the check.
        "13:00:00Z update alice pro=denied(expired)/stale",
        "13:00:00Z check alice pro=denied(expired)/stale",
      ])
  }

  @Test func eventsAreInTheOrderTheyHappenedAcrossBothStreams() throws {
    // The start fetch is in the air when the purchase comes; the purchase's fetch is queued
    // behind it and answers at once, so two reports and two publishes happen in one instant.
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer(requestDate: "2026-11-30T12:00:05Z", latency: "5s")),
                     \(SimScript.answer(requestDate: "2026-11-30T12:00:05.001Z")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"),
        SimScript.step("+1s", "purchase", #""transaction": "tx1", "product": "pro_monthly""#),
      ])
    let lines = try events(script).filter { !$0.contains(" purchase alice tx") }
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        // The purchase is pending: the evidence says so.
        "12:00:01Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:01Z event alice retry_scheduled delay=1.547s transaction=tx1 work=purchase_post",
        "12:00:02.547Z event alice retry_scheduled delay=3.145s transaction=tx1 work=purchase_post",
        "12:00:05Z fetch alice start stored",
        "12:00:05Z update alice pro=granted/fresh",
        "12:00:05Z fetch alice purchase stored",
        "12:00:05Z update alice pro=granted/fresh",
      ])
  }

  @Test func timersDueAfterTheLastStepDoNotRun() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ \#(SimScript.answer(latency: "30s")) ] }"#,
      steps: [SimScript.step("+0s", "start")])
    let lines = try events(script)
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        // The answer on its way lands; the staleness boundary at 12:05:30 is never reached.
        "12:00:30Z fetch alice start stored",
        "12:00:30Z update alice pro=granted/fresh",
      ])
  }

  @Test func setClockMovesOnlyTheWallClock() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ \#(SimScript.answer()) ] }"#,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+0s", "background"),
        SimScript.step("+1h", "setClock", #""to": "-20d""#),
        SimScript.step("+1h", "check", #""entitlement": "pro""#),
      ])
    let result = try run(script)
    let check = try #require(try lines(result.stdout).last)
    // Printed at true time, while the device's wall clock says 20 days earlier.
    #expect(check["at"] as? String == "2026-11-30T13:00:00Z")
    let decision = check["decision"] as? [String: Any]
    let evidence = decision?["evidence"] as? [String: Any]
    #expect(decision?["state"] as? String == "granted")
    #expect(evidence?["clockRollbackSuspected"] as? Bool == true)
    #expect(evidence?["storedAt"] as? String == "2026-11-30T12:00:00Z")
  }

  @Test func failuresCarryTheirStatusOnlyWhenTheyHaveOne() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ { "fail": "rejected", "status": 401 }, { "fail": "transient", "status": 503 },
                     { "fail": "transient", "latency": "500ms" } ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+0s", "background"),
        SimScript.step("+1m", "refresh"), SimScript.step("+2m", "refresh"),
      ])
    let result = try run(script)
    let fetches = try lines(result.stdout).filter { $0["type"] as? String == "fetch" }
    #expect(
      fetches.map(Self.brief) == [
        // In the background each refresh first waits a random 0-5 s (seeded), then the latency.
        "12:00:00Z fetch alice start failed 401", "12:01:01.824Z fetch alice explicit failed 503",
        "12:02:01.310Z fetch alice explicit failed",
      ])
    #expect(!result.stdout.contains(#""outcome":"failed","status":null"#))
  }

  @Test func anOlderAnswerIsDiscardedAndTheServerSnapshotPolicyIgnoresTheDeviceClock() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer(requestDate: "2026-11-30T12:00:00Z", proUntil: "2026-11-30T12:30:00Z")),
                     \(SimScript.answer(requestDate: "2026-11-29T12:00:00Z")) ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+0s", "background"),
        SimScript.step("+1m", "refresh"),
        SimScript.step("+1h", "check", #""entitlement": "pro""#),
      ], policy: "serverSnapshot")
    let lines = try events(script)
    #expect(
      lines == [
        "12:00:00Z update alice pro=offline_unavailable(no_snapshot)",
        "12:00:00Z fetch alice start stored",
        "12:00:00Z update alice pro=granted/fresh",
        // In the background a refresh first waits a random 0-5 s (seeded: the same every run).
        "12:01:01.824Z fetch alice explicit discardedOlder",
        "12:05:00Z update alice pro=granted/stale",
        // Past expiresAt, the perk model keeps the server's status.
        "13:00:00Z check alice pro=granted/stale",
      ])
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

  // MARK: The database

  @Test func aKeptDatabaseIsReusedByTheNextRun() throws {
    let db = directory.path("kept.sqlite")
    let dbJSON = #""\#(db)""#
    let first = SimScript.make(
      server: #"{ "alice": [ \#(SimScript.answer()) ] }"#,
      steps: [SimScript.step("+0s", "start")], db: dbJSON)
    _ = try run(first)
    #expect(FileManager.default.fileExists(atPath: db))
    // A day later on the same file, with no network: the grant comes from the file.
    let second = """
      { "start": "2026-12-01T12:00:00Z", "db": \(dbJSON), "watch": ["pro"],
        "identity": { "sdkKey": "sdk_secret_key", "installation": "install-secret",
                      "environment": "production", "user": "alice" },
        "steps": [ { "at": "+0s", "do": "start" }, { "at": "+0s", "do": "background" } ] }
      """
    let lines = try events(second)
    #expect(
      lines == [
        "2026-12-01T12:00:00Z update alice pro=granted/stale",
        "2026-12-01T12:00:00Z fetch alice start failed",
        "2026-12-01T12:00:00Z event alice refresh_failed failure=transient flow=start reason=failed",
        "2026-12-01T12:00:00Z event alice retry_scheduled delay=0.933s work=refresh",
        "2026-12-01T12:00:00Z update alice pro=granted/offline",
      ])
    let scopes = try CLI.run(
      ["scopes", "--db", db, "--json", "--now", "2026-12-01T12:00:00Z"], in: directory.path)
    #expect(try scopes.json()["count"] as? Int == 1)
  }

  @Test func aThrowAwayDatabaseLeavesNothingBehind() throws {
    let scratch = directory.path("tmp")
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    let path = try directory.write(
      "script.json", SimScript.make(steps: [SimScript.step("+0s", "start")]))
    let result = try CLI.run(
      ["simulate", "--script", path], in: directory.path, environment: ["TMPDIR": scratch])
    #expect(result.status == 0)
    #expect(result.stdout.contains("update  alice  pro: offline unavailable: no_snapshot"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
  }

  @Test func aDatabaseThatCannotBeOpenedIsAStorageError() throws {
    let path = try directory.write(
      "script.json",
      SimScript.make(steps: [SimScript.step("+0s", "start")], db: #""/nonexistent/x.sqlite""#))
    let result = try CLI.run(["simulate", "--script", path], in: directory.path)
    #expect(result.status == 3)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.hasPrefix("error: /nonexistent/x.sqlite: cannot "))
  }

  // MARK: Bad scripts

  static let badScripts: [(script: String, error: String)] = [
    (
      SimScript.make(steps: [
        SimScript.step("+0s", "start"), SimScript.step("+1s", "start"),
        SimScript.step("+2s", "start"),
        SimScript.step("+3s", "fly"),
      ]), #"steps[3].do: unknown action "fly""#
    ),
    (
      SimScript.make(steps: [SimScript.step("+0s", "logn", #""user": "bob""#)]),
      #"steps[0].do: unknown action "logn"; did you mean "logIn"?"#
    ),
    (
      SimScript.make(
        server: #"{ "alice": [ { "fail": "transient", "latency": "2 s" } ] }"#, steps: []),
      #"server.alice[0].latency: not a duration: "2 s" (write 500ms, 2s, 10m, 1h or 30d)"#
    ),
    (
      SimScript.make(steps: [
        SimScript.step("+0s", "start"), SimScript.step("+2m", "start"),
        SimScript.step("+1m", "start"),
      ]), "steps[2].at: earlier than steps[1]"
    ),
    (
      SimScript.make(steps: [
        SimScript.step("+0s", "start"), SimScript.step("9999-12-31T00:00:00Z", "start"),
      ]),
      "steps[1].at: more than 366 days after start; a run goes through every timer of the "
        + "client in between (a retry every 5 minutes while fetches fail), so a script covers "
        + "at most a year"
    ),
    (
      SimScript.make(steps: [SimScript.step("+367d", "start")]),
      "steps[0].at: more than 366 days after start; a run goes through every timer of the "
        + "client in between (a retry every 5 minutes while fetches fail), so a script covers "
        + "at most a year"
    ),
    (
      SimScript.make(steps: [SimScript.step("+36501d", "start")]),
      "steps[0].at: out of range: \"+36501d\" (at most 36500d, 100 years)"
    ),
    (
      SimScript.make(steps: [SimScript.step("10000-01-01T00:00:00Z", "start")]),
      "steps[0].at: out of range: times are years 0000 through 9999 in UTC"
    ),
    (
      SimScript.make(steps: [#"{ "do": "start" }"#]), "steps[0].at: missing"
    ),
    (
      SimScript.make(steps: [SimScript.step("+0s", "logIn")]), "steps[0].user: missing"
    ),
    (
      SimScript.make(steps: [SimScript.step("+0s", "logIn", #""usr": "bob""#)]),
      #"steps[0].usr: unknown field; did you mean "user"?"#
    ),
    (
      SimScript.make(steps: [SimScript.step("+0s", "check", #""entitlement": 7"#)]),
      "steps[0].entitlement: not a string"
    ),
    (
      SimScript.make(steps: [SimScript.step("soon", "start")]),
      "steps[0].at: not a time (ISO-8601 such as 2026-11-30T12:00:00Z, or +DURATION from start)"
    ),
    (
      SimScript.make(steps: [SimScript.step("2026-11-29T12:00:00Z", "start")]),
      "steps[0].at: earlier than start"
    ),
    (
      SimScript.make(steps: []).replacingOccurrences(of: "production", with: "staging"),
      #"identity.environment: unknown environment "staging" (production, sandbox or local)"#
    ),
    (
      SimScript.make(steps: [], policy: "lenient"),
      #"policy: unknown policy "lenient" (conservative or serverSnapshot)"#
    ),
    (
      SimScript.make(steps: [SimScript.step("+0s", "refresh", #""policy": "forceFetch""#)]),
      #"steps[0].policy: unknown policy "forceFetch" (cacheOnly, cachedOrFetched, notStaleCachedOrFetched or fetchCurrent)"#
    ),
    (
      SimScript.make(steps: [SimScript.step("+0s", "refresh", #""policy": "fetchCurrent""#)]),
      "steps[0].timeout: missing (fetchCurrent waits at most a timeout)"
    ),
    (
      SimScript.make(steps: [SimScript.step("+0s", "refresh", #""timeout": "3s""#)]),
      "steps[0].timeout: only a fetchCurrent refresh takes a timeout"
    ),
    (
      SimScript.make(
        server: #"{ "alice": [ { "fail": "transient", "latncy": "2s" } ] }"#, steps: []),
      #"server.alice[0].latncy: unknown field; did you mean "latency"?"#
    ),
    (
      SimScript.make(
        server: #"{ "bob": [ { "fail": "transient", "snapshot": {} } ] }"#, steps: []),
      #"server.bob[0]: has both "snapshot" and "fail"; give one"#
    ),
    (
      SimScript.make(server: #"{ "bob": [ { "latency": "1s" } ] }"#, steps: []),
      #"server.bob[0]: needs "snapshot", "fail" or "post""#
    ),
    (
      SimScript.make(server: #"{ "bob": [ { "fail": "rejected" } ] }"#, steps: []),
      "server.bob[0].status: missing (a rejected answer has its status, such as 401)"
    ),
    (
      SimScript.make(server: #"{ "bob": [ { "fail": "rejected", "status": 42 } ] }"#, steps: []),
      "server.bob[0].status: not an HTTP status (100 to 599)"
    ),
    (
      SimScript.make(server: #"{ "bob": { "fail": "transient" } }"#, steps: []),
      "server.bob: not an array"
    ),
    (
      SimScript.make(
        server: #"{ "bob": [ { "fail": "transient", "latency": "2d" } ] }"#, steps: []),
      "server.bob[0].latency: longer than 1d"
    ),
    (
      SimScript.make(steps: [], watch: #"["pro", 3]"#), "watch[1]: not a string"
    ),
    (
      SimScript.make(steps: []).replacingOccurrences(of: #""user": "alice""#, with: #""user": """#),
      "identity.user: empty"
    ),
    (
      #"{ "start": "2026-11-30T12:00:00Z", "steps": [] }"#, "identity: missing"
    ),
    (
      SimScript.make(steps: []).replacingOccurrences(of: #""watch""#, with: #""wach""#),
      #"wach: unknown field; did you mean "watch"?"#
    ),
  ]

  @Test(arguments: badScripts)
  func aBadScriptIsExit2NamingTheField(_ script: String, _ error: String) throws {
    let path = try directory.write("bad.json", script)
    let result = try CLI.run(["simulate", "--script", path, "--json"], in: directory.path)
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr == "error: \(error)\n")
  }

  @Test func aScriptThatIsNotAScriptNamesTheFile() throws {
    let notJSON = try directory.write("broken.json", "{ \"start\": ")
    var result = try CLI.run(["simulate", "--script", notJSON], in: directory.path)
    #expect(result.status == 2)
    #expect(result.stderr.hasPrefix("error: \(notJSON): not valid JSON"))
    let array = try directory.write("array.json", "[]")
    result = try CLI.run(["simulate", "--script", array], in: directory.path)
    #expect(result.stderr == "error: \(array): not an object\n")
    let empty = try directory.write("empty.json", "")
    result = try CLI.run(["simulate", "--script", empty], in: directory.path)
    #expect(result.stderr == "error: \(empty): empty; expected a simulation script's JSON\n")
  }

  /// Found by the simulate-script fuzz target: JSONDecoder checked a dictionary's strings in
  /// hash order, which differs from process to process, so a script with invalid UTF-8 in a key
  /// and in a value printed "not valid JSON" on one run and "not valid JSON (unreadable)" on
  /// the next.
  @Test func aScriptThatIsNotUTF8NamesTheSameByteEveryRun() throws {
    var bytes = Array(SimScript.make(steps: [SimScript.step("+0s", "start")]).utf8)
    let key = try #require(bytes.firstIndex(of: UInt8(ascii: "w")))  // "watch"
    bytes[key + 2] = 0xD7
    let value = try #require(bytes.lastIndex(of: UInt8(ascii: "+")))  // "+0s"
    bytes[value + 1] = 0x8B
    let path = directory.path("not-utf8.json")
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    for _ in 0..<4 {
      let result = try CLI.run(["simulate", "--script", path], in: directory.path)
      #expect(result.status == 2)
      #expect(result.stderr == "error: \(path): not valid JSON (invalid UTF-8 at byte \(key))\n")
    }
  }

  @Test func aMissingScriptIsTheToolsInputFileError() throws {
    var result = try CLI.run(["simulate", "--script", "nope.json"], in: directory.path)
    #expect(result.status == 2)
    #expect(result.stderr == "error: nope.json: no such file\n")
    result = try CLI.run(["simulate"], in: directory.path)
    #expect(result.status == 2)
    #expect(result.stderr == "error: simulate: missing --script FILE\n")
  }
}

// MARK: The purchase queue (<doc:PurchaseQueue>)

extension SimulateTests {
  @Test func aPurchaseIsPostedAsItsObserverAcrossAnAccountSwitchAndNeverAsTheNextUser() throws {
    // Alice buys offline; she logs out, bob logs in, the network comes back: her purchase is
    // posted as alice. Bob then observes the same transaction: it stays hers.
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer()), { "post": "transient", "status": 503 },
                     { "fail": "transient" },
                     { "post": "synced", "latency": "1s" } ],
          "bob": [ { "snapshot": { "verification": "verified", "entitlements": {} } },
                   { "snapshot": { "verification": "verified", "entitlements": {} } } ] }
        """,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+1s", "background"),
        SimScript.step("+1m", "purchase", #""transaction": "tx1", "product": "pro_monthly""#),
        SimScript.step("+2m", "logOut"), SimScript.step("+3m", "logIn", #""user": "bob""#),
        SimScript.step("+4m", "foreground"), SimScript.step("+5m", "networkAvailable"),
        SimScript.step("+6m", "purchase", #""transaction": "tx1", "product": "pro_monthly""#),
      ])
    let lines = try events(script).filter { $0.contains(" purchase ") && !$0.contains(" fetch ") }
    #expect(
      lines == [
        "12:01:00Z purchase alice tx1 pending#0", "12:01:00Z purchase alice tx1 posting#1",
        "12:01:00Z purchase alice tx1 pending#1 transient_503",
        // In the background nothing retries; the foreground's drain posts as alice.
        "12:04:00Z purchase alice tx1 posting#2", "12:04:01Z purchase alice tx1 synced#2",
        "12:06:00Z purchase bob tx1 boundToAnotherUser",
      ])
  }

  @Test func postAnswersReachTheOutputWithTheirDetailsAndNeverTheToken() throws {
    let script = SimScript.make(
      server: """
        { "alice": [ \(SimScript.answer()),
                     { "post": "conflict", "resolution": "restore_required" },
                     { "post": "rejected", "status": 400 },
                     { "post": "synced", "snapshot": \(SimScript.snapshot(proUntil: "2027-01-30T12:00:00Z")) } ] }
        """,
      steps: [
        SimScript.step("+0s", "start"),
        SimScript.step(
          "+1m", "purchase", #""transaction": "tx-conflict", "product": "pro_monthly""#),
        SimScript.step(
          "+2m", "purchase", #""transaction": "tx-rejected", "product": "pro_monthly""#),
        SimScript.step("+3m", "purchase", #""transaction": "tx-synced", "product": "pro_yearly""#),
      ])
    let result = try run(script)
    let purchases = try lines(result.stdout).map(Self.brief).filter {
      $0.contains(" purchase alice tx")
    }
    #expect(
      purchases == [
        "12:01:00Z purchase alice tx-conflict pending#0",
        "12:01:00Z purchase alice tx-conflict posting#1",
        "12:01:00Z purchase alice tx-conflict conflict#1 restore_required",
        "12:02:00Z purchase alice tx-rejected pending#0",
        "12:02:00Z purchase alice tx-rejected posting#1",
        "12:02:00Z purchase alice tx-rejected rejected#1 rejected_400",
        "12:03:00Z purchase alice tx-synced pending#0",
        "12:03:00Z purchase alice tx-synced posting#1",
        "12:03:00Z purchase alice tx-synced synced#1",
      ])
    #expect(!result.stdout.contains("simulated-store-token"))
    let text = try run(script, json: false).stdout
    #expect(text.contains("purchase  alice  tx-conflict: conflict (restore_required)"))
    #expect(!text.contains("simulated-store-token"))
  }

  @Test(arguments: [
    (
      #"{ "post": "maybe" }"#,
      #"unknown post answer "maybe" (synced, conflict, transient or rejected)"#
    ),
    (#"{ "post": "conflict" }"#, "missing (login_required, restore_required or support_required)"),
    (#"{ "post": "rejected" }"#, "missing (a rejected post has its status, such as 400)"),
    (#"{ "post": "synced", "status": 200 }"#, "unknown field"),
  ])
  func aBadPostAnswerIsExit2NamingItsField(_ answer: String, _ problem: String) throws {
    let script = SimScript.make(
      server: #"{ "alice": [ \#(answer) ] }"#, steps: [SimScript.step("+0s", "start")])
    let path = try directory.write("bad-post.json", script)
    let result = try CLI.run(["simulate", "--script", path], in: directory.path)
    #expect(result.status == 2)
    #expect(result.stderr.hasPrefix("error: server.alice[0]"), "\(result.stderr)")
    #expect(result.stderr.contains(problem), "\(result.stderr)")
  }
}
