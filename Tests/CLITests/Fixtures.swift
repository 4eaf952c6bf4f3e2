import Foundation
import Testing

/// A directory under the system temporary directory, removed when the value is deinitialized.
final class TemporaryDirectory: Sendable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appending(path: "entitlement-cache-cli-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  var path: String { url.path }

  /// A path inside the directory.
  func path(_ name: String) -> String {
    url.appending(path: name).path
  }

  /// Writes `text` to a file in the directory and returns its path.
  @discardableResult
  func write(_ name: String, _ text: String) throws -> String {
    let path = path(name)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }
}

/// The scope, snapshot and times the CLI tests share.
enum Sample {
  static let sdkKey = "sdk_live_123"
  static let installation = "install-1"
  static let userA = "user-a"
  static let userB = "user-b"
  static let token = "SECRET-ACCESS-TOKEN"

  /// The scope flags of one user.
  static func scope(user: String = userA, environment: String = "production") -> [String] {
    [
      "--sdk-key", sdkKey, "--installation", installation, "--environment", environment,
      "--user", user,
    ]
  }

  /// 2026-11-30T12:00:00Z, the `requestDate` of ``json``.
  static let requestDate = "2026-11-30T12:00:00Z"

  /// The DESIGN §3 example snapshot, with a recognisable token.
  static let json = """
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

  /// A snapshot with one entitlement of the given fields, at ``requestDate``.
  static func single(
    _ key: String = "pro", status: String = "active", expiresAt: String? = "2026-12-30T12:00:00Z",
    source: String = "purchase", extra: String = ""
  ) -> String {
    let expiry = expiresAt.map { "\"\($0)\"" } ?? "null"
    return """
      {
        "requestDate": "\(requestDate)",
        "verification": "verified",
        "entitlements": {
          "\(key)": { "status": "\(status)", "expiresAt": \(expiry),
                      "verifiedAt": "\(requestDate)", "source": "\(source)" }
        }\(extra)
      }
      """
  }
}

/// A database in its own temporary directory, with the helpers most tests need.
struct Workspace {
  let directory: TemporaryDirectory
  let db: String

  init() throws {
    directory = try TemporaryDirectory()
    db = directory.path("cache.sqlite")
  }

  /// Runs the tool in the workspace with `--db` pointing at its database.
  func run(
    _ command: String, _ arguments: [String] = [], stdin: String? = nil,
    environment: [String: String] = [:]
  ) throws -> CLIResult {
    try CLI.run(
      [command, "--db", db] + arguments, in: directory.path, stdin: stdin,
      environment: environment)
  }

  /// Stores `json` for user A (or `user`) at `now`, and checks that it worked.
  @discardableResult
  func put(
    _ json: String = Sample.json, user: String = Sample.userA, now: String = Sample.requestDate,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> CLIResult {
    let result = try run("put", Sample.scope(user: user) + ["--now", now], stdin: json)
    #expect(result.status == 0, "put failed: \(result.stderr)", sourceLocation: sourceLocation)
    return result
  }

  /// `check --json` for user A (or `user`) at `now`.
  func check(
    _ key: String = "pro", user: String = Sample.userA, now: String, _ extra: [String] = []
  ) throws -> (result: CLIResult, json: [String: Any]) {
    let result = try run(
      "check", Sample.scope(user: user) + ["--entitlement", key, "--now", now, "--json"] + extra)
    return (result, try result.json())
  }

  /// Everything the tool can tell about the file at `now`: every scope's bookkeeping and user
  /// A's evaluated snapshot. Equal before and after a failed command proves it changed nothing.
  func logicalState(now: String = "2026-11-30T12:30:00Z") throws -> String {
    let scopes = try run("scopes", ["--now", now, "--json"])
    let show = try run("show", Sample.scope() + ["--now", now, "--json"])
    return scopes.stdout + scopes.stderr + show.stdout + show.stderr
  }
}
