/// The example snapshot (<doc:SnapshotFormat>), which the library and CLI tests share.
public enum SampleSnapshot {
  /// The access-context token in ``json``: tests check it never reaches any output.
  public static let token = "SECRET-ACCESS-TOKEN"

  /// A device token the server should not send inside CustomerInfo; ``json`` carries one as an
  /// unknown field so tests can check it is kept in storage but never printed.
  public static let deviceToken = "SECRET-DEVICE-TOKEN"

  /// `2026-11-30T12:00:00Z`, the `requestDate` of ``json``.
  public static let requestDate = "2026-11-30T12:00:00Z"

  /// The snapshot, as the server would send it.
  public static let json = """
    {
      "requestDate": "2026-11-30T12:00:00Z",
      "verification": "verified",
      "entitlements": {
        "pro": {
          "status": "active",
          "expiresAt": "2026-12-30T12:00:00Z",
          "gracePeriodExpiresAt": null,
          "verifiedAt": "2026-11-30T12:00:00Z",
          "productId": "pro_monthly",
          "source": "purchase",
          "willRenew": true
        },
        "lifetime": { "status": "active", "expiresAt": null, "verifiedAt": "2026-11-30T12:00:00Z",
                      "productId": "lifetime", "source": "purchase" }
      },
      "purchases": [
        { "id": "tx_1", "productId": "pro_monthly", "store": "app_store",
          "purchasedAt": "2026-11-01T09:00:00Z", "ownership": "owned",
          "ownershipType": "purchased", "canClaim": false, "conflict": false }
      ],
      "unclaimedPurchases": [
        { "purchaseId": "tx_9", "productId": "pro_yearly", "entitlements": ["pro"],
          "claimHint": "restore_required" }
      ],
      "accessContext": { "token": "SECRET-ACCESS-TOKEN", "expiresAt": "2026-11-30T12:15:00Z" },
      "deviceAccess": {
        "status": "active",
        "reason": null,
        "expiresAt": "2026-12-07T12:00:00Z",
        "nextAllowedAt": null,
        "changeBudget": { "remaining": 1, "limit": 3, "windowDays": 30 },
        "devices": [ { "id": "d_7f3a", "label": "iPhone", "lastSeenAt": "2026-11-29T08:00:00Z" } ],
        "deviceToken": "SECRET-DEVICE-TOKEN"
      }
    }
    """
}

extension SampleSnapshot {
  /// ``json`` answered at `requestDate` instead: its other dates stay.
  public static func json(requestDate: String) -> String {
    json.replacingOccurrences(
      of: #""requestDate": "\#(self.requestDate)""#, with: #""requestDate": "\#(requestDate)""#)
  }

  /// A snapshot whose one entitlement is `key`, on one line: unless told otherwise `verified`,
  /// answered at ``requestDate``, and active for a purchase until a month later.
  ///
  /// Each value goes between quotes as it is written, so a test can pass an escape or a value
  /// the decoder refuses. A nil `expiresAt` is `null`, an entitlement that never expires; any
  /// other nil leaves its field out. `verifiedAt` is `requestDate` unless given (`.some(nil)`
  /// leaves it out). `extra` follows the `entitlements` object: `, "deviceAccess": {...}`.
  public static func single(
    _ key: String = "pro", requestDate: String? = SampleSnapshot.requestDate,
    verification: String? = "verified", status: String? = "active",
    expiresAt: String? = "2026-12-30T12:00:00Z", verifiedAt: String?? = nil,
    productId: String? = nil, source: String? = "purchase", extra: String = ""
  ) -> String {
    func field(_ name: String, _ value: String?) -> String? {
      value.map { #""\#(name)":"\#($0)""# }
    }
    let expiry = #""expiresAt":\#(expiresAt.map { "\"\($0)\"" } ?? "null")"#
    let entitlement = [
      field("status", status), expiry, field("verifiedAt", verifiedAt ?? requestDate),
      field("productId", productId), field("source", source),
    ].compactMap { $0 }
    let fields = [field("requestDate", requestDate), field("verification", verification)]
      .compactMap { $0 }
    let entitlements = #""entitlements":{"\#(key)":{\#(entitlement.joined(separator: ","))}}"#
    return "{" + (fields + [entitlements]).joined(separator: ",") + extra + "}"
  }
}
