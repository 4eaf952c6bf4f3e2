import Foundation
import TestSupport
import Testing

/// `import`: a previous cache's snapshot stored as of its save, with the exit statuses the
/// manual gives, and its origin in `check` and `show` until a `put` replaces it.
@Suite struct ImportCommandTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  /// Saved on 25 November: `pro` ended on 2 December, `team` ends on 25 December.
  static let previous = """
    {"requestDate":"2026-11-25T12:00:00Z","verification":"verified","entitlements":{
    "pro":{"status":"active","expiresAt":"2026-12-02T12:00:00Z","verifiedAt":"2026-11-25T12:00:00Z"},
    "team":{"status":"active","expiresAt":"2026-12-25T12:00:00Z","verifiedAt":"2026-11-25T12:00:00Z"}}}
    """
  static let launch = "2026-12-05T12:00:00Z"

  func importPrevious(
    _ extra: [String] = ["--saved-at", "2026-11-25T12:00:00Z"], label: String = "old-cache",
    stdin: String = previous
  ) throws -> CLIResult {
    try workspace.run(
      "import", Sample.scope() + ["--now", Self.launch, "--label", label] + extra, stdin: stdin)
  }

  @Test func importsAsOfTheSaveAndSaysSoUntilAPutReplacesIt() throws {
    let imported = try importPrevious(["--saved-at", "2026-11-25T12:00:00Z", "--json"])
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(try imported.json()["outcome"] as? String == "imported")

    let (pro, proJSON) = try workspace.check("pro", now: Self.launch)
    #expect(pro.status == 1)
    #expect(proJSON["reason"] as? String == "expired")
    let (team, teamJSON) = try workspace.check("team", now: Self.launch)
    #expect(team.status == 0)
    #expect(teamJSON["isHighTrust"] as? Bool == false)
    let evidence = try #require(teamJSON["evidence"] as? [String: Any])
    #expect(evidence["origin"] as? String == "imported")
    #expect(evidence["importLabel"] as? String == "old-cache")
    #expect(evidence["verification"] as? String == "not_requested")
    let show = try workspace.run("show", Sample.scope() + ["--now", Self.launch, "--json"])
    let bookkeeping = try #require(try show.json()["bookkeeping"] as? [String: Any])
    #expect(bookkeeping["origin"] as? String == "imported")
    #expect(bookkeeping["importedAt"] as? String == Self.launch)
    let text = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "team", "--now", Self.launch])
    #expect(text.stdout.contains("origin            imported (old-cache)"), "\(text.stdout)")
    let showText = try workspace.run("show", Sample.scope() + ["--now", Self.launch])
    #expect(
      showText.stdout.contains("imported (old-cache): never verified; a put replaces it"),
      "\(showText.stdout)")

    try workspace.put(SampleSnapshot.json, now: "2026-12-05T12:00:01Z")
    let (_, after) = try workspace.check(now: "2026-12-05T12:00:02Z")
    let refreshed = try #require(after["evidence"] as? [String: Any])
    #expect(refreshed["origin"] as? String == "refresh")
    #expect(refreshed["importLabel"] is NSNull)
    // The text says where a snapshot came from only when it is an import.
    let textAfter = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", "2026-12-05T12:00:02Z"])
    #expect(textAfter.status == 0, "\(textAfter.stderr)")
    #expect(textAfter.stdout.contains("verification"), "\(textAfter.stdout)")
    #expect(!textAfter.stdout.contains("origin"), "\(textAfter.stdout)")
  }

  @Test func aScopeThatHoldsASnapshotIsNotImportedInto() throws {
    #expect(try importPrevious().status == 0)
    let before = try workspace.logicalState(now: Self.launch)
    let again = try importPrevious()
    #expect(again.status == 1)
    #expect(again.stdout.contains("the scope holds a snapshot already"))
    #expect(try workspace.logicalState(now: Self.launch) == before)
  }

  @Test func badInputAndASaveAheadOfNowAreUsageErrorsThatChangeNothing() throws {
    for (extra, label, stdin, message) in [
      (["--saved-at", "2026-12-05T12:10:00Z"], "old-cache", Self.previous, "--saved-at: ahead"),
      (["--format", "xml"], "old-cache", Self.previous, "--format: 'xml' is not one of"),
      ([], "", Self.previous, "--label: must be 1 to 64 bytes"),
      ([], "old-cache", "{\"entitlements\":{}}", "requestDate: missing"),
      (["--format", "revenuecat-v1"], "old-cache", Self.previous, "request_date: missing"),
    ] {
      let result = try importPrevious(extra, label: label, stdin: stdin)
      #expect(result.status == 2, "\(extra): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(extra): \(result.stderr)")
    }
    // Refused before the file is opened, or by the import without writing: nothing stored.
    if FileManager.default.fileExists(atPath: workspace.db) {
      #expect(try workspace.check(now: Self.launch).json["reason"] as? String == "no_snapshot")
    }
  }

  @Test func revenueCatsFormatIsReadWithItsLabel() throws {
    let body = """
      {"request_date": "2026-11-25T12:00:00Z", "request_date_ms": 1795608000000,
       "subscriber": {"entitlements": {"team": {"expires_date": "2026-12-25T12:00:00Z",
         "product_identifier": "team_monthly", "purchase_date": "2026-11-25T12:00:00Z"}},
         "subscriptions": {}, "non_subscriptions": {}}}
      """
    let result = try workspace.run(
      "import",
      Sample.scope() + [
        "--now", Self.launch, "--format", "revenuecat-v1", "--saved-at", "2026-11-25T12:00:00Z",
      ], stdin: body)
    #expect(result.status == 0, "\(result.stderr)")
    let (_, json) = try workspace.check("team", now: Self.launch)
    #expect(json["state"] as? String == "granted")
    let evidence = try #require(json["evidence"] as? [String: Any])
    #expect(evidence["importLabel"] as? String == "revenuecat-v1")
  }

  @Test func aStorageErrorIsExitThree() throws {
    let result = try CLI.run(
      ["import", "--db", "/proc/no-such-dir/cache.sqlite"] + Sample.scope() + [
        "--now", Self.launch,
      ],
      in: workspace.directory.path, stdin: Self.previous)
    #expect(result.status == 3, "\(result.stderr)")
  }
}
