import Foundation
import Testing

/// What the timeline draws from the script's own steps rather than from printed events: the
/// app's phase, its relaunches and network calls, log-ins and log-outs, the device clock and
/// its lock. Each band and mark is held to the instant of the step it stands for.
extension TimelineCheck {
  /// One step of the script: its instant as the JSON lines write instants, its action, and
  /// its object.
  struct Step {
    var at: String
    var action: String
    var fields: [String: Any]
  }

  /// The script's steps, each at its instant.
  func steps() throws -> [Step] {
    let root = try #require(
      try JSONSerialization.jsonObject(with: Data(script.utf8)) as? [String: Any])
    let start = Instant.date(try #require(root["start"] as? String))
    let steps = try #require(root["steps"] as? [[String: Any]])
    return try steps.map { step in
      let at = try #require(step["at"] as? String)
      let instant =
        at.hasPrefix("+") ? start.addingTimeInterval(try Self.offset(at)) : Instant.date(at)
      return Step(
        at: Self.text(instant), action: try #require(step["do"] as? String), fields: step)
    }
  }

  /// `+90s`, `+10m`, `+2d`, `+900ms` in seconds: the forms the scripts under test write.
  static func offset(_ text: String) throws -> TimeInterval {
    let units: [(String, TimeInterval)] = [
      ("ms", 0.001), ("s", 1), ("m", 60), ("h", 3_600), ("d", 86_400),
    ]
    for (unit, seconds) in units where text.hasSuffix(unit) {
      let number = text.dropFirst().dropLast(unit.count)
      if let value = Int(number) { return TimeInterval(value) * seconds }
    }
    throw CheckFailure(description: "not an offset the timeline tests read: \(text)")
  }

  struct CheckFailure: Error, CustomStringConvertible {
    var description: String
  }

  /// An instant as the tool prints it: milliseconds only when there are some.
  static func text(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
    if milliseconds.truncatingRemainder(dividingBy: 1000) != 0 {
      formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    }
    return formatter.string(from: date)
  }

  func verifySteps(_ sourceLocation: SourceLocation) throws {
    let steps = try steps()
    let end = try #require(svg.root["data-end"], sourceLocation: sourceLocation)
    func instants(_ actions: Set<String>) -> [Date] {
      steps.filter { actions.contains($0.action) }.map { Instant.date($0.at) }
    }
    // Marks: log-ins and log-outs on the user lane; relaunches and network calls on the app's.
    expectMarks(
      svg.markers(in: "user"), cover: instants(["logIn", "logOut"]), lane: "user",
      sourceLocation)
    expectMarks(
      svg.markers(in: "app"), cover: instants(["relaunch", "networkAvailable"]), lane: "app",
      sourceLocation)

    // The app's phase: a launch in its phase, then each move to the foreground or background.
    var phases: [Change] = []
    var locks: [Change] = []
    let runStart = svg.root["data-start"] ?? ""
    let firstLaunch = steps.firstIndex { ["start", "relaunch"].contains($0.action) }
    for (index, step) in steps.enumerated() {
      let phase = step.fields["in"] as? String ?? "foreground"
      switch step.action {
      case "start", "relaunch": phases.append(Change(at: step.at, state: phase))
      case "foreground", "background": phases.append(Change(at: step.at, state: step.action))
      default: break
      }
      if step.fields["locked"] as? Bool == true {
        // The first launch opens the file before any step: locked from the run's start. A
        // restart later locks a device that was unlocked until then.
        if index == firstLaunch, step.action == "start" {
          locks.append(Change(at: runStart, state: "locked"))
        } else {
          if locks.isEmpty { locks.append(Change(at: runStart, state: "unlocked")) }
          locks.append(Change(at: step.at, state: "locked"))
        }
      }
      if step.action == "unlock" { locks.append(Change(at: step.at, state: "unlocked")) }
    }
    expectBands(svg.bands(in: "app"), match: phases, end: end, lane: "app", sourceLocation)
    expectBands(
      svg.bands(in: "device lock"), match: locks, end: end, lane: "device lock", sourceLocation)

    // The device clock: a band starts where a step set it, and only there.
    let clockSteps = Set(steps.filter { $0.action == "setClock" }.map(\.at))
    let clockBands = svg.bands(in: "device clock")
    #expect(
      clockSteps.isEmpty == clockBands.isEmpty, "device clock: a lane without a setClock step",
      sourceLocation: sourceLocation)
    for band in clockBands {
      #expect(
        clockSteps.contains(band.start), "device clock: a band at \(band.start) no step gives",
        sourceLocation: sourceLocation)
    }
  }
}
