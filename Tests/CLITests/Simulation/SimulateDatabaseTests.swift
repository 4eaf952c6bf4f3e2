import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// The database a `simulate` run uses: kept, thrown away, or not openable.
extension SimulateTests {
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

  /// A script may come from someone else: a `db` naming a file that is not a database (a note,
  /// a shell profile) is refused and left as it was, never moved aside and replaced with a
  /// cache, and one naming a FIFO is refused before anything opens it.
  @Test func aDatabaseNamedByAScriptIsNeverReplaced() throws {
    let note = try directory.write("notes.txt", "important user data\n")
    let path = try directory.write(
      "script.json", SimScript.make(steps: [SimScript.step("+0s", "start")], db: #""notes.txt""#))
    let result = try CLI.run(["simulate", "--script", path], in: directory.path)
    #expect(result.status == 3)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr == "error: notes.txt: damaged (file is not a database); left untouched\n")
    #expect(try String(contentsOfFile: note, encoding: .utf8) == "important user data\n")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
        "notes.txt", "script.json",
      ])

    #expect(mkfifo(directory.path("fifo"), 0o600) == 0)
    let fifoScript = try directory.write(
      "fifo.json", SimScript.make(steps: [SimScript.step("+0s", "start")], db: #""fifo""#))
    let fifo = try CLI.run(["simulate", "--script", fifoScript], in: directory.path)
    #expect(fifo.status == 3)
    #expect(fifo.stderr == "error: db: fifo is a FIFO, not a regular file\n")
  }
}
