import EntitlementCache

/// What `simulate --timeline` draws, lane by lane, in true virtual time (milliseconds since the
/// Unix epoch): built from the events `simulate` prints and the script's own steps, so every
/// band boundary and marker is an instant the text and JSON output give, or a step's time.
/// Nothing is decided again here.
package struct Timeline {
  /// The run's first and last instants: the start, and the last event or step.
  var start: Int64
  var end: Int64
  var lanes: [Lane]

  /// One row of the picture.
  struct Lane {
    /// What the lane shows, for its heading and its `data-lane`.
    var title: String
    var kind: Kind
    var bands: [Band] = []
    var markers: [Marker] = []
  }

  enum Kind: String {
    /// One entitlement's decisions: `granted`, `denied`, `offline_unavailable`,
    /// `device_blocked`.
    case access
    /// The snapshot's freshness, origin and verification, from the same decisions.
    case freshness
    /// Whose state the app publishes, with log-in and log-out marks.
    case user
    /// Foreground, background, relaunches (the process killed and launched again), and the
    /// app telling the client the network came back.
    case phase
    /// The device's wall clock, where a step set it, against true time.
    case clock
    /// Whether the device is locked since it started (its protected files refused), in a
    /// script that locks it.
    case lock
    /// Every fetch that ended, over whether the server answered the last one.
    case network
    /// Each queued purchase's changes.
    case purchases
    /// What the cache and the client told.
    case diagnostics
  }

  /// A stretch of one state, from `start` until `end`.
  struct Band {
    var start: Int64
    var end: Int64
    /// The state, as JSON names it (`granted`, `denied:expired`): what colour and pattern it
    /// takes, and its `data-state`.
    var state: String
    /// What is written in the band when it is wide enough.
    var label: String
    /// The hover text: the exact instant and what decided it.
    var detail: String
    /// The user the state is for, when it is for one.
    var user: String?
  }

  /// One thing that happened at an instant.
  struct Marker {
    var at: Int64
    /// When what it marks began, for a fetch whose answer took time: a line from there.
    var since: Int64? = nil
    /// What kind of mark it takes (`fetch-ok`, `fetch-transient`, `purchase-synced`, ...).
    var style: String
    var label: String
    var detail: String
  }
}

extension Timeline {
  /// The timeline of one run: `events` as `simulate` recorded them, and the first
  /// `stepsRun` of the script's steps (all of them, unless a storage failure stopped the run).
  package init(script: SimulationScript, events: [SimulationEvent], stepsRun: Int? = nil) {
    let start = SimulationTime.milliseconds(script.start) ?? 0
    let steps = script.steps.prefix(stepsRun ?? script.steps.count)
    let stepTimes = steps.map { start + SimulationTime.milliseconds($0.at) }
    self.start = start
    // A run of one instant still lasts a second on the page, so its bands can be seen.
    end = max(start + 1_000, events.last?.at ?? start, stepTimes.last ?? start)
    var builder = Builder(start: start, end: end)
    for event in events { builder.add(event) }
    for (step, at) in zip(steps, stepTimes) {
      builder.add(step.action, at: at)
    }
    lanes = builder.lanes()
  }

  /// Text a script or a server chose, safe for a line of hover text or a label: control,
  /// format and bidirectional characters written out as the text output writes them (so a
  /// label cannot start a line of its own, or turn text around), and cut to `limit`.
  static func safe(_ text: String, limit: Int = TerminalText.excerptLength) -> String {
    TerminalText.field(TerminalText.excerpt(text, limit: limit))
  }

  /// Collects the lanes' changes, in the order they happened.
  private struct Builder {
    let start: Int64
    let end: Int64
    /// Each entitlement's decisions, in order: (at, user, decision).
    var decisions: [String: [(Int64, String?, AccessDecision)]] = [:]
    /// Where a `check` step read each entitlement: a check that changes nothing still shows.
    var checks: [String: [Marker]] = [:]
    var snapshots: [(Int64, String?, AccessDecision)] = []
    var users: [(Int64, String)] = []
    var phases: [(Int64, String, String)] = []
    var clocks: [(Int64, String, String)] = []
    var locks: [(Int64, String, String)] = []
    /// Whether the server answered each fetch that ended: (at, state, hover text).
    var answers: [(Int64, String, String)] = []
    var userMarks: [Marker] = []
    var phaseMarks: [Marker] = []
    var network: [Marker] = []
    var purchases: [Marker] = []
    var diagnostics: [Marker] = []

    init(start: Int64, end: Int64) {
      self.start = start
      self.end = end
    }

