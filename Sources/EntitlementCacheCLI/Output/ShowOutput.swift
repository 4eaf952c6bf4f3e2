import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What `show` prints. Built from known fields only: a server's unknown fields may carry
/// tokens, so they are never echoed, and the access context's token is always redacted.
struct ShowOutput {
  let scope: CacheScope
  let now: Date
  /// The snapshot as stored, for what evaluation removed (the expired access context).
  let stored: CachedCustomerInfo?
  let evaluated: EvaluatedCustomerInfo?

  static let redacted = "<redacted>"

  private var bookkeeping: ScopeBookkeeping? { evaluated?.bookkeeping ?? stored?.bookkeeping }
  /// What server-issued instants read relative to: the server's time as the cache estimates
  /// it (`Sources/EntitlementCache/EntitlementCache.docc/Articles/TimeModel.md`), which differs from `now` when the device clock is off.
  private var serverNow: Date { evaluated?.estimatedServerTime ?? now }
  private var sortedDecisions: [AccessDecision] {
    (evaluated?.decisions ?? [:]).sorted { $0.key < $1.key }.map(\.value)
  }

  // MARK: JSON

  var json: JSONOutput {
    .object([
      ("scope", scopeJSON(scope)),
      ("evaluatedAt", .date(now)),
      ("freshness", .text(evaluated?.freshness.rawValue)),
      ("isComputedOffline", evaluated.map { .bool($0.isComputedOffline) } ?? .null),
      ("verificationFailure", .text(evaluated?.verificationFailure?.rawValue)),
      ("estimatedServerTime", .date(evaluated?.estimatedServerTime)),
      ("clockRollbackSuspected", evaluated.map { .bool($0.clockRollbackSuspected) } ?? .null),
      ("clockOffset", evaluated?.clockOffset.map(JSONOutput.integer) ?? .null),
      (
        "activeEntitlements",
        .array((evaluated?.activeEntitlementKeys.sorted() ?? []).map(JSONOutput.string))
      ),
      ("bookkeeping", bookkeeping.map(Self.json) ?? .null),
      ("customerInfo", evaluated.map { Self.json($0.customerInfo) } ?? .null),
      ("decisions", .object(sortedDecisions.map { ($0.entitlement, DecisionOutput.json($0)) })),
    ])
  }

  private static func json(_ bookkeeping: ScopeBookkeeping) -> JSONOutput {
    .object([
      ("storedAt", .date(bookkeeping.storedAt)),
      ("serverTime", .date(bookkeeping.serverTime)),
      ("lastRefreshAttemptAt", .date(bookkeeping.lastRefreshAttemptAt)),
      ("lastRefreshFailedAt", .date(bookkeeping.lastRefreshFailedAt)),
      ("lastRefreshFailureReason", .text(bookkeeping.lastRefreshFailureReason)),
      ("deviceHighWaterMark", .date(bookkeeping.deviceHighWaterMark)),
      ("refreshBootClockRecorded", .bool(bookkeeping.refreshBootInstant != nil)),
      ("snapshotSize", bookkeeping.snapshotSize.map(JSONOutput.integer) ?? .null),
      ("snapshotSHA256", .text(bookkeeping.snapshotSHA256.map(hex))),
      ("origin", .text(bookkeeping.storedAt == nil ? nil : originName(bookkeeping.origin))),
      ("importLabel", .text(bookkeeping.origin.importLabel)),
      ("importedAt", .date(bookkeeping.origin.importedAt)),
    ])
  }

  /// The evaluated CustomerInfo in the snapshot's own shape and key names.
  private static func json(_ info: CustomerInfo) -> JSONOutput {
    .object([
      ("requestDate", .date(info.requestDate)),
      ("verification", .string(info.verification.rawValue)),
      (
        "entitlements",
        .object(
          info.entitlements.sorted { $0.key < $1.key }.map { key, entitlement in
            (key, json(entitlement))
          })
      ),
      ("purchases", .array(info.purchases.map(json))),
      ("unclaimedPurchases", .array(info.unclaimedPurchases.map(json))),
      (
        "accessContext",
        info.accessContext.map {
          .object([("token", .string(redacted)), ("expiresAt", .date($0.expiresAt))])
        } ?? .null
      ),
      ("deviceAccess", info.deviceAccess.map(json) ?? .null),
    ])
  }

  private static func json(_ entitlement: EntitlementInfo) -> JSONOutput {
    .object([
      ("status", .string(entitlement.status.rawValue)),
      ("expiresAt", .date(entitlement.expiresAt)),
      ("gracePeriodExpiresAt", .date(entitlement.gracePeriodExpiresAt)),
      ("verifiedAt", .date(entitlement.verifiedAt)),
      ("productId", .text(entitlement.productId)),
      ("source", .text(entitlement.source?.rawValue)),
      ("willRenew", entitlement.willRenew.map(JSONOutput.bool) ?? .null),
    ])
  }

