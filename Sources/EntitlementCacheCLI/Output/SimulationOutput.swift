import EntitlementCache

/// A simulation's events as `simulate` prints them: one JSON object a line with `--json`, one
/// readable line each otherwise, with the same content.
enum SimulationOutput {
  // MARK: JSON lines

  /// Every event as one line of JSON, keys sorted.
  static func jsonLines(_ events: [SimulationEvent]) -> String {
    events.map { json($0).sortedLine() }.joined()
  }

  /// `{"at","type":"update","user","decisions":{key: check object}}`,
  /// `{"at","type":"fetch","user","flow","outcome"}` (with `failure`, `transient` or
  /// `rejected`, and `status` when the failure had one, and `requestedAt` when the answer took
  /// time to come),
  /// `{"at","type":"check","user","decision"}`, `{"at","type":"purchase","user","transaction",
  /// "state",...}`, `{"at","type":"event","event":NAME,"user",...}` (`user` only when the
  /// diagnostic is about one of the script's users, then the event's own fields).
  static func json(_ event: SimulationEvent) -> JSONOutput {
    // Clamped, as every date the tool prints in JSON is, so a time past 9999 (a latency after
    // a last step at 9999-12-31) still reads back as a date.
    var fields: [(String, JSONOutput)] = [
      ("at", .string(TextOutput.clamped(SimulationTime.date(event.at)).iso8601))
    ]
    if let user = event.user { fields.append(("user", .string(user))) }
    switch event.kind {
    case .update(let decisions):
      fields.append(("type", .string("update")))
      fields.append(
        ("decisions", .object(decisions.map { ($0.key, DecisionOutput.json($0.value)) })))
    case .fetch(let flow, let outcome, let requestedAt):
      fields.append(("type", .string("fetch")))
      fields.append(("flow", .string(flow.rawValue)))
      fields.append(("outcome", .string(outcome.name)))
      if case .failed(let failure) = outcome {
        let kind = if case .transient = failure { "transient" } else { "rejected" }
        fields.append(("failure", .string(kind)))
      }
      if let status = status(outcome) { fields.append(("status", .integer(status))) }
      if let requestedAt, requestedAt != event.at {
        fields.append(
          ("requestedAt", .string(TextOutput.clamped(SimulationTime.date(requestedAt)).iso8601)))
      }
    case .check(let decision):
      fields.append(("type", .string("check")))
      fields.append(("decision", DecisionOutput.json(decision)))
    case .purchase(let entry):
      fields.append(("type", .string("purchase")))
      fields.append(("transaction", .string(entry.transactionID)))
      fields.append(("state", .string(entry.state.rawValue)))
      fields.append(("attempts", .integer(entry.attempts)))
      if let failure = entry.lastFailure, entry.state == .pending || entry.state == .rejected {
        fields.append(("failure", .string(failure.recordedReason)))
      }
      if let retryAt = entry.nextAttemptAt { fields.append(("retryAt", .date(retryAt))) }
      if let resolution = entry.resolution {
        fields.append(("resolution", .string(resolution.rawValue)))
      }
    case .purchaseBoundToAnotherUser(let transaction):
      fields.append(("type", .string("purchase")))
      fields.append(("transaction", .string(transaction)))
      fields.append(("state", .string("boundToAnotherUser")))
    case .diagnostic(let diagnostic):
      fields.append(("type", .string("event")))
      fields.append(("event", .string(diagnostic.event.name)))
      for (field, value) in diagnostic.event.details { fields.append((field, .string(value))) }
    }
    return .object(fields)
  }

  /// Whether the server answered the fetch at all: false after a transient failure (no
  /// network, a timeout, a 5xx), true after any other end of a request; nil for a forced wait
  /// that stopped before the answer, and for an answer or failure the cache could not record
  /// (its line says only `storageFailed`), which say nothing of the network.
  static func serverAnswered(_ outcome: RefreshOutcome) -> Bool? {
    switch outcome {
    case .timedOut, .storageFailed: nil
    case .failed(.transient): false
    default: true
    }
  }

  /// The HTTP status of a failed fetch, when the failure had one.
  static func status(_ outcome: RefreshOutcome) -> Int? {
    switch outcome {
    case .failed(.rejected(let status)), .failed(.transient(let status?)): status
    default: nil
    }
  }

  // MARK: Text

  /// One line an event: the time, the kind, the user, then what happened.
  ///
  /// ```text
  /// 2026-11-30T12:00:00Z  update  alice  pro: granted, high trust (fresh, verified, ...)
  /// 2026-11-30T12:00:02Z  fetch   alice  start: failed (transient)
  /// ```
  static func text(_ events: [SimulationEvent]) -> String {
    guard !events.isEmpty else { return "(nothing happened: no publish, fetch or check)\n" }
    // Columns line up: a time with milliseconds (a jittered retry) is longer than one without.
    let times = events.map { SimulationTime.date($0.at).iso8601 }
    let timeWidth = times.map(\.count).max() ?? 0
    // A script's labels are a field report's text: escaped before they are measured.
    let users = events.map { TerminalText.field($0.user ?? "-") }
    let userWidth = users.map(\.count).max() ?? 0
    let parts = events.map { textParts($0.kind, at: $0.at) }
    let kindWidth = parts.map(\.0.count).max() ?? 0
    return zip(times, zip(users, parts)).map { time, userAndParts in
      let (user, (kind, content)) = userAndParts
      return
        "\(pad(time, timeWidth))  \(pad(kind, kindWidth))  \(pad(user, userWidth))  \(TerminalText.field(content))\n"
    }.joined()
  }

