import Foundation
import TestSupport
import Testing

/// A replay on a device launched locked, where an outside try broke it: a file the run could
/// never use passing for a locked one, a latency given to the wrong request, a timeline over the
/// run's own database, a log-out that did not happen, and a refused answer drawn as one.
@Suite(.enabled(if: CLI.simulates)) struct SimulateLockedDeviceTests {
  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  func simulate(_ script: String, _ extra: [String] = []) throws -> CLIResult {
    try directory.write("script.json", script)
    return try CLI.run(["simulate", "--script", "script.json"] + extra, in: directory.path)
  }

  static func script(db: String? = nil, server: String = "{}", steps: String) -> String {
    """
    { "start": "2026-11-30T12:00:00Z", \(db.map { "\"db\": \"\($0)\"," } ?? "") "watch": ["pro"],
      \(SampleScope.scriptIdentity), "server": \(server), "steps": [ \(steps) ] }
    """
  }

  @Test("a file the run could never use is refused before the first step, locked or not")
  func anUnusableFileIsNotALockedOne() throws {
    try directory.write("notes.txt", "not a database, just some text\n")
    let steps = """
      { "at": "+0s", "do": "start", "locked": true }, { "at": "+1m", "do": "unlock" },
      { "at": "+2m", "do": "check", "entitlement": "pro" }
      """
    let result = try simulate(Self.script(db: "notes.txt", steps: steps))
    #expect(result.status == 3, "\(result.stderr)")
    #expect(result.stdout.isEmpty, "the run went ahead: \(result.stdout)")
    #expect(
      try String(contentsOfFile: directory.path("notes.txt"), encoding: .utf8)
        == "not a database, just some text\n")
  }

  @Test("a fetch the client gave up on is timed from its own request, not an earlier one's")
  func latencyOfTheRequestReported() throws {
    // Both answers take longer than the client's 60-second request timeout.
    let server = """
      { "alice": [ { "fail": "transient", "latency": "90s" },
                   { "fail": "transient", "latency": "90s" } ] }
      """
    let steps = """
      { "at": "+0s", "do": "start" }, { "at": "+0s", "do": "background" },
      { "at": "+1h", "do": "refresh" }
      """
    let result = try simulate(Self.script(server: server, steps: steps), ["--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let fetches = try result.stdout.split(separator: "\n").compactMap { line in
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      return object?["type"] as? String == "fetch" ? object : nil
    }
    // Each is reported when the client gives up on it, 60 seconds after its own request (the
    // refresh from the background waits a moment first); the first answer's late arrival
    // belongs to neither.
    #expect(fetches.count == 2)
    for fetch in fetches {
      let requested = Instant.date(fetch["requestedAt"] as? String ?? "")
      #expect(Instant.date(fetch["at"] as? String ?? "").timeIntervalSince(requested) == 60)
    }
    #expect(fetches.last?["requestedAt"] as? String ?? "" > "2026-11-30T13:00")
  }

  @Test("the page never replaces the run's database, even one the run is about to create")
  func notOverTheDatabase() throws {
    let steps = #"{ "at": "+0s", "do": "start" }"#
    for path in ["new.sqlite", "new.sqlite-wal", "new.sqlite-shm", "./new.sqlite-journal"] {
      let result = try simulate(Self.script(db: "new.sqlite", steps: steps), ["--timeline", path])
      #expect(result.status == 2, "\(path): \(result.stderr)")
      #expect(result.stdout.isEmpty, "\(path): the run went ahead")
    }
    #expect(!FileManager.default.fileExists(atPath: directory.path("new.sqlite")))
  }

  @Test("a log-out the locked file refuses stops the run, rather than go on as the same user")
  func aLogOutThatDidNotHappen() throws {
    let server = #"{ "alice": [ \#(Scripts.active) ] }"#
    let steps = """
      { "at": "+0s", "do": "start" }, { "at": "+1m", "do": "relaunch", "locked": true },
      { "at": "+2m", "do": "logOut" }, { "at": "+3m", "do": "unlock" },
      { "at": "+4m", "do": "check", "entitlement": "pro" }
      """
    let result = try simulate(Self.script(server: server, steps: steps))
    #expect(result.status == 3, "\(result.stderr)")
    #expect(!result.stdout.contains("check "), "the run went on: \(result.stdout)")
  }

  @Test("while locked, a failure the cache could not record says nothing of the network")
  func aRefusedRecordIsNoAnswer() throws {
    let server = #"{ "alice": [ { "fail": "transient", "status": 503 } ] }"#
    let steps = """
      { "at": "+0s", "do": "start", "locked": true },
      { "at": "+1m", "do": "check", "entitlement": "pro" }
      """
    let result = try simulate(
      Self.script(server: server, steps: steps), ["--json", "--timeline", "page.html"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains(#""outcome":"storageFailed""#), "\(result.stdout)")
    let svg = try SVGDocument(
      page: try String(contentsOfFile: directory.path("page.html"), encoding: .utf8))
    #expect(svg.bands(in: "network").isEmpty, "\(svg.bands(in: "network").map(\.state))")
  }
}
