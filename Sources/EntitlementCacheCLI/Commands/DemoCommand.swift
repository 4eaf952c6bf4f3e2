import EntitlementCache
import EntitlementCacheTesting

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `demo`: a guided run of every offline rule on a throw-away database.
enum DemoCommand: Command {
  static let spec = CommandSpec(
    name: "demo",
    summary: "a guided run of every offline rule on a throw-away database",
    usage: "demo [--db PATH] [--now TIME] [--json]",
    discussion: """
      Stores snapshots, moves a manual clock and prints each decision with its evidence:
      a fresh grant, staleness, a failed refresh, expiry offline, the lifetime window, an
      expired access context, a device block, a user switch, a clock rollback and a clock
      set back before a refresh. Then the refresh client runs on a virtual clock against a
      scripted server (the simulate engine): an offline launch, a forced fetch that times
      out, a late answer after a user switch, an expiry that flips the stream with no
      network, and a purchase made offline, queued, then posted as its buyer.
      Times are the device clock's; a relative time beside a server-issued instant says "by
      server time" when the cache's estimate of the server's clock differs from it.
      Without --db the database lives in a temporary directory and is deleted at the end.
      The story starts at --now (default \(defaultStart.iso8601)), so every run prints the same.
      """,
    flags: [
      Flag("--db", "PATH", "keep the demo database at PATH (must not exist yet)"),
      Flag("--now", "TIME", "when the story starts (default \(defaultStart.iso8601))"),
      CommonFlags.json,
    ],
    examples: [
      "entitlement-cache demo",
      "entitlement-cache demo --db demo.sqlite && entitlement-cache scopes --db demo.sqlite",
    ])

  /// 2026-11-30T12:00:00Z, the `requestDate` of the example snapshot the tests share
  /// (`Tests/TestSupport/SampleSnapshot.swift`).
  static let defaultStart = Date(timeIntervalSince1970: 1_796_040_000)

  /// The story of the client chapter where it cannot run: the simulation engine runs the
  /// client's tasks on a task executor, which macOS has only from version 15.
  static let clientChapterLeftOut =
    "Left out on this system: the refresh client runs on the simulate engine, which needs "
    + "macOS 15 or later."

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let start = invocation.arguments.has("--now") ? invocation.now : defaultStart
    let kept = invocation.arguments.value("--db")
    if let kept { try InputFile.checkLength(of: kept, named: "--db") }
    if let kept, FileManager.default.fileExists(atPath: kept) {
      throw CLIError.usage("demo: \(kept) exists; give a new path so nothing is overwritten")
    }
    let directory = kept == nil ? try ScratchDirectory.make("demo") : nil
    defer {
      if let directory { ScratchDirectory.remove(directory) }
    }
    let path = kept ?? (directory ?? "") + "/demo.sqlite"

