import CSQLite
import EntitlementCache
import Foundation

/// The data every case reads: one database file of `scopeCount` scopes, each holding the same
/// snapshot of `entitlementCount` entitlements, and the scopes to ask about.
///
/// Every scope answers `pro` granted at ``Workload/now``, which each case checks, so a fast but
/// wrong answer can never pass as a result.
struct Workload {
  /// The instant every read evaluates against: the snapshot's `requestDate`.
  static let nowText = "2026-11-30T12:00:00Z"
  static let now = Date(timeIntervalSince1970: 1_796_040_000)
  static let sdkKey = "sdk_bench_key"
  static let installation = "install-bench"
  static let entitlement = "pro"
  /// The size of the headline cases and baselines: the default `maxScopes`, the most scopes
  /// one app's file holds.
  static let headlineScopes = 100
  static let headlineEntitlements = 10

  let path: String
  let scopeCount: Int
  let entitlementCount: Int
  let scopes: [CacheScope]
  let snapshot: CustomerInfoSnapshot

  static func user(_ index: Int) -> String { "user-\(index)" }

  /// A configuration that keeps every generated scope: the default retention keeps 100.
  static var configuration: CacheConfiguration {
    var configuration = CacheConfiguration()
    configuration.maxScopes = Int.max
    configuration.pruneOnOpen = false
    return configuration
  }

  /// Creates the file through the library for the first scope, then copies that scope's rows
  /// for the others in one transaction with reused statements, so 100,000 scopes take about a
  /// second and every row has exactly the shape the library writes.
  static func create(
    in directory: String, scopes scopeCount: Int, entitlements entitlementCount: Int,
    makeDirectory: Bool = false
  ) throws -> Workload {
    if makeDirectory {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)
    }
    let path = "\(directory)/scopes-\(scopeCount)-entitlements-\(entitlementCount).sqlite"
    let scopes = try (0..<scopeCount).map { index in
      try CacheScope(
        sdkKey: sdkKey, installationID: installation, environment: .production,
        appUserID: user(index))
    }
    let snapshot = try CustomerInfoSnapshot(
      jsonData: Data(SnapshotJSON.make(entitlements: entitlementCount).utf8))
    do {
      let cache = try SQLiteCustomerInfoCache(
        path: path, configuration: configuration, clock: .fixed(now))
      try cache.store(snapshot, for: scopes[0])
    }
    if scopeCount > 1 {
      try copyFirstScope(in: path, to: scopes.dropFirst())
    }
    return Workload(
      path: path, scopeCount: scopeCount, entitlementCount: entitlementCount, scopes: scopes,
      snapshot: snapshot)
  }

  private static func copyFirstScope(
    in path: String, to scopes: ArraySlice<CacheScope>
  ) throws {
    let database = try RawDatabase(path: path)
    // The user hash only groups scopes for inspection; the bench stores the scope key there so
    // each copy stays distinct without re-deriving the library's hash.
    let copyScope = try database.prepare(
      """
      INSERT INTO scope (
        scope_key, user_hash, sdk_key_hash, installation_hash, environment, stored_at,
        server_time, last_refresh_attempt_at, last_refresh_failed_at,
        last_refresh_failure_reason, high_water_mark, last_used_at, snapshot, snapshot_size,
        snapshot_sha256, verification, access_context_expires_at, device_status,
        device_expires_at, device_block, revision)
      SELECT ?1, ?1, sdk_key_hash, installation_hash, environment, stored_at, server_time,
        last_refresh_attempt_at, last_refresh_failed_at, last_refresh_failure_reason,
        high_water_mark, last_used_at, snapshot, snapshot_size, snapshot_sha256, verification,
        access_context_expires_at, device_status, device_expires_at, device_block, revision
      FROM scope WHERE id = 1
      """)
    // Every column of an entitlement row, as the store's write names them
    // (EntitlementParameter, which ScopeColumnsTests holds to the migrated table).
    let columns = EntitlementParameter.allCases
    let copyEntitlements = try database.prepare(
      """
      INSERT INTO entitlement (\(columns.map(\.column).joined(separator: ", ")))
      SELECT \(columns.map { $0 == .scopeID ? "last_insert_rowid()" : $0.column }
        .joined(separator: ", "))
      FROM entitlement WHERE scope_id = 1
      """)
    try database.execute("BEGIN IMMEDIATE")
    for scope in scopes {
      try copyScope.bind(scope.key.bytes, at: 1)
      try copyScope.run()
      try copyEntitlements.run()
    }
    try database.execute("COMMIT")
    // Every process case then starts from the same file, with no write-ahead log to replay.
    try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
  }
}

/// Snapshot JSON in the snapshot format (<doc:SnapshotFormat>), with `pro` and as many other
/// entitlements as asked.
enum SnapshotJSON {
  static func make(entitlements count: Int) -> String {
    precondition(count >= 1, "a workload snapshot holds at least pro")
    var entries = [
      """
      "pro": { "status": "active", "expiresAt": "2026-12-30T12:00:00Z",
        "gracePeriodExpiresAt": null, "verifiedAt": "2026-11-30T12:00:00Z",
        "productId": "pro_monthly", "source": "purchase", "willRenew": true }
      """
    ]
    // A realistic mix: every other key active, the rest each status in turn, taken from the
    // enum so a status added there is in the workload too.
    let others = EntitlementStatus.allCases.filter { $0 != .active }.map(\.rawValue)
    for index in 1..<count {
      let status = index.isMultiple(of: 2) ? "active" : others[(index / 2) % others.count]
      entries.append(
        """
        "feature_\(index)": { "status": "\(status)", "expiresAt": "2026-12-\(10 + index % 18)T00:00:00Z",
          "gracePeriodExpiresAt": \(status == "grace" ? "\"2026-12-29T00:00:00Z\"" : "null"),
          "verifiedAt": "2026-11-30T12:00:00Z", "productId": "product_\(index % 7)",
          "source": "\(index % 5 == 0 ? "family_shared" : "purchase")", "willRenew": \(index % 2 == 0) }
        """)
    }
    return """
      {
        "requestDate": "2026-11-30T12:00:00Z",
        "verification": "verified",
        "entitlements": { \(entries.joined(separator: ",\n")) },
        "purchases": [
          { "id": "tx_1", "productId": "pro_monthly", "store": "app_store",
            "purchasedAt": "2026-11-01T09:00:00Z", "ownership": "owned",
            "ownershipType": "purchased", "canClaim": false, "conflict": false }
        ],
        "unclaimedPurchases": [
          { "purchaseId": "tx_9", "productId": "pro_yearly", "entitlements": ["pro"],
            "claimHint": "restore_required" }
        ],
        "accessContext": { "token": "opaque-bench-token", "expiresAt": "2026-11-30T12:15:00Z" },
        "deviceAccess": {
          "status": "active", "reason": null, "expiresAt": "2026-12-07T12:00:00Z",
          "nextAllowedAt": null, "changeBudget": { "remaining": 1, "limit": 3, "windowDays": 30 },
          "devices": [ { "id": "d_7f3a", "label": "iPhone", "lastSeenAt": "2026-11-29T08:00:00Z" } ]
        }
      }
      """
  }
}