    mutating func add(_ event: SimulationEvent) {
      let at = event.at
      let heading = SimulationTime.date(at).iso8601 + (event.user.map { " (\(safe($0)))" } ?? "")
      switch event.kind {
      case .update(let published):
        for key in published.keys.sorted() {
          guard let decision = published[key] else { continue }
          decisions[key, default: []].append((at, event.user, decision))
        }
        if let first = published.keys.sorted().first, let decision = published[first] {
          snapshots.append((at, event.user, decision))
        }
        if let user = event.user { users.append((at, user)) }
      case .check(let decision):
        decisions[decision.entitlement, default: []].append((at, event.user, decision))
        snapshots.append((at, event.user, decision))
        checks[decision.entitlement, default: []].append(
          Marker(
            at: at, style: "check", label: "check",
            detail: "\(heading)\ncheck: \(safe(SimulationOutput.summary(decision), limit: 600))"))
      case .fetch(let flow, let outcome, let requestedAt):
        let style =
          switch outcome {
          case .failed(.rejected), .storageFailed: "fetch-rejected"
          case .failed: "fetch-transient"
          default: "fetch-ok"
          }
        let text = SimulationOutput.outcomeText(outcome)
        let since = requestedAt.flatMap { $0 < at ? $0 : nil }
        let latency =
          since.map {
            "\nrequested at \(SimulationTime.date($0).iso8601), answered"
              + SimulationOutput.latencyText(at - $0)
          } ?? ""
        network.append(
          Marker(
            at: at, since: since, style: style, label: text,
            detail: "\(heading)\nfetch \(flow.rawValue): \(text)\(latency)"))
        if let answered = SimulationOutput.serverAnswered(outcome) {
          answers.append(
            answered
              ? (at, "answering", "the server answered (fetch \(flow.rawValue): \(text))")
              : (
                at, "no-answer",
                "no answer from the server (fetch \(flow.rawValue): \(text)): no network, a "
                  + "timeout or a 5xx, until a fetch is answered"
              ))
        }
      case .purchase(let entry):
        let transaction = safe(entry.transactionID)
        purchases.append(
          Marker(
            at: at, style: "purchase-\(entry.state.rawValue)",
            label: "\(transaction): \(entry.state.rawValue)",
            detail: "\(heading)\n\(transaction): \(safe(SimulationOutput.purchaseText(entry)))"))
      case .purchaseBoundToAnotherUser(let transaction):
        purchases.append(
          Marker(
            at: at, style: "purchase-bound", label: "\(safe(transaction)): bound to another user",
            detail: "\(heading)\n\(safe(transaction)): bound to another user, nothing changed"))
      case .diagnostic(let diagnostic):
        let details = diagnostic.event.details.map { "\($0.field)=\(safe($0.value))" }
        diagnostics.append(
          Marker(
            at: at, style: "event", label: safe(diagnostic.event.name),
            detail: "\(heading)\n"
              + ([safe(diagnostic.event.name)] + details).joined(separator: " ")))
      }
    }

    mutating func add(_ action: ScriptAction, at: Int64) {
      let when = SimulationTime.date(at).iso8601
      switch action {
      case .start(let phase, let locked):
        phases.append((at, phase.rawValue, "launched"))
        if locked {
          // The file is opened before the first step: locked from the run's start.
          locks.append(
            (start, "locked", "locked since the device started: the cache's file is refused"))
        }
      case .foreground:
        phases.append((at, "foreground", "to the foreground"))
      case .background:
        phases.append((at, "background", "to the background"))
      case .relaunch(let phase, let locked):
        let restart = locked ? "; the device restarted, and is locked" : ""
        phaseMarks.append(
          Marker(
            at: at, style: "relaunch", label: "relaunch",
            detail: "\(when)\nkilled and launched again on the same file\(restart)"))
        phases.append((at, phase.rawValue, "relaunched"))
        if locked {
          if locks.isEmpty { locks.append((start, "unlocked", "unlocked")) }
          locks.append(
            (at, "locked", "the device restarted, not unlocked since: the cache's file is refused"))
        }
      case .unlock:
        locks.append(
          (at, "unlocked", "the device's first unlock: the app says protected data is available"))
      case .logIn(let user):
        userMarks.append(
          Marker(
            at: at, style: "login", label: "log in \(safe(user))",
            detail: "\(when)\nlog in \(safe(user))"))
      case .logOut:
        userMarks.append(
          Marker(
            at: at, style: "logout", label: "log out",
            detail: "\(when)\nlog out, to \(SimulationScript.anonymousUser)"))
      case .networkAvailable:
        // The app's call: its lane, so the network lane holds only fetches, as printed.
        phaseMarks.append(
          Marker(
            at: at, style: "network", label: "network available",
            detail: "\(when)\nthe network came back (networkAvailable)"))
      case .setClock(let date):
        let offset = ((SimulationTime.milliseconds(date) ?? at) - at) / 1000
        let text =
          offset == 0 ? "true time" : "device clock \(TextOutput.signedDuration(Int(offset)))"
        clocks.append((at, text, "the device's clock set to \(date.iso8601)"))
      case .refresh, .purchase, .restore, .sync, .check:
        break
      }
    }