    let clock = ManualClock(start)
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    let cache: SQLiteCustomerInfoCache
    do {
      cache = try SQLiteCustomerInfoCache(
        path: path, configuration: configuration, clock: clock.cacheClock)
    } catch {
      throw CLIError(error, path: path)
    }
    var steps = try DemoScript(cache: cache, clock: clock, start: start).run()
    let chapter = DemoClientChapter(path: path, start: start)
    try chapter.seed(cache, clock: clock)
    // The chapter opens the file as a simulated app: it is that app's only process.
    do {
      try cache.close()
    } catch {
      throw CLIError(error, path: path)
    }
    var timelinePath: String?
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
      let (chapterSteps, timeline, events) = try chapter.run()
      steps += chapterSteps
      timelinePath = Self.writeTimeline(timeline, events: events)
    } else {
      steps.append(DemoStep(title: "The refresh client", story: Self.clientChapterLeftOut))
    }
    invocation.emit(
      text: text(steps, start: start, kept: kept, timeline: timelinePath),
      json: json(steps, start: start, timeline: timelinePath))
    return .success
  }

  /// Writes the demo's timeline: `TMPDIR/entitlement-cache-demo-timeline.html`, one name
  /// written over at every run, so a newcomer's temporary folder keeps one page; where that
  /// name is another user's, a new folder of this run's. Nil when neither can be written: the
  /// demo is told all the same.
  private static func writeTimeline(_ timeline: Timeline, events: Int) -> String? {
    var folder = (try? DatabaseLocation.environment("TMPDIR")) ?? "/tmp"
    while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
    let title = "The demo's field report: the refresh client"
    let path = folder + "/entitlement-cache-demo-timeline.html"
    if (try? TimelineFile.write(timeline, events: events, title: title, to: path)) != nil {
      return path
    }
    guard let own = try? ScratchDirectory.make("demo-timeline") else { return nil }
    let fallback = own + "/timeline.html"
    return (try? TimelineFile.write(timeline, events: events, title: title, to: fallback))
      .map { fallback }
  }

  // MARK: Output

  private static func text(
    _ steps: [DemoStep], start: Date, kept: String?, timeline: String?
  ) -> String {
    var output = """
      EntitlementCache demo: every offline rule, on \
      \(kept.map { "the database \($0)" } ?? "a throw-away database").
      The story starts at \(start.iso8601); decisions come from the library, as an app sees them.

      """
    for (index, step) in steps.enumerated() {
      output += "\n\(index + 1). \(step.title)\n"
      output += wrap(step.story, width: 96, indent: "   ")
      for observation in step.observations {
        output += line(observation)
      }
    }
    if let timeline {
      output += "\nThe refresh client's run, drawn as a timeline: \(timeline)\n"
      output += "(one HTML page; open it in a browser and hover over a band or a mark)\n"
    }
    output += "\nTry it on your own snapshot: entitlement-cache put --help\n"
    output += "Replay your own field report: entitlement-cache simulate --help\n"
    return output
  }

  /// `2026-11-30T12:00:00.000Z`'s length.
  private static let stampWidth = 24

  /// `2026-11-30T12:01:00Z  user A: pro → granted, high trust`, then its evidence.
  private static func line(_ observation: DemoObservation) -> String {
    // Every stamp takes the width of one with milliseconds, so the columns line up either way.
    let stamp = observation.at.iso8601
    let time =
      "   \(stamp)\(String(repeating: " ", count: max(0, Self.stampWidth - stamp.count)))  "
    let pad = String(repeating: " ", count: time.count)
    switch observation.content {
    case .fact(let fact):
      return "\(time)\(observation.who): \(fact)\n"
    case .decision(let decision):
      let headline = "\(decision.entitlement) → \(DecisionOutput.verdict(decision))"
      var lines = [time + "\(observation.who): " + headline]
      for part in evidence(decision, now: observation.at) {
        if let last = lines.last, last.count > pad.count, last.count + 2 + part.count <= 100,
          !last.hasPrefix(time)
        {
          lines[lines.count - 1] += ", " + part
        } else {
          lines.append(pad + part)
        }
      }
      return lines.joined(separator: "\n") + "\n"
    }
  }

  /// The evidence that matters for the step, in short phrases.
  private static func evidence(_ decision: AccessDecision, now: Date) -> [String] {
    let evidence = decision.evidence
    // Server-issued instants read relative to the server's time as the cache estimates it.
    let serverNow = evidence.estimatedServerTime ?? now
    var parts: [String] = []
    if let freshness = evidence.freshness { parts.append(freshness.rawValue) }
    if evidence.verification != nil {
      parts.append(TextOutput.verification(evidence.verification, evidence.verificationFailure))
    }
    if evidence.isComputedOffline == true { parts.append("computed offline") }
    if let validUntil = evidence.validUntil {
      let label =
        switch decision.state {
        case .granted: "valid until"
        case .deviceBlocked: "entitled until"
        case .denied, .offlineUnavailable: "ended"
        }
      parts.append(
        "\(label) \(TextOutput.serverTime(validUntil, serverNow: serverNow, deviceNow: now))")
    }
    if let device = decision.device {
      parts.append(
        "next device change \(TextOutput.serverTime(device.nextAllowedAt, serverNow: serverNow, deviceNow: now))"
      )
      if let budget = device.changeBudget {
        parts.append("budget \(DecisionOutput.budgetText(budget))")
      }
      parts.append("\(device.devices.count) devices listed")
    }
    if evidence.clockRollbackSuspected { parts.append("clock rollback suspected") }
    if evidence.pendingPurchase { parts.append("purchase pending") }
    if let offset = evidence.clockOffset, offset != 0 {
      parts.append("clock offset \(TextOutput.signedDuration(offset))")
      parts.append("server time \(TextOutput.timestamp(serverNow))")
    }
    return parts.isEmpty ? ["no evidence: nothing is stored for this scope"] : parts
  }

  private static func wrap(_ text: String, width: Int, indent: String) -> String {
    var lines: [String] = []
    var current = indent
    for word in text.split(separator: " ") {
      if current.count > indent.count, current.count + 1 + word.count > width {
        lines.append(current)
        current = indent
      }
      current += (current.count > indent.count ? " " : "") + word
    }
    lines.append(current)
    return lines.joined(separator: "\n") + "\n"
  }

  private static func json(_ steps: [DemoStep], start: Date, timeline: String?) -> JSONOutput {
    .object([
      ("start", .date(start)),
      ("timeline", .text(timeline)),
      (
        "steps",
        .array(
          steps.map { step in
            .object([
              ("title", .string(step.title)),
              ("story", .string(step.story)),
              ("observations", .array(step.observations.map(json))),
            ])
          })
      ),
    ])
  }

  private static func json(_ observation: DemoObservation) -> JSONOutput {
    var fields: [(String, JSONOutput)] = [
      ("at", .date(observation.at)), ("who", .string(observation.who)),
    ]
    switch observation.content {
    case .decision(let decision): fields.append(("decision", DecisionOutput.json(decision)))
    case .fact(let fact): fields.append(("fact", .string(fact)))
    }
    return .object(fields)
  }
}
