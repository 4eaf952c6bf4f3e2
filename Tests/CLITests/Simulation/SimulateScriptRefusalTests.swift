import Foundation
import TestSupport
import Testing

// Scripts `simulate` refuses, each with the field it names.
extension SimulateTests {
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
      // The client ignores a phase change before it starts: the run would have been a
      // foreground launch while the script meant a background one.
      SimScript.make(steps: [SimScript.step("+0s", "background"), SimScript.step("+0s", "start")]),
      #"steps[0]: a phase change before the app starts does nothing; a launch in the "#
        + #"background is {"do": "start", "in": "background"}"#
    ),
    (
      SimScript.make(steps: [SimScript.step("+0s", "start", #""in": "asleep""#)]),
      #"steps[0].in: unknown phase "asleep" (foreground or background)"#
    ),
    (
      // Unlocking a device no step locked would say the file was refused until then.
      SimScript.make(steps: [SimScript.step("+0s", "start"), SimScript.step("+1m", "unlock")]),
      #"steps[1]: the device is not locked; a start or relaunch with "locked": true locks it"#
    ),
    (
      // The file is open once the app has launched: only a restart locks it again.
      SimScript.make(steps: [
        SimScript.step("+0s", "start"), SimScript.step("+1m", "start", #""locked": true"#),
      ]),
      #"steps[1]: the app has launched already; a restart before the first unlock is "#
        + #"{"do": "relaunch", "locked": true}"#
    ),
    (
      SimScript.make(steps: [SimScript.step("+0s", "relaunch", #""locked": "yes""#)]),
      "steps[0].locked: expected true or false"
    ),
    (
      SimScript.make(steps: [
        SimScript.step(
          "+0s", "purchase",
          #""transaction": "\#(String(repeating: "t", count: 257))", "product": "pro_monthly""#)
      ]),
      "steps[0].transaction: over 256 bytes"
    ),
    (
      SimScript.make(steps: Array(repeating: SimScript.step("+0s", "sync"), count: 10_001)),
      "steps: 10001 steps; a script has at most 10000, and a field report a few dozen"
    ),
    (
      SimScript.make(
        steps: (0...1_000).map {
          SimScript.step("+0s", "purchase", #""transaction": "t\#($0)", "product": "pro""#)
        }),
      "steps[1000]: a purchase beyond the 1000 a script may make"
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
      SimScript.make(server: #"{ "bob": [ { "fail": "transient", "status": 200 } ] }"#, steps: []),
      "server.bob[0].status: 200 is not a transient failure's status (a 5xx, 408 or 429)"
    ),
    (
      SimScript.make(server: #"{ "bob": [ { "fail": "rejected", "status": 503 } ] }"#, steps: []),
      "server.bob[0].status: 503 is not a rejection's status (a 4xx)"
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