  private static func textParts(_ kind: SimulationEvent.Kind, at: Int64) -> (String, String) {
    switch kind {
    case .update(let decisions):
      let parts = decisions.keys.sorted().compactMap { key in decisions[key].map(summary) }
      return ("update", parts.isEmpty ? "(no watched entitlements)" : parts.joined(separator: "; "))
    case .fetch(let flow, let outcome, let requestedAt):
      let latency = requestedAt.map { latencyText(at - $0) } ?? ""
      return ("fetch ", "\(flow.rawValue): \(outcomeText(outcome))\(latency)")
    case .check(let decision):
      return ("check ", summary(decision))
    case .purchase(let entry):
      return ("purchase", "\(entry.transactionID): \(purchaseText(entry))")
    case .purchaseBoundToAnotherUser(let transaction):
      return ("purchase", "\(transaction): bound to another user, nothing changed")
    case .diagnostic(let diagnostic):
      let details = diagnostic.event.details.map { "\($0.field)=\($0.value)" }
      return ("event ", ([diagnostic.event.name] + details).joined(separator: " "))
    }
  }

  /// `pending`, `posting (attempt 2)`, `pending (transient_503, retry at ...)`, `conflict
  /// (login_required)`, `rejected (rejected_400)`.
  static func purchaseText(_ entry: QueuedPurchase) -> String {
    var details: [String] = []
    if entry.state == .posting { details.append("attempt \(entry.attempts)") }
    if let failure = entry.lastFailure, entry.state == .pending || entry.state == .rejected {
      details.append(failure.recordedReason)
    }
    if let retryAt = entry.nextAttemptAt {
      details.append("retry at \(TextOutput.timestamp(retryAt))")
    }
    if let resolution = entry.resolution { details.append(resolution.rawValue) }
    return entry.state.rawValue + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))")
  }

  /// ` after 900ms`, ` after 2s`: how long a fetch's answer took, as a script writes a
  /// latency; nothing for an answer at once.
  static func latencyText(_ milliseconds: Int64) -> String {
    guard milliseconds > 0 else { return "" }
    return milliseconds % 1000 == 0 ? " after \(milliseconds / 1000)s" : " after \(milliseconds)ms"
  }

  /// `stored`, `failed (transient)`, `failed (rejected, status 401)`: what the JSON line's
  /// `outcome` and `status` say, and no more. A storage failure's error (which names the
  /// file) is not in the line: `simulate` stops on it and says it once, on stderr (exit 3),
  /// unless the script keeps the device locked, which refuses the file by design.
  static func outcomeText(_ outcome: RefreshOutcome) -> String {
    switch outcome {
    case .failed(.transient(nil)): "failed (transient)"
    case .failed(.transient(let status?)): "failed (transient, status \(status))"
    case .failed(.rejected(let status)): "failed (rejected, status \(status))"
    default: outcome.name
    }
  }

  private static func pad(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: max(0, width - text.count))
  }

  /// `pro: granted, high trust (fresh, verified, stored at ..., valid until ..., source
  /// purchase)`: what the check object says, in words.
  static func summary(_ decision: AccessDecision) -> String {
    "\(decision.entitlement): \(DecisionOutput.verdict(decision)) (\(evidence(decision)))"
  }

  /// The evidence that is there, in the check object's order; false flags and a zero offset
  /// are left out.
  static func evidence(_ decision: AccessDecision) -> String {
    let evidence = decision.evidence
    var parts: [String] = []
    if let freshness = evidence.freshness { parts.append(freshness.rawValue) }
    if evidence.verification != nil {
      parts.append(TextOutput.verification(evidence.verification, evidence.verificationFailure))
    }
    if evidence.isComputedOffline == true { parts.append("computed offline") }
    if let storedAt = evidence.storedAt {
      parts.append("stored at \(TextOutput.timestamp(storedAt))")
    }
    if let verifiedAt = evidence.verifiedAt {
      parts.append("verified at \(TextOutput.timestamp(verifiedAt))")
    }
    if let validUntil = evidence.validUntil {
      let label =
        switch decision.state {
        case .granted: "valid until"
        case .deviceBlocked: "entitled until"
        case .denied, .offlineUnavailable: "ended"
        }
      parts.append("\(label) \(TextOutput.timestamp(validUntil))")
    }
    if let source = evidence.source { parts.append("source \(source.rawValue)") }
    if evidence.clockRollbackSuspected { parts.append("clock rollback suspected") }
    if evidence.pendingPurchase { parts.append("purchase pending") }
    if let offset = evidence.clockOffset, offset != 0 {
      parts.append("clock offset \(TextOutput.signedDuration(offset))")
    }
    if let recovery = decision.recovery { parts.append("recovery \(recovery.rawValue)") }
    if let device = decision.device {
      if let next = device.nextAllowedAt {
        parts.append("next device change \(TextOutput.timestamp(next))")
      }
      if let budget = device.changeBudget {
        parts.append("budget \(DecisionOutput.budgetText(budget))")
      }
      parts.append("\(device.devices.count) devices listed")
    }
    return parts.isEmpty ? "no evidence: nothing stored" : parts.joined(separator: ", ")
  }
}
