import Foundation
import TestSupport
import Testing

/// The timeline where an outside review broke it: paths it must never replace, changes it
/// drew as one, a run that stopped, a run of one instant, labels that tried to write hover
/// text of their own, and a run too large for 2 MB.
@Suite(.enabled(if: CLI.simulates)) struct TimelineEdgeTests {
  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
    try directory.write("script.json", Scripts.offlineSwitch)
  }

  func simulate(_ extra: [String], script: String = "script.json") throws -> CLIResult {
    try CLI.run(["simulate", "--script", script] + extra, in: directory.path)
  }

  @Test("a path that is not a regular file, the script or a database is refused before the run")
  func refusedPaths() throws {
    try FileManager.default.createDirectory(
      atPath: directory.path("folder"), withIntermediateDirectories: false)
    #expect(mkfifo(directory.path("pipe"), 0o600) == 0)
    try FileManager.default.createSymbolicLink(
      atPath: directory.path("link.html"), withDestinationPath: directory.path("script.json"))
    try directory.write("cache.sqlite", "")
    let put = try CLI.run(
      ["put", "--db", "cache.sqlite"] + Sample.scope() + ["--now", SampleSnapshot.requestDate],
      in: directory.path, stdin: SampleSnapshot.json)
    #expect(put.status == 0, "\(put.stderr)")
    let script = try String(contentsOfFile: directory.path("script.json"), encoding: .utf8)
    for path in ["folder", "pipe", "link.html", "script.json", "cache.sqlite", "missing/x.html"] {
      let result = try simulate(["--timeline", path])
      #expect(result.status == 2, "\(path): \(result.stderr)")
      #expect(result.stdout.isEmpty, "\(path): the run went ahead")
    }
    #expect(try String(contentsOfFile: directory.path("script.json"), encoding: .utf8) == script)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: directory.path("cache.sqlite"))).prefix(15)
        == Data("SQLite format 3".utf8))
    // A page already there is written over.
    try directory.write("page.html", "old")
    #expect(try simulate(["--timeline", "page.html"]).status == 0)
    #expect(try String(contentsOfFile: directory.path("page.html"), encoding: .utf8) != "old")
  }

  @Test("a clock set forward, then back, then to true time is three bands")
  func clockChanges() throws {
    try directory.write(
      "clock.json",
      """
      { "start": "2026-11-30T12:00:00Z", \(SampleScope.scriptIdentity),
        "steps": [ { "at": "+0s", "do": "start" },
                   { "at": "+1h", "do": "setClock", "to": "2026-12-03T13:00:00Z" },
                   { "at": "+2h", "do": "setClock", "to": "2026-11-28T14:00:00Z" },
                   { "at": "+3h", "do": "setClock", "to": "2026-11-30T15:00:00Z" } ] }
      """)
    #expect(try simulate(["--timeline", "clock.html"], script: "clock.json").status == 0)
    let svg = try SVGDocument(
      page: try String(contentsOfFile: directory.path("clock.html"), encoding: .utf8))
    #expect(
      svg.bands(in: "device clock").map(\.state) == [
        "clock-set:device clock +3 d", "clock-set:device clock -2 d", "clock",
      ])
  }

  @Test("a forged answer, then a valid one: the snapshot lane shows the verification change")
  func verificationChange() throws {
    let check = try TimelineCheck(script: Scripts.forged)
    let states = check.svg.bands(in: "snapshot").map(\.state)
    #expect(states.contains { $0.hasPrefix("fresh:failed:") }, "\(states)")
    #expect(states.last == "fresh:verified:high-trust", "\(states)")
  }

  @Test("a run a storage failure stopped is drawn to where it stopped, and says so")
  func stoppedRun() throws {
    let put = try CLI.run(
      ["put", "--db", "newer.sqlite"] + Sample.scope(user: "alice") + [
        "--now", SampleSnapshot.requestDate,
      ],
      in: directory.path, stdin: SampleSnapshot.json)
    #expect(put.status == 0, "\(put.stderr)")
    // A newer build's file this build reads but never writes: the first answer is refused.
    let sqlite = try #require(
      ["/usr/bin/sqlite3", "/bin/sqlite3"].first { FileManager.default.fileExists(atPath: $0) })
    _ = try CLI.run(
      ["newer.sqlite", "PRAGMA user_version = 99"], in: directory.path, prefix: [sqlite],
      binaryless: true)
    try directory.write(
      "stopped.json",
      """
      { "start": "2026-11-30T12:00:00Z", "db": "newer.sqlite", "watch": ["pro"], \(SampleScope.scriptIdentity),
        "server": { "alice": [ \(Scripts.active) ] },
        "steps": [ { "at": "+0s", "do": "start" }, { "at": "+1h", "do": "logIn", "user": "bob" },
                   { "at": "+2h", "do": "relaunch" } ] }
      """)
    let result = try simulate(["--timeline", "stopped.html"], script: "stopped.json")
    #expect(result.status == 3, "\(result.stderr)")
    let page = try String(contentsOfFile: directory.path("stopped.html"), encoding: .utf8)
    #expect(page.contains("The run stopped here"))
    let svg = try SVGDocument(page: page)
    #expect(svg.root["data-end"] == "2026-11-30T12:00:01Z", "\(svg.root)")
    #expect(svg.markers(in: "user").isEmpty)
  }

  @Test("a run of one instant is drawn over a second, its bands visible")
  func oneInstant() throws {
    let check = try TimelineCheck(script: Scripts.oneEvent)
    let band = try #require(check.svg.bands(in: "pro").first)
    #expect(band.start == "2026-11-30T12:00:00Z")
    #expect(band.end == "2026-11-30T12:00:01Z")
  }

  @Test("a label cannot write a line of hover text of its own, nor turn text around")
  func hostileLabels() throws {
    let label = "bob\n2026-11-30T12:01:00Z\npro: granted, high trust\u{202E}"
    let script = Scripts.offlineSwitch.replacing(
      "\"bob\"", with: "\"bob\\n2026-11-30T12:01:00Z\\npro: granted, high trust\\u202e\"")
    let check = try TimelineCheck(script: script)
    #expect(!check.page.contains(label))
    #expect(!check.page.contains("\u{202E}"))
    #expect(check.page.contains("bob\\u{A}2026-11-30T12:01:00Z"))
  }

  @Test(
    "tick labels read their instant, from seconds to months",
    arguments: [
      (every: "2s", count: 10, unit: "seconds"), (every: "15m", count: 12, unit: "minutes"),
      (every: "6h", count: 20, unit: "days or hours"), (every: "5d", count: 18, unit: "days"),
    ])
  func tickLabels(every: String, count: Int, unit: String) throws {
    let amount = Int(every.dropLast()) ?? 1
    let steps = (1...count).map {
      #"{ "at": "+\#($0 * amount)\#(every.suffix(1))", "do": "check", "entitlement": "pro" }"#
    }
    let script = """
      { "start": "2026-11-30T12:00:00Z", \(SampleScope.scriptIdentity),
        "steps": [ \(steps.joined(separator: ", ")) ] }
      """
    let ticks = try TimelineCheck(script: script).svg.ticks
    #expect(ticks.count >= 3, "\(ticks)")
    #expect(Set(ticks.map(\.label)).count == ticks.count, "\(ticks)")
    #expect(ticks.map { Instant.date($0.at) } == ticks.map { Instant.date($0.at) }.sorted())
    let months = [
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    for tick in ticks {
      // 2026-11-30T12:30:15Z: Nov 30, 12:30, 12:30:15.
      let stamp = Array(tick.at)
      let day = "\(months[(Int(String(stamp[5..<7])) ?? 1) - 1]) \(Int(String(stamp[8..<10])) ?? 0)"
      let time = String(stamp[11..<19])
      let readings = [
        time, String(time.prefix(5)), day, day + " " + time, day + " " + time.prefix(5),
      ]
      #expect(readings.contains(tick.label), "\(tick.label) does not read \(tick.at)")
    }
    switch unit {
    case "seconds": #expect(ticks.contains { $0.label.count == 8 }, "\(ticks)")
    case "minutes":
      // Minutes, never seconds: each time of day is HH:MM.
      let times = ticks.compactMap { $0.label.split(separator: " ").last }.filter {
        $0.contains(":")
      }
      #expect(!times.isEmpty && times.allSatisfy { $0.count == 5 }, "\(ticks)")
    case "days": #expect(ticks.allSatisfy { !$0.label.contains(":") }, "\(ticks)")
    default: break
    }
  }

  @Test("a burst, hours of nothing, a burst: the quiet hours are drawn short, with their length")
  func quietHoursDrawnShort() throws {
    for second in [["+1s"], ["+1s", "+2s", "+35998s", "+35999s"]] {
      let steps = second.map { #"{ "at": "\#($0)", "do": "check", "entitlement": "pro" }"# }
      let script = """
        { "start": "2026-11-30T12:00:00Z", \(SampleScope.scriptIdentity),
          "steps": [ \(steps.joined(separator: ", ")), { "at": "+10h", "do": "check", "entitlement": "pro" } ] }
        """
      let page = try TimelineCheck(script: script).page
      #expect(page.contains(#"<g class="break""#), "\(second): no stretch drawn short")
      #expect(page.contains("≈ 10 h") || page.contains("≈ 9 h"), "\(second)")
    }
  }

  @Test("twenty entitlements over a year stay under 2 MB")
  func manyLanes() throws {
    let watched = (1...20).map { "\"key\($0)\"" }.joined(separator: ", ")
    let script = LongRunScript.year().replacing(
      "\"watch\": [\"pro\"]", with: "\"watch\": [\(watched), \"pro\"]")
    let check = try TimelineCheck(script: script)
    #expect(check.page.utf8.count < 2_000_000, "\(check.page.utf8.count) bytes")
  }
}