  private static func json(_ purchase: PurchaseInfo) -> JSONOutput {
    .object([
      ("id", .string(purchase.id)),
      ("productId", .text(purchase.productId)),
      ("store", .text(purchase.store)),
      ("purchasedAt", .date(purchase.purchasedAt)),
      ("ownership", .text(purchase.ownership?.rawValue)),
      ("ownershipType", .text(purchase.ownershipType?.rawValue)),
      ("canClaim", purchase.canClaim.map(JSONOutput.bool) ?? .null),
      ("conflict", purchase.conflict.map(JSONOutput.bool) ?? .null),
    ])
  }

  private static func json(_ purchase: UnclaimedPurchase) -> JSONOutput {
    .object([
      ("purchaseId", .string(purchase.purchaseId)),
      ("productId", .text(purchase.productId)),
      ("entitlements", .array(purchase.entitlements.map(JSONOutput.string))),
      ("claimHint", .string(purchase.claimHint.rawValue)),
    ])
  }

  private static func json(_ device: DeviceAccessInfo) -> JSONOutput {
    .object([
      ("status", .string(device.status.rawValue)),
      ("reason", .text(device.reason?.rawValue)),
      ("expiresAt", .date(device.expiresAt)),
      ("nextAllowedAt", .date(device.nextAllowedAt)),
      ("changeBudget", device.changeBudget.map(DecisionOutput.json) ?? .null),
      ("devices", .array(device.devices.map(DecisionOutput.json))),
    ])
  }

