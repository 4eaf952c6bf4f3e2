import Foundation

@testable import EntitlementCache

/// Snapshots that exercise every field the model knows and some it does not.
enum ModelFixture {
  /// Every known field set, fractional seconds and UTC offsets, unknown enum values, and an
  /// unknown field at every level: top level, entitlement, purchase, unclaimed purchase,
  /// accessContext, deviceAccess, changeBudget and device. The unknown values cover every JSON
  /// type, nested, so a lossy round trip of any of them shows.
  static let richJSON = """
    {
      "requestDate": "2026-11-30T13:00:00.250+01:00",
      "verification": "verified_on_device",
      "serverRegion": "eu-1",
      "experiments": {"flags": [1, 2.5, null, true, "x", {"deep": -3}], "ratio": 0.125},
      "entitlements": {
        "pro": {
          "status": "grace",
          "expiresAt": "2026-12-30T12:00:00Z",
          "gracePeriodExpiresAt": "2027-01-06T12:00:00.5Z",
          "verifiedAt": "2026-11-30T11:59:59.999Z",
          "productId": "pro_monthly",
          "source": "family_shared",
          "willRenew": false,
          "periodType": "trial",
          "renewals": 7
        },
        "legacy": {
          "status": "not_a_status_yet",
          "expiresAt": null,
          "verifiedAt": "2026-11-30T12:00:00-05:30",
          "source": "partner_bundle"
        },
        "lifetime": {"status": "active", "verifiedAt": "2026-11-30T12:00:00Z", "willRenew": true}
      },
      "purchases": [
        {
          "id": "tx_1", "productId": "pro_monthly", "store": "app_store",
          "purchasedAt": "2026-11-01T09:00:00+0000", "ownership": "owned",
          "ownershipType": "purchased", "canClaim": false, "conflict": false,
          "priceMicros": 4990000, "tags": ["intro", "eu"]
        },
        {"id": "tx_2", "ownership": "transferred", "ownershipType": "gifted"}
      ],
      "unclaimedPurchases": [
        {
          "purchaseId": "tx_9", "productId": "pro_yearly", "entitlements": ["pro", "gold"],
          "claimHint": "restore_required", "storeAccountHint": {"masked": "j***@example.com"}
        },
        {"purchaseId": "tx_10", "entitlements": ["gold"], "claimHint": "call_us"}
      ],
      "accessContext": {
        "token": "SECRET-ACCESS-TOKEN",
        "expiresAt": "2026-11-30T12:15:00Z",
        "audience": "backend"
      },
      "deviceAccess": {
        "status": "blocked",
        "reason": "DEVICE_REPLACED",
        "expiresAt": "2026-12-07T12:00:00Z",
        "nextAllowedAt": "2026-12-01T00:00:00Z",
        "changeBudget": {"remaining": 0, "limit": 3, "windowDays": 30, "resetsAt": "2026-12-30"},
        "devices": [
          {"id": "d_7f3a", "label": "iPhone", "lastSeenAt": "2026-11-29T08:00:00Z",
           "platform": "ios"},
          {"id": "d_0001"}
        ],
        "policyVersion": 3
      }
    }
    """

  /// ``richJSON`` decoded.
  static func richInfo() throws -> CustomerInfo {
    try CustomerInfoSnapshot(jsonData: Data(richJSON.utf8)).customerInfo
  }
}
