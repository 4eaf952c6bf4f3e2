import Foundation
import TestSupport
import Testing

// `simulate` and the purchase queue: each purchase posted as the user who observed it.
extension SimulateTests {
  @Test func aPurchaseIsPostedAsItsObserverAcrossAnAccountSwitchAndNeverAsTheNextUser() throws {
    // Alice buys offline; she logs out, bob logs in: his log-in drains the queue, and her
    // purchase is posted as alice. Bob then observes the same transaction: it stays hers.
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
        // In the background no timer retries; bob's log-in drains the queue, and alice's
        // entry, due by then, is posted as alice.
        "12:03:00Z purchase alice tx1 posting#2", "12:03:01Z purchase alice tx1 synced#2",
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
