import TestSupport

/// The snapshots the stateful target stores, as a server would send them, around its clock's
/// start (2026-11-30T12:00:00Z): between them they reach every state of the offline rules
/// (<doc:OfflineRules>).
enum SnapshotVariants {
  static let all = [
    sample, graceAndFamily, deviceBlocked, serverAhead, empty, oversized, deviceUnknown,
  ]

  /// The example snapshot (<doc:SnapshotFormat>), the one every test shares.
  static let sample = SampleSnapshot.json

  /// Grace with and without its end, billing retry, family sharing, an unknown status and
  /// source, a fraction of a second and a UTC offset, and unclaimed purchases.
  static let graceAndFamily = """
    {"requestDate": "2026-11-30T11:59:30.250Z", "verification": "not_requested",
     "entitlements": {
       "pro": {"status": "grace", "expiresAt": "2026-11-30T18:00:00Z",
               "gracePeriodExpiresAt": "2026-12-03T12:00:00.5Z",
               "verifiedAt": "2026-11-30T11:59:30Z", "productId": "pro_monthly",
               "source": "purchase"},
       "plus": {"status": "billing_retry", "expiresAt": "2026-11-29T12:00:00Z",
                "productId": "plus_monthly", "source": "purchase"},
       "family": {"status": "active", "expiresAt": "2026-12-02T12:00:00+02:00",
                  "productId": "family", "source": "family_shared"},
       "gold": {"status": "grace", "productId": "gold", "source": "gift"},
       "lifetime": {"status": "not_a_status_yet", "productId": "lifetime", "source": "purchase"}},
     "unclaimedPurchases": [
       {"purchaseId": "tx_7", "productId": "gold_yearly", "entitlements": ["gold", "plus"],
        "claimHint": "login_required"},
       {"purchaseId": "tx_8", "productId": "x", "entitlements": ["nowhere"],
        "claimHint": "call_us"}]}
    """

  /// An entitled user on a blocked installation.
  static let deviceBlocked = """
    {"requestDate": "2026-11-30T12:00:00Z", "verification": "verified",
     "entitlements": {
       "pro": {"status": "active", "expiresAt": "2026-12-30T12:00:00Z",
               "verifiedAt": "2026-11-30T12:00:00Z", "productId": "pro_monthly",
               "source": "purchase"},
       "plus": {"status": "expired", "expiresAt": "2026-11-01T12:00:00Z",
                "productId": "plus", "source": "purchase"}},
     "deviceAccess": {"status": "blocked", "reason": "DEVICE_REPLACED", "expiresAt": null,
       "nextAllowedAt": "2026-12-02T00:00:00Z",
       "changeBudget": {"remaining": 0, "limit": 3, "windowDays": 30},
       "devices": [{"id": "d_1", "label": "iPad", "lastSeenAt": "2026-11-28T08:00:00Z"}]}}
    """

  /// The server's clock 9 minutes ahead; revoked, expired, and a lifetime entitlement without
  /// `verifiedAt`; an access context.
  static let serverAhead = """
    {"requestDate": "2026-11-30T12:09:00-00:00", "verification": "verified_on_device",
     "entitlements": {
       "pro": {"status": "revoked", "expiresAt": "2026-12-30T12:00:00Z",
               "productId": "pro_monthly", "source": "purchase"},
       "plus": {"status": "expired", "expiresAt": "2026-11-30T11:00:00Z",
                "productId": "plus", "source": "promotional"},
       "lifetime": {"status": "active", "expiresAt": null, "productId": "lifetime",
                    "source": "other"},
       "family": {"status": "active", "expiresAt": "2026-12-01T00:00:00Z",
                  "verifiedAt": "2026-11-30T12:09:00Z", "productId": "fam",
                  "source": "family_shared"}},
     "accessContext": {"token": "tok-3", "expiresAt": "2026-11-30T12:30:00Z"}}
    """

  /// Nothing entitled, ten days old, failed verification.
  static let empty = """
    {"requestDate": "2026-11-20T00:00:00Z", "verification": "failed", "entitlements": {}}
    """

  /// Over the target's 4 KiB limit: both caches must refuse it alike.
  static let oversized =
    #"{"requestDate": "2026-11-30T12:00:00Z", "entitlements": {}, "padding": ""#
    + String(repeating: "x", count: 5_000) + #""}"#

  /// An active entitlement on an installation whose access ends within the hour, under a
  /// device status the library does not know.
  static let deviceUnknown = """
    {"requestDate": "2026-11-30T12:00:00Z", "verification": "verified",
     "entitlements": {
       "pro": {"status": "active", "expiresAt": "2026-12-01T12:00:00Z",
               "verifiedAt": "2026-11-30T12:00:00Z", "productId": "pro_monthly",
               "source": "purchase"},
       "gold": {"status": "active", "expiresAt": "2026-12-01T12:00:00Z",
                "verifiedAt": "2026-11-30T12:00:00Z", "productId": "gold",
                "source": "purchase"}},
     "deviceAccess": {"status": "suspended", "reason": "LOGIN_REQUIRED",
       "expiresAt": "2026-11-30T13:00:00Z", "nextAllowedAt": null, "changeBudget": null,
       "devices": []}}
    """
}
