import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// `simulate --timeline` draws the facts `simulate --json` prints, from the same run: the SVG,
/// parsed as XML, has for every entitlement the bands the JSON lines' decisions give (each
/// starting and ending at their instants), the snapshot's freshness and origin likewise,
/// whether the server answered each fetch, a mark (alone or in a cluster that counts it) for
/// every fetch, purchase and diagnostic line, and a latency line only where a fetch line has
/// one.
@Suite(.enabled(if: CLI.simulates)) struct TimelineTests {
  /// The field reports in `Examples/FieldReports`, and the scripts below.
  static let examples = [
    "plane-trip", "account-switch", "refund", "clock-set-back", "device-blocked",
    "locked-at-launch",
  ]

  static func example(_ name: String) throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return try String(
      contentsOf: root.appending(path: "Examples/FieldReports/\(name).json"), encoding: .utf8)
  }

  @Test(
    "every band and mark of an example field report is a fact of its JSON lines",
    arguments: examples)
  func exampleFieldReport(_ name: String) throws {
    try TimelineCheck(script: try Self.example(name)).verify()
  }

  @Test("a launch before the device's first unlock: storage unavailable until the unlock")
  func lockedAtLaunch() throws {
    let check = try TimelineCheck(script: try Self.example("locked-at-launch"))
    try check.verify()
    let lock = check.svg.bands(in: "device lock")
    #expect(lock.map(\.state) == ["unlocked", "locked", "unlocked"])
    let locked = try #require(lock.dropFirst().first)
    #expect(locked.start == "2026-12-02T12:00:00Z")
    #expect(locked.end == "2026-12-02T12:15:00Z")
    // Never no_snapshot, which an app would take for a new user and show the paywall.
    let pro = check.svg.bands(in: "pro")
    #expect(
      pro.map(\.state) == ["granted", "offline_unavailable:storage_unavailable", "granted"],
      "\(pro.map(\.state))")
    #expect(pro.dropFirst().first?.start == locked.start)
    #expect(pro.dropFirst().first?.end == locked.end)
    // The start's answer came while the file was refused: it was not stored, and says so.
    let fetches = check.lines.filter { $0["type"] as? String == "fetch" }
    #expect(
      fetches.compactMap { $0["outcome"] as? String } == ["stored", "storageFailed", "stored"])
  }

  @Test("a slow answer: a line from the request to the answer, and its latency on hover")
  func aSlowAnswer() throws {
    let check = try TimelineCheck(script: Scripts.slowAnswer)
    try check.verify()
    let fetch = try #require(check.lines.first { $0["type"] as? String == "fetch" })
    #expect(fetch["requestedAt"] as? String == "2026-11-30T12:00:00Z")
    #expect(fetch["at"] as? String == "2026-11-30T12:00:30Z")
    #expect(
      check.svg.latencies(in: "network").map { [$0.from, $0.at] } == [
        ["2026-11-30T12:00:00Z", "2026-11-30T12:00:30Z"]
      ])
    #expect(
      check.svg.titles.contains {
        $0.contains("fetch start: stored\nrequested at 2026-11-30T12:00:00Z, answered after 30s")
      })
  }

  @Test func oneEventIsDrawn() throws {
    let check = try TimelineCheck(script: Scripts.oneEvent)
    try check.verify()
    #expect(check.lines.count == 1)
  }

  @Test func anOfflineAccountSwitch() throws {
    try TimelineCheck(script: Scripts.offlineSwitch).verify()
  }

  @Test func signedAnswersOneForged() throws { try TimelineCheck(script: Scripts.forged).verify() }

  @Test func aPurchaseInConflict() throws { try TimelineCheck(script: Scripts.conflict).verify() }

  @Test("an imported snapshot, replaced by the first refresh")
  func importedThenRefreshed() throws {
    let directory = try TemporaryDirectory()
    let imported = try CLI.run(
      [
        "import", "--db", "imported.sqlite",
      ] + Sample.scope(user: "alice") + [
        "--saved-at", "2026-11-25T12:00:00Z", "--label", "previous-json-cache",
        "--now", "2026-11-30T12:00:00Z",
      ], in: directory.path, stdin: Scripts.previousCache)
    #expect(imported.status == 0, "\(imported.stderr)")
    let check = try TimelineCheck(script: Scripts.afterImport, in: directory)
    try check.verify()
    let states = check.svg.bands(in: "snapshot").map(\.state)
    #expect(states.first == "stale:not_requested:not-high-trust:imported", "\(states)")
    #expect(states.last == "fresh:verified:high-trust", "\(states)")
  }

  @Test("a year of a device: over 5,000 events, legible, and under 2 MB")
  func aYear() throws {
    let check = try TimelineCheck(script: LongRunScript.year())
    try check.verify()
    #expect(check.lines.count >= 5_000)
    #expect(check.page.utf8.count < 2_000_000)
    // Drawn at most a few elements per pixel of each lane, whatever the run.
    #expect(check.svg.elements.count < 6_000, "\(check.svg.elements.count) elements")
  }
}