  private static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0 >> 4, radix: 16) + String($0 & 0xF, radix: 16) }.joined()
  }

  // MARK: Text

  var text: String {
    guard let bookkeeping else {
      return "Nothing is stored for \(TextOutput.scope(scope)).\n"
    }
    var rows: [[String]] = [["scope", TextOutput.scope(scope)]]
    if let evaluated {
      rows.append(["freshness", freshnessText(evaluated)])
      rows.append([
        "verification",
        TextOutput.verification(
          evaluated.customerInfo.verification, evaluated.verificationFailure),
      ])
    } else {
      rows.append(["snapshot", "none stored: every decision is offline_unavailable"])
    }
    rows += [
      ["stored at", TextOutput.time(bookkeeping.storedAt, now: now)],
      [
        "server time",
        TextOutput.serverTime(bookkeeping.serverTime, serverNow: serverNow, deviceNow: now),
      ],
      ["last attempt", TextOutput.time(bookkeeping.lastRefreshAttemptAt, now: now)],
      ["last failure", failureText(bookkeeping)],
      ["high-water mark", TextOutput.time(bookkeeping.deviceHighWaterMark, now: now)],
      ["size", TextOutput.size(bookkeeping.snapshotSize)],
      ["evaluated at", now.iso8601],
    ]
    if let label = bookkeeping.origin.importLabel {
      rows.append(["origin", TextOutput.importOrigin(label)])
    }
    if let evaluated {
      if abs(serverNow.timeIntervalSince(now)) >= 1 {
        rows.append(["server time now", "\(TextOutput.timestamp(serverNow)) (estimated)"])
      }
      rows.append(["clock offset", TextOutput.clockOffset(evaluated.clockOffset)])
      rows.append(
        ["clock rollback", evaluated.clockRollbackSuspected ? "suspected" : "not suspected"])
    }
    var output = TextOutput.table(rows)
    guard let evaluated else { return output }
    let info = evaluated.customerInfo
    output += "\n" + entitlementTable(info, decisions: evaluated.decisions)
    output += "\n" + TextOutput.table(contextRows(info) + deviceRows(info.deviceAccess))
    if !info.purchases.isEmpty {
      output += "\nPurchases\n" + purchaseTable(info.purchases)
    }
    if !info.unclaimedPurchases.isEmpty {
      output += "\nUnclaimed purchases\n" + unclaimedTable(info.unclaimedPurchases)
    }
    return output
  }

  private func freshnessText(_ evaluated: EvaluatedCustomerInfo) -> String {
    switch evaluated.freshness {
    case .fresh: "fresh"
    case .stale: "stale (a refresh is due; access is unchanged)"
    case .offline: "offline (the last refresh failed; served from the cache)"
    }
  }

  private func failureText(_ bookkeeping: ScopeBookkeeping) -> String {
    guard let failed = bookkeeping.lastRefreshFailedAt else { return TextOutput.none }
    let reason = bookkeeping.lastRefreshFailureReason.map { ": \($0)" } ?? ""
    return TextOutput.time(failed, now: now) + reason
  }

  /// One aligned row per entitlement, each followed by its server expiry and effective
  /// boundary, which are too wide to share the row.
  private func entitlementTable(_ info: CustomerInfo, decisions: [String: AccessDecision])
    -> String
  {
    let entitlements = info.entitlements.sorted { $0.key < $1.key }
    guard !entitlements.isEmpty else { return "No entitlements in the snapshot.\n" }
    var rows = [["ENTITLEMENT", "DECISION", "STATUS", "SOURCE", "PRODUCT"]]
    var details = [""]
    for (key, entitlement) in entitlements {
      let decision = decisions[key]
      rows.append([
        key, decision.map(DecisionOutput.verdict) ?? TextOutput.none,
        entitlement.status.rawValue, entitlement.source?.rawValue ?? TextOutput.none,
        entitlement.productId ?? TextOutput.none,
      ])
      var detail =
        "expires \(TextOutput.serverTime(entitlement.expiresAt, serverNow: serverNow, deviceNow: now))"
      if let grace = entitlement.gracePeriodExpiresAt {
        detail +=
          ", grace until \(TextOutput.serverTime(grace, serverNow: serverNow, deviceNow: now))"
      }
      if let validUntil = decision?.evidence.validUntil {
        let label = decision?.isGranted == true ? "valid until" : "boundary"
        detail +=
          ", \(label) \(TextOutput.serverTime(validUntil, serverNow: serverNow, deviceNow: now))"
      }
      details.append(detail)
    }
    let indent = String(repeating: " ", count: (rows.map { $0[0].count }.max() ?? 0) + 2)
    let lines = TextOutput.table(rows).split(separator: "\n", omittingEmptySubsequences: false)
    var output = ""
    for (line, detail) in zip(lines, details) {
      output += line + "\n"
      if !detail.isEmpty { output += indent + detail + "\n" }
    }
    return output
  }

  private func contextRows(_ info: CustomerInfo) -> [[String]] {
    if let context = info.accessContext {
      return [
        [
          "access context",
          "token \(Self.redacted), expires \(TextOutput.serverTime(context.expiresAt, serverNow: serverNow, deviceNow: now))",
        ]
      ]
    }
    if let removed = stored?.snapshot?.customerInfo.accessContext {
      return [
        [
          "access context",
          "removed: expired \(TextOutput.serverTime(removed.expiresAt, serverNow: serverNow, deviceNow: now))",
        ]
      ]
    }
    return [["access context", TextOutput.none]]
  }

  private func deviceRows(_ device: DeviceAccessInfo?) -> [[String]] {
    guard let device else { return [["device access", TextOutput.none]] }
    var summary = device.status.rawValue
    if let reason = device.reason { summary += " (\(reason.rawValue))" }
    if let expiresAt = device.expiresAt {
      summary += ", until \(TextOutput.serverTime(expiresAt, serverNow: serverNow, deviceNow: now))"
    }
    var rows = [["device access", summary]]
    if let next = device.nextAllowedAt {
      rows.append([
        "next change", TextOutput.serverTime(next, serverNow: serverNow, deviceNow: now),
      ])
    }
    if let budget = device.changeBudget {
      rows.append(["change budget", DecisionOutput.budgetText(budget)])
    }
    for (index, summary) in device.devices.enumerated() {
      rows.append([
        index == 0 ? "devices" : "",
        DecisionOutput.deviceText(summary, serverNow: serverNow, deviceNow: now),
      ])
    }
    return rows
  }

  private func purchaseTable(_ purchases: [PurchaseInfo]) -> String {
    var rows = [["ID", "PRODUCT", "STORE", "PURCHASED", "OWNERSHIP"]]
    for purchase in purchases {
      var ownership = purchase.ownership?.rawValue ?? TextOutput.none
      if let type = purchase.ownershipType { ownership += " (\(type.rawValue))" }
      if purchase.conflict == true { ownership += ", conflict" }
      rows.append([
        purchase.id, purchase.productId ?? TextOutput.none, purchase.store ?? TextOutput.none,
        TextOutput.serverTime(purchase.purchasedAt, serverNow: serverNow, deviceNow: now),
        ownership,
      ])
    }
    return TextOutput.table(rows, indent: "  ")
  }

  private func unclaimedTable(_ purchases: [UnclaimedPurchase]) -> String {
    var rows = [["ID", "PRODUCT", "ENTITLEMENTS", "CLAIM HINT"]]
    for purchase in purchases {
      rows.append([
        purchase.purchaseId, purchase.productId ?? TextOutput.none,
        purchase.entitlements.joined(separator: ", "), purchase.claimHint.rawValue,
      ])
    }
    return TextOutput.table(rows, indent: "  ")
  }
}