    func lanes() -> [Lane] {
      var lanes: [Lane] = []
      for key in decisions.keys.sorted() {
        lanes.append(
          Lane(
            title: safe(key), kind: .access,
            bands: bands(
              (decisions[key] ?? []).map { at, user, decision in
                let (state, reason) = DecisionOutput.codes(decision.state)
                let name = state.replacing("_", with: " ")
                return (
                  at, state + (reason.map { ":" + $0 } ?? ""),
                  safe(name + (reason.map { ": " + $0 } ?? "")),
                  safe(SimulationOutput.summary(decision), limit: 600), user
                )
              }),
            markers: checks[key] ?? []))
      }
      lanes.append(Lane(title: "snapshot", kind: .freshness, bands: bands(snapshots.map(snapshot))))
      lanes.append(
        Lane(
          title: "user", kind: .user,
          bands: bands(
            users.map { ($0.0, "user", safe($0.1), "publishing \(safe($0.1))'s state", $0.1) }),
          markers: userMarks))
      lanes.append(
        Lane(
          title: "app", kind: .phase,
          bands: bands(phases.map { ($0.0, $0.1, $0.1, $0.2, nil) }), markers: phaseMarks))
      if !clocks.isEmpty {
        // Each offset is a state of its own: a clock set back after one set forward is a
        // change, not more of the same.
        lanes.append(
          Lane(
            title: "device clock", kind: .clock,
            bands: bands(
              clocks.map {
                ($0.0, $0.1 == "true time" ? "clock" : "clock-set:" + $0.1, $0.1, $0.2, nil)
              })))
      }
      if !locks.isEmpty {
        lanes.append(
          Lane(
            title: "device lock", kind: .lock,
            bands: bands(locks.map { ($0.0, $0.1, $0.1, $0.2, nil) })))
      }
      lanes.append(
        Lane(
          title: "network", kind: .network,
          bands: bands(
            answers.map {
              ($0.0, $0.1, $0.1 == "answering" ? "server answers" : "no answer", $0.2, nil)
            }),
          markers: network))
      lanes.append(Lane(title: "purchases", kind: .purchases, markers: purchases))
      lanes.append(Lane(title: "events", kind: .diagnostics, markers: diagnostics))
      return lanes
    }

    /// The snapshot lane's change for a decision: its freshness, verification and trust, and
    /// whether it is an import, as the decision's evidence says them.
    private func snapshot(
      _ change: (Int64, String?, AccessDecision)
    ) -> (at: Int64, state: String, label: String, detail: String, user: String?) {
      let (at, user, decision) = change
      let evidence = decision.evidence
      let freshness = evidence.freshness?.rawValue ?? "none"
      let verification = evidence.verification?.rawValue ?? "none"
      let trust = decision.isHighTrust ? "high-trust" : "not-high-trust"
      var imported = ""
      if case .imported(let label, _)? = evidence.origin { imported = "imported (\(safe(label)))" }
      let label = [
        freshness, verification == "none" ? "" : verification,
        decision.isHighTrust ? "high trust" : "", imported,
      ].filter { !$0.isEmpty }.joined(separator: ", ")
      return (
        at,
        [freshness, verification, trust].joined(separator: ":")
          + (imported.isEmpty ? "" : ":imported"),
        label, safe(SimulationOutput.evidence(decision), limit: 600), user
      )
    }

    /// Bands from a lane's changes in time order: each change starts a band that runs to the
    /// next change or to the end; a change to the same state (and user) as the band running
    /// continues it.
    private func bands(
      _ changes: [(at: Int64, state: String, label: String, detail: String, user: String?)]
    ) -> [Band] {
      var bands: [Band] = []
      for change in changes {
        // Two changes at one instant: the later is what held from then on.
        if bands.last?.start == change.at { bands.removeLast() }
        if let last = bands.last, last.state == change.state, last.user == change.user {
          bands[bands.count - 1].end = end
          continue
        }
        if !bands.isEmpty { bands[bands.count - 1].end = change.at }
        let heading =
          SimulationTime.date(change.at).iso8601 + (change.user.map { " (\(safe($0)))" } ?? "")
        bands.append(
          Band(
            start: change.at, end: end, state: change.state, label: change.label,
            detail: "\(heading)\n\(change.detail)", user: change.user.map { safe($0) }))
      }
      return bands
    }
  }
}