/// One run of `simulate --json --timeline` and what it printed and drew.
struct TimelineCheck {
  /// The script the run replayed.
  let script: String
  let lines: [[String: Any]]
  let page: String
  let svg: SVGDocument

  init(script: String, in directory: TemporaryDirectory? = nil) throws {
    let directory = try directory ?? TemporaryDirectory()
    self.script = script
    try directory.write("script.json", script)
    let run = try CLI.run(
      ["simulate", "--script", "script.json", "--json", "--timeline", "timeline.html"],
      in: directory.path)
    #expect(run.status == 0, "\(run.stderr)")
    lines = try run.stdout.split(separator: "\n").map { line in
      try #require(
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
    page = try String(contentsOfFile: directory.path("timeline.html"), encoding: .utf8)
    svg = try SVGDocument(page: page)
  }

  /// A band as the JSON lines give it: its state from one change to the next.
  struct Change {
    var at: String
    var state: String
    var user: String?
  }

  func verify(sourceLocation: SourceLocation = #_sourceLocation) throws {
    var access: [String: [Change]] = [:]
    var freshness: [Change] = []
    var answers: [Change] = []
    func key(_ decision: [String: Any]) -> String {
      (decision["state"] as? String ?? "?")
        + ((decision["reason"] as? String).map { ":" + $0 } ?? "")
    }
    func snapshotKey(_ decision: [String: Any]) -> String {
      let evidence = decision["evidence"] as? [String: Any] ?? [:]
      let imported = evidence["origin"] as? String == "imported" ? ":imported" : ""
      let trust = decision["isHighTrust"] as? Bool == true ? "high-trust" : "not-high-trust"
      return [
        evidence["freshness"] as? String ?? "none", evidence["verification"] as? String ?? "none",
        trust,
      ].joined(separator: ":") + imported
    }
    for line in lines {
      let at = line["at"] as? String ?? ""
      let user = line["user"] as? String
      switch line["type"] as? String {
      case "update":
        let decisions = line["decisions"] as? [String: [String: Any]] ?? [:]
        for (name, decision) in decisions {
          access[name, default: []].append(Change(at: at, state: key(decision), user: user))
        }
        if let first = decisions.keys.sorted().first, let decision = decisions[first] {
          freshness.append(Change(at: at, state: snapshotKey(decision), user: user))
        }
      case "check":
        let decision = line["decision"] as? [String: Any] ?? [:]
        let name = decision["entitlement"] as? String ?? "?"
        access[name, default: []].append(Change(at: at, state: key(decision), user: user))
        freshness.append(Change(at: at, state: snapshotKey(decision), user: user))
      case "fetch" where !["timedOut", "storageFailed"].contains(line["outcome"] as? String):
        // A forced wait that stopped, or an end the cache could not record, says nothing of
        // the server; any other end does.
        let answered = line["failure"] as? String != "transient"
        answers.append(Change(at: at, state: answered ? "answering" : "no-answer", user: nil))
      default: break
      }
    }
    let end = try #require(svg.root["data-end"], sourceLocation: sourceLocation)
    #expect(
      lines.allSatisfy { Instant.date($0["at"] as? String ?? "") <= Instant.date(end) },
      "the timeline ends before an event", sourceLocation: sourceLocation)
    for (name, changes) in access {
      expectBands(svg.bands(in: name), match: changes, end: end, lane: name, sourceLocation)
    }
    expectBands(
      svg.bands(in: "snapshot"), match: freshness, end: end, lane: "snapshot", sourceLocation)
    expectBands(
      svg.bands(in: "network"), match: answers, end: end, lane: "network", sourceLocation)
    // Each latency line drawn is a fetch line's, from its request to its answer.
    let requests = Set(
      lines.compactMap { line -> String? in
        guard line["type"] as? String == "fetch", let from = line["requestedAt"] as? String
        else { return nil }
        return from + " " + (line["at"] as? String ?? "")
      })
    for line in svg.latencies(in: "network") {
      #expect(
        requests.contains(line.from + " " + line.at),
        "network: a latency line from \(line.from) to \(line.at) no fetch line gives",
        sourceLocation: sourceLocation)
    }
    try verifySteps(sourceLocation)
    for (lane, type) in [("network", "fetch"), ("purchases", "purchase"), ("events", "event")] {
      let instants = lines.filter { $0["type"] as? String == type }
        .map { Instant.date($0["at"] as? String ?? "") }
      expectMarks(svg.markers(in: lane), cover: instants.sorted(), lane: lane, sourceLocation)
    }
  }

  /// The bands the JSON lines give: a change starts one, a change to the same state and user
  /// continues it, and of two changes at one instant the later holds.
  static func expectedBands(_ changes: [Change], end: String) -> [SVGDocument.Band] {
    var bands: [SVGDocument.Band] = []
    for change in changes {
      if bands.last?.start == change.at { bands.removeLast() }
      if let last = bands.last, last.state == change.state, last.user == change.user {
        bands[bands.count - 1].end = end
        continue
      }
      if !bands.isEmpty { bands[bands.count - 1].end = change.at }
      bands.append(
        SVGDocument.Band(
          start: change.at, end: end, state: change.state, user: change.user, count: 1))
    }
    return bands
  }

  func expectBands(
    _ drawn: [SVGDocument.Band], match changes: [Change], end: String, lane: String,
    _ sourceLocation: SourceLocation
  ) {
    let expected = Self.expectedBands(changes, end: end)
    var index = 0
    for band in drawn {
      let run = expected.dropFirst(index).prefix(band.count)
      guard run.count == band.count, let first = run.first, let last = run.last else {
        Issue.record(
          "\(lane): more bands drawn than the JSON gives", sourceLocation: sourceLocation)
        return
      }
      #expect(
        band.start == first.start,
        "\(lane): a band starts at \(band.start), the JSON at \(first.start)",
        sourceLocation: sourceLocation)
      #expect(
        band.end == last.end, "\(lane): a band ends at \(band.end), the JSON at \(last.end)",
        sourceLocation: sourceLocation)
      if band.count == 1 {
        #expect(
          band.state == first.state,
          "\(lane) at \(band.start): \(band.state), the JSON \(first.state)",
          sourceLocation: sourceLocation)
        #expect(
          band.user == first.user, "\(lane) at \(band.start): user", sourceLocation: sourceLocation)
      }
      index += band.count
    }
    #expect(
      index == expected.count, "\(lane): \(expected.count - index) bands of the JSON not drawn",
      sourceLocation: sourceLocation)
  }

  func expectMarks(
    _ drawn: [SVGDocument.Marker], cover instants: [Date], lane: String,
    _ sourceLocation: SourceLocation
  ) {
    var index = 0
    for marker in drawn {
      let covered = instants.dropFirst(index).prefix(marker.count)
      #expect(
        covered.count == marker.count, "\(lane): a mark counts more events than printed",
        sourceLocation: sourceLocation)
      #expect(
        covered.allSatisfy { $0 >= marker.at && $0 <= marker.until },
        "\(lane): a mark at \(marker.at)...\(marker.until) stands for events at \(Array(covered))",
        sourceLocation: sourceLocation)
      index += marker.count
    }
    #expect(
      index == instants.count, "\(lane): \(instants.count - index) printed events have no mark",
      sourceLocation: sourceLocation)
  }
}
