import Foundation
import TestSupport
import Testing

/// `demo`, the README's main-job command.
@Suite(.enabled(if: CLI.simulates)) struct DemoTests {
  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  static let titles = [
    "A fresh grant", "Staleness", "A failed refresh (offline)", "Expiry flips offline",
    "The bounded lifetime window", "An expired access context", "A device block",
    "A user switch", "Clock rollback", "A clock set back before a refresh",
    "The refresh client launches offline", "A forced fetch that times out",
    "A late answer after a user switch", "Expiry flips the stream, offline",
    "A purchase made offline is queued, then posted as its buyer",
  ]

  @Test func walksThroughEveryRuleAndLeavesNothingBehind() throws {
    let scratch = directory.path("tmp")
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    let result = try CLI.run(["demo"], in: directory.path, environment: ["TMPDIR": scratch])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    for (index, title) in Self.titles.enumerated() {
      #expect(result.stdout.contains("\n\(index + 1). \(title)\n"), "missing step \(title)")
    }
    for decision in [
      "pro → granted, high trust", "pro → granted, not high trust", "pro → denied: expired",
      "lifetime → denied: offline_window_elapsed", "pro → device blocked: DEVICE_REPLACED",
      "pro → offline unavailable: no_snapshot", "clock rollback suspected",
      "access context removed from CustomerInfo", "clock offset +20 d",
    ] {
      #expect(result.stdout.contains(decision), "missing \(decision)")
    }
    #expect(!result.stdout.contains("demo-token"))
    #expect(!result.stdout.contains("demo-user"))
    // The throw-away database is gone; the timeline of the refresh client's run is left, and
    // its path printed.
    let page = "entitlement-cache-demo-timeline.html"
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch) == [page])
    #expect(result.stdout.contains("drawn as a timeline: \(scratch)/\(page)\n"))
    let svg = try SVGDocument(
      page: try String(contentsOfFile: scratch + "/" + page, encoding: .utf8))
    #expect(!svg.bands(in: "pro").isEmpty)
    // Every run prints the same.
    #expect(
      try CLI.run(["demo"], in: directory.path, environment: ["TMPDIR": scratch]).stdout
        == result.stdout)
  }

  @Test func jsonHasEveryStepAndDecision() throws {
    let result = try CLI.run(["demo", "--json"], in: directory.path)
    #expect(result.status == 0)
    let json = try result.json()
    #expect(json["start"] as? String == "2026-11-30T12:00:00Z")
    let steps = try #require(json["steps"] as? [[String: Any]])
    #expect(steps.map { $0["title"] as? String ?? "" } == Self.titles)
    let states = steps.flatMap { step in
      (step["observations"] as? [[String: Any]] ?? []).compactMap {
        ($0["decision"] as? [String: Any])?["state"] as? String
      }
    }
    #expect(
      Set(states) == ["granted", "denied", "device_blocked", "offline_unavailable"])
  }

  @Test func keepsTheDatabaseWhenAsked() throws {
    let db = directory.path("demo.sqlite")
    let result = try CLI.run(["demo", "--db", db], in: directory.path)
    #expect(result.status == 0)
    #expect(
      result.stdout.hasPrefix("EntitlementCache demo: every offline rule, on the database \(db)."))
    let scopes = try CLI.run(["scopes", "--db", db, "--json"], in: directory.path).json()
    // User A on two installations, user B, whose clock was set back before a refresh, and
    // the refresh client's alice and bob on a third installation.
    #expect(scopes["count"] as? Int == 5)
    let again = try CLI.run(["demo", "--db", db], in: directory.path)
    #expect(again.status == 2)
    #expect(
      again.stderr == "error: demo: \(db) exists; give a new path so nothing is overwritten\n")
  }

  @Test func startsWhereNowSays() throws {
    let result = try CLI.run(["demo", "--now", "2030-01-01T00:00:00Z"], in: directory.path)
    #expect(result.status == 0)
    #expect(result.stdout.contains("The story starts at 2030-01-01T00:00:00Z"))
    #expect(result.stdout.contains("2030-01-01T00:01:00Z      user A: pro → granted, high trust"))
  }
}
