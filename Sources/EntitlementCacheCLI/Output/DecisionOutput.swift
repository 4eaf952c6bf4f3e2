import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// An ``AccessDecision`` as `check` prints it (<doc:CommandLineTool>), also used by `show` and
/// `demo`.
enum DecisionOutput {
  /// The state and reason codes of the JSON form: `("denied", "expired")`.
  static func codes(_ state: AccessState) -> (state: String, reason: String?) {
    switch state {
    case .granted: ("granted", nil)
    case .denied(let reason): ("denied", reason.rawValue)
    case .offlineUnavailable(let reason): ("offline_unavailable", reason.rawValue)
    case .deviceBlocked(let reason): ("device_blocked", reason?.rawValue)
    }
  }

  // MARK: JSON

  /// The object `check --json` prints.
  static func json(_ decision: AccessDecision) -> JSONOutput {
    let (state, reason) = codes(decision.state)
    let evidence = decision.evidence
    return .object([
      ("entitlement", .string(decision.entitlement)),
      ("state", .string(state)),
      ("reason", .text(reason)),
      ("recovery", .text(decision.recovery?.rawValue)),
      ("isHighTrust", .bool(decision.isHighTrust)),
      (
        "evidence",
        .object([
          ("freshness", .text(evidence.freshness?.rawValue)),
          ("verification", .text(evidence.verification?.rawValue)),
          ("verificationFailure", .text(evidence.verificationFailure?.rawValue)),
          ("isComputedOffline", evidence.isComputedOffline.map(JSONOutput.bool) ?? .null),
          ("storedAt", .date(evidence.storedAt)),
          ("verifiedAt", .date(evidence.verifiedAt)),
          ("validUntil", .date(evidence.validUntil)),
          ("source", .text(evidence.source?.rawValue)),
          ("clockRollbackSuspected", .bool(evidence.clockRollbackSuspected)),
          ("clockOffset", evidence.clockOffset.map(JSONOutput.integer) ?? .null),
          ("pendingPurchase", .bool(evidence.pendingPurchase)),
          ("origin", .text(originName(evidence.origin))),
          ("importLabel", .text(evidence.origin?.importLabel)),
        ])
      ),
      ("device", decision.device.map(json) ?? .null),
    ])
  }

  private static func json(_ device: DeviceBlockDetails) -> JSONOutput {
    .object([
      ("reason", .text(device.reason?.rawValue)),
      ("nextAllowedAt", .date(device.nextAllowedAt)),
      ("changeBudget", device.changeBudget.map(json) ?? .null),
      ("devices", .array(device.devices.map(json))),
    ])
  }

  static func json(_ budget: DeviceChangeBudget) -> JSONOutput {
    .object([
      ("remaining", .integer(budget.remaining)),
      ("limit", .integer(budget.limit)),
      ("windowDays", .integer(budget.windowDays)),
    ])
  }

  static func json(_ device: DeviceSummary) -> JSONOutput {
    .object([
      ("id", .string(device.id)),
      ("label", .text(device.label)),
      ("lastSeenAt", .date(device.lastSeenAt)),
    ])
  }

  // MARK: Text

  /// `granted, high trust`, `denied: expired`, `device blocked: DEVICE_REPLACED`.
  static func verdict(_ decision: AccessDecision) -> String {
    switch decision.state {
    case .granted: decision.isHighTrust ? "granted, high trust" : "granted, not high trust"
    case .denied(let reason): "denied: \(reason.rawValue)"
    case .offlineUnavailable(let reason): "offline unavailable: \(reason.rawValue)"
    case .deviceBlocked(let reason): "device blocked: \(reason?.rawValue ?? "no reason given")"
    }
  }

  /// What the app should do, for the states that need explaining.
  static func meaning(_ decision: AccessDecision) -> String? {
    switch decision.state {
    case .granted:
      return decision.evidence.isComputedOffline == true
        ? "served from the cache after a failed refresh, bounded by valid until" : nil
    case .denied(.expired): return "the entitlement ended; offer renewal"
    case .denied(.revoked): return "taken back by the store or support"
    case .denied(.billingRetry): return "billing is being retried; show billing recovery"
    case .denied(.offlineWindowElapsed):
      return "not verified by the server for too long; refresh to restore it"
    case .denied(.unknownStatus): return "the server sent a status this build does not know"
    case .denied(.familySharingExcluded): return "family-shared access is excluded by the policy"
    case .denied(.notEntitled): return "the snapshot does not grant this entitlement"
    case .offlineUnavailable(.unverified):
      return
        "the policy requires a verified snapshot and this one is not: keep it locked and refresh"
    case .offlineUnavailable(.unreadable):
      return "the stored snapshot could not be read (a damaged or edited file, or a storage "
        + "error): keep it locked and retry; entitlement-cache doctor checks the file"
    case .offlineUnavailable:
      return "no bounded answer: keep it locked and retry; this is not \"not entitled\""
    case .deviceBlocked(.known(.loginRequired)?), .deviceBlocked(.known(.beneficiaryConflict)?):
      return "entitled, but not on this installation: offer the account or support recovery "
        + "path, never \"buy again\" and never a silent transfer"
    case .deviceBlocked:
      return "entitled, but not on this installation: show device management, never \"buy again\""
    }
  }

