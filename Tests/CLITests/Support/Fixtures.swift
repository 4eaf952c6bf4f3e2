import Foundation
import TestSupport
import Testing

/// The tool's tests' scope flags: TestSupport's `SampleScope` as command-line arguments.
enum Sample {
  /// The scope flags of one user.
  static func scope(user: String = SampleScope.userA, environment: String = "production")
    -> [String]
  {
    [
      "--sdk-key", SampleScope.sdkKey, "--installation", SampleScope.installation,
      "--environment", environment, "--user", user,
    ]
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
    _ json: String = SampleSnapshot.json, user: String = SampleScope.userA,
    now: String = SampleSnapshot.requestDate,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> CLIResult {
    let result = try run("put", Sample.scope(user: user) + ["--now", now], stdin: json)
    #expect(result.status == 0, "put failed: \(result.stderr)", sourceLocation: sourceLocation)
    return result
  }

  /// `check --json` for user A (or `user`) at `now`.
  func check(
    _ key: String = "pro", user: String = SampleScope.userA, now: String, _ extra: [String] = []
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
