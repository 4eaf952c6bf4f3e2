import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The times the clauses use: whole seconds from one start, so a cache that keeps
/// milliseconds (as the SQLite cache does) holds every instant exactly.
enum ContractTime {
  static let minute: TimeInterval = 60
  static let hour: TimeInterval = 3600
  static let day: TimeInterval = 86_400

  /// 2026-11-30T12:00:00Z: where each clause's clock starts, unless it says otherwise.
  static let start = Date(timeIntervalSince1970: 1_796_040_000)

  /// ``start`` plus `interval` seconds.
  static func at(_ interval: TimeInterval) -> Date {
    start.addingTimeInterval(interval)
  }
}

/// The scopes the clauses use, and one variant of the first per scope part.
enum ContractScope {
  /// The scope most clauses read and write.
  static let primary = scope()

  /// ``primary`` with exactly one of its four parts changed, named.
  static let variants: [(part: String, scope: CacheScope)] = [
    ("SDK key", scope(sdkKey: "contract_sdk_other")),
    ("installation", scope(installation: "contract-install-2")),
    ("environment", scope(environment: .sandbox)),
    ("app user", scope(user: "contract-user-2")),
  ]

  static func scope(
    sdkKey: String = "contract_sdk_key", installation: String = "contract-install-1",
    environment: StoreEnvironment = .production, user: String = "contract-user-1"
  ) -> CacheScope {
    do {
      return try CacheScope(
        sdkKey: sdkKey, installationID: installation, environment: environment, appUserID: user)
    } catch {
      // The parts above are constants and none is empty.
      preconditionFailure("the contract's own scope is invalid: \(error)")
    }
  }
}

/// One entitlement of a snapshot a clause writes.
struct ContractEntitlement {
  var key: String
  var status: String
  var expiresAt: Date?
  var gracePeriodExpiresAt: Date?
  var verifiedAt: Date?
  var source = "purchase"
}

/// An unclaimed purchase of a snapshot a clause writes.
struct ContractUnclaimed {
  var id: String
  var keys: [String]
  var hint: String
}

/// Snapshots as the server sends them: JSON text, with a field this build does not know, so a
/// round trip that re-encodes instead of keeping the bytes is seen.
enum ContractSnapshot {
  static func make(
    requestDate: Date, verification: String = "verified", entitlements: [ContractEntitlement],
    unclaimed: [ContractUnclaimed] = [], accessContextExpiresAt: Date? = nil,
    deviceAccess: (status: String, expiresAt: Date?)? = nil, totalSize: Int? = nil
  ) throws -> CustomerInfoSnapshot {
    func json(padding: Int?) -> String {
      text(
        requestDate: requestDate, verification: verification, entitlements: entitlements,
        unclaimed: unclaimed, accessContextExpiresAt: accessContextExpiresAt,
        deviceAccess: deviceAccess, padding: padding)
    }
    var data = Data(json(padding: nil).utf8)
    if let totalSize {
      // A padding field of single-byte characters brings the bytes to exactly `totalSize`.
      let bare = json(padding: 0).utf8.count
      data = Data(json(padding: max(0, totalSize - bare)).utf8)
    }
    // The cap is the cache's to enforce: the clause that checks it builds oversized ones.
    return try CustomerInfoSnapshot(jsonData: data, sizeLimit: Int.max)
  }

  /// A snapshot granting one key, `key`, until `expiresAt`.
  static func granting(
    _ key: String, requestDate: Date, until expiresAt: Date?, verifiedAt: Date? = nil
  ) throws -> CustomerInfoSnapshot {
    try make(
      requestDate: requestDate,
      entitlements: [
        ContractEntitlement(
          key: key, status: "active", expiresAt: expiresAt, verifiedAt: verifiedAt ?? requestDate)
      ])
  }

  private static func text(
    requestDate: Date, verification: String, entitlements: [ContractEntitlement],
    unclaimed: [ContractUnclaimed], accessContextExpiresAt: Date?,
    deviceAccess: (status: String, expiresAt: Date?)?, padding: Int?
  ) -> String {
    func date(_ value: Date?) -> String { value.map { "\"\($0.iso8601)\"" } ?? "null" }
    let entitlementFields = entitlements.map { entitlement in
      """
      "\(entitlement.key)": {"status": "\(entitlement.status)", \
      "expiresAt": \(date(entitlement.expiresAt)), \
      "gracePeriodExpiresAt": \(date(entitlement.gracePeriodExpiresAt)), \
      "verifiedAt": \(date(entitlement.verifiedAt)), "productId": "\(entitlement.key)_product", \
      "source": "\(entitlement.source)", "willRenew": true, "contractNote": "kept"}
      """
    }
    let unclaimedItems = unclaimed.map { purchase in
      let keys = purchase.keys.map { "\"\($0)\"" }.joined(separator: ", ")
      return """
        {"purchaseId": "\(purchase.id)", "productId": "\(purchase.id)_product", \
        "entitlements": [\(keys)], "claimHint": "\(purchase.hint)"}
        """
    }
    var fields = [
      "\"requestDate\": \(date(requestDate))",
      "\"verification\": \"\(verification)\"",
      "\"entitlements\": {\(entitlementFields.joined(separator: ", "))}",
      "\"unclaimedPurchases\": [\(unclaimedItems.joined(separator: ", "))]",
      "\"contractUnknownField\": {\"kept\": [1, \"two\", null, 4.5]}",
    ]
    if let accessContextExpiresAt {
      fields.append(
        "\"accessContext\": {\"token\": \"contract-token\", "
          + "\"expiresAt\": \(date(accessContextExpiresAt))}")
    }
    if let deviceAccess {
      fields.append(
        "\"deviceAccess\": {\"status\": \"\(deviceAccess.status)\", "
          + "\"expiresAt\": \(date(deviceAccess.expiresAt)), \"devices\": []}")
    }
    if let padding {
      fields.append("\"contractPadding\": \"\(String(repeating: "x", count: padding))\"")
    }
    return "{" + fields.joined(separator: ", ") + "}"
  }
}