  /// The decision and its reason first, then the evidence as aligned rows.
  static func text(_ decision: AccessDecision, now: Date, scope: CacheScope? = nil) -> String {
    var output = "\(TerminalText.field(decision.entitlement)): \(verdict(decision))\n"
    var rows: [[String]] = []
    if let meaning = meaning(decision) { rows.append(["meaning", meaning]) }
    if let recovery = decision.recovery { rows.append(["recovery", recoveryText(recovery)]) }
    if let device = decision.device {
      rows += deviceRows(
        device, serverNow: decision.evidence.estimatedServerTime ?? now, deviceNow: now)
    }
    rows += evidenceRows(decision.evidence, now: now)
    if let scope { rows.append(["scope", TextOutput.scope(scope)]) }
    output += TextOutput.table(rows, indent: "  ")
    return output
  }

  /// The evidence rows. Server-issued instants read relative to the server's time as the
  /// cache estimates it, device times relative to the device clock; where the two differ by a
  /// second or more, a `server time` row says so.
  static func evidenceRows(_ evidence: AccessEvidence, now: Date) -> [[String]] {
    let serverNow = evidence.estimatedServerTime ?? now
    var rows = [
      ["freshness", evidence.freshness?.rawValue ?? TextOutput.none],
      [
        "verification",
        TextOutput.verification(evidence.verification, evidence.verificationFailure),
      ],
      ["computed offline", TextOutput.yesNo(evidence.isComputedOffline)],
      ["stored at", TextOutput.time(evidence.storedAt, now: now)],
      [
        "verified at",
        TextOutput.serverTime(evidence.verifiedAt, serverNow: serverNow, deviceNow: now),
      ],
      [
        "valid until",
        TextOutput.serverTime(evidence.validUntil, serverNow: serverNow, deviceNow: now),
      ],
      ["source", evidence.source?.rawValue ?? TextOutput.none],
      ["clock rollback", evidence.clockRollbackSuspected ? "suspected" : "not suspected"],
      ["clock offset", TextOutput.clockOffset(evidence.clockOffset)],
    ]
    if evidence.pendingPurchase {
      rows.append(["purchase", "pending: the queue has not posted it yet; say \"processing\""])
    }
    if let label = evidence.origin?.importLabel {
      rows.append(["origin", TextOutput.importOrigin(label)])
    }
    if abs(serverNow.timeIntervalSince(now)) >= 1 {
      rows.append([
        "server time",
        "\(TextOutput.timestamp(serverNow)) (estimated; the device clock says \(now.iso8601))",
      ])
    }
    return rows
  }

  static func deviceRows(_ device: DeviceBlockDetails, serverNow: Date, deviceNow: Date)
    -> [[String]]
  {
    var rows = [
      [
        "next change",
        TextOutput.serverTime(device.nextAllowedAt, serverNow: serverNow, deviceNow: deviceNow),
      ]
    ]
    if let budget = device.changeBudget { rows.append(["change budget", budgetText(budget)]) }
    for (index, summary) in device.devices.enumerated() {
      rows.append([
        index == 0 ? "devices" : "",
        deviceText(summary, serverNow: serverNow, deviceNow: deviceNow),
      ])
    }
    return rows
  }

  /// `restore_required: offer "Restore purchases", never "buy again"`.
  static func recoveryText(_ hint: ClaimHint) -> String {
    let offer =
      switch hint {
      case .restoreRequired: "offer \"Restore purchases\""
      case .loginRequired: "offer to log in with the account that owns it"
      case .supportRequired: "send the user to support"
      }
    return "\(hint.rawValue): \(offer), never \"buy again\""
  }

  /// `1 of 3 left per 30 d`.
  static func budgetText(_ budget: DeviceChangeBudget) -> String {
    "\(budget.remaining) of \(budget.limit) left per \(budget.windowDays) d"
  }

  /// `d_7f3a iPhone, last seen 2026-11-29T08:00:00Z (1 d ago)`.
  static func deviceText(_ device: DeviceSummary, serverNow: Date, deviceNow: Date) -> String {
    var text = device.id
    if let label = device.label { text += " \(label)" }
    if let seen = device.lastSeenAt {
      text +=
        ", last seen \(TextOutput.serverTime(seen, serverNow: serverNow, deviceNow: deviceNow))"
    }
    return text
  }
}
