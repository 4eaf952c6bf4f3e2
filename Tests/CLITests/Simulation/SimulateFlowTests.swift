import Foundation
import TestSupport
import Testing

// The refresh client's flows as `simulate` drives them on the virtual clock.
extension SimulateTests {
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

  /// A launch in the background (a background fetch) delays its refresh by up to 5 s and
  /// retries nothing, where a foreground launch fetches at once.
  @Test func aBackgroundLaunchDelaysItsFetch() throws {
    let script = SimScript.make(
      server: #"{ "alice": [ { "fail": "transient" }, \#(SimScript.answer()) ] }"#,
      steps: [
        SimScript.step("+0s", "start", #""in": "background""#),
        SimScript.step("+10m", "check", #""entitlement": "pro""#),
      ])
    let lines = try events(script)
    let fetches = lines.filter { $0.contains(" fetch ") }
    #expect(fetches.count == 1, "\(lines)")
    #expect(fetches.first?.hasPrefix("12:00:00Z") == false, "\(lines)")
    #expect(fetches.first?.hasSuffix("start failed") == true, "\(lines)")
    // A relaunch starts the app too, so a phase change may follow it.
    let relaunched = SimScript.make(steps: [
      SimScript.step("+0s", "relaunch"), SimScript.step("+1s", "background"),
    ])
    #expect(try run(relaunched).status == 0)
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

  /// Two users whose IDs are the same text in two Unicode forms are two users to the scripted
  /// server too: the second was served the first's answers, so the run showed a server that
  /// does not exist.
  @Test func usersInTwoUnicodeFormsAreTwoUsersToTheServer() throws {
    let script = SimScript.make(
      server: #"{ "caf\u00e9": [ \#(SimScript.answer()), \#(SimScript.answer()) ] }"#,
      steps: [
        SimScript.step("+0s", "start"), SimScript.step("+1m", "logIn", #""user": "cafe\u0301""#),
        SimScript.step("+2m", "check", #""entitlement": "pro""#),
      ], user: #"caf\u00e9"#)
    let parsed = try lines(run(script).stdout)
    let fetches = parsed.filter { $0["type"] as? String == "fetch" }
    #expect(fetches.first?["outcome"] as? String == "stored")
    // Every fetch of the second user fails (the server has no answer for them) and retries.
    let second = fetches.dropFirst()
    #expect(!second.isEmpty)
    #expect(
      second.allSatisfy {
        ($0["user"] as? String).map { Array($0.utf8) } == Array("cafe\u{301}".utf8)
          && $0["outcome"] as? String == "failed"
      })
    let check = try #require(parsed.last { $0["type"] as? String == "check" })
    #expect((check["decision"] as? [String: Any])?["state"] as? String == "offline_unavailable")
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
}
