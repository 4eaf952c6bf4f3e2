import Foundation
import Testing

@testable import EntitlementCache

/// A directory under the system temporary directory, removed when the value is deinitialized.
final class TemporaryDirectory: Sendable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appending(path: "entitlement-cache-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  /// A path inside the directory.
  func path(_ name: String) -> String {
    url.appending(path: name).path
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }
}

/// Fixed, readable times for tests.
enum Fixture {
  static func date(_ text: String) -> Date {
    guard let date = ISO8601.parse(text) else {
      preconditionFailure("bad fixture date \(text)")
    }
    return date
  }

  /// 2026-11-30T12:00:00Z, the `requestDate` of ``sampleJSON``.
  static let requestDate = date("2026-11-30T12:00:00Z")

  static let scopeA = scope(user: "user-a")
  static let scopeB = scope(user: "user-b")

  static func scope(
    sdkKey: String = "sdk_live_123", installation: String = "install-1",
    environment: StoreEnvironment = .production, user: String = "user-a"
  ) -> CacheScope {
    do {
      return try CacheScope(
        sdkKey: sdkKey, installationID: installation, environment: environment, appUserID: user)
    } catch {
      preconditionFailure("bad fixture scope: \(error)")
    }
  }

  /// The DESIGN §3 example snapshot.
  static let sampleJSON = """
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
        "devices": [ { "id": "d_7f3a", "label": "iPhone", "lastSeenAt": "2026-11-29T08:00:00Z" } ]
      }
    }
    """

  static func snapshot(_ json: String = sampleJSON) throws -> CustomerInfoSnapshot {
    try CustomerInfoSnapshot(jsonData: Data(json.utf8))
  }

  /// A cache in `directory` on a manual clock, with pruning at open off so tests control it.
  static func cache(
    in directory: TemporaryDirectory, name: String = "cache.sqlite", clock: ManualClock,
    configure: (inout CacheConfiguration) -> Void = { _ in }
  ) throws -> SQLiteCustomerInfoCache {
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    configure(&configuration)
    return try SQLiteCustomerInfoCache(
      path: directory.path(name), configuration: configuration, clock: clock.cacheClock)
  }
}
