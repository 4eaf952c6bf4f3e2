import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Bad input and bad files: one line on stderr, the documented exit code, nothing changed.
@Suite struct StorageErrorTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  private static let notADatabase = String(repeating: "this is not a database. ", count: 200)

  @Test func badJSONOnStdinChangesNothing() throws {
    try workspace.put()
    let before = try workspace.logicalState()
    let cases: [(String, String)] = [
      ("{\"requestDate\": ", "error: snapshot: not valid JSON"),
      ("not json at all", "error: snapshot: not valid JSON"),
      (
        SampleSnapshot.single(status: nil),
        "error: entitlements.pro.status: missing\n"
      ),
      (
        SampleSnapshot.single(expiresAt: "next tuesday"),
        "error: entitlements.pro.expiresAt: not an ISO-8601 timestamp with a UTC offset\n"
      ),
      ("{\"entitlements\": {}}", "error: requestDate: missing\n"),
      ("[]", "error: snapshot: expected an object, found an array\n"),
      ("", "error: stdin: empty; expected a snapshot's JSON\n"),
    ]
    for (input, expected) in cases {
      let result = try workspace.run(
        "put", Sample.scope() + ["--now", "2026-11-30T12:10:00Z"], stdin: input)
      #expect(result.status == 2, "\(input)")
      #expect(result.stdout.isEmpty)
      #expect(result.stderr.hasPrefix(expected), "\(result.stderr)")
      #expect(result.stderr.hasSuffix("\n") && result.stderr.filter { $0 == "\n" }.count == 1)
    }
    #expect(try workspace.logicalState() == before)
  }

  @Test func oversizedSnapshotIsRejected() throws {
    let padding = String(repeating: "x", count: 1 << 20)
    let result = try workspace.run(
      "put", Sample.scope(), stdin: SampleSnapshot.single(extra: ", \"padding\": \"\(padding)\""))
    #expect(result.status == 2)
    #expect(result.stderr.hasPrefix("error: snapshot: "))
    #expect(result.stderr.contains("-byte cap"))
    #expect(!FileManager.default.fileExists(atPath: workspace.db))
  }

  @Test func rejectedInputCreatesNoDatabase() throws {
    let result = try workspace.run("put", Sample.scope(), stdin: "{")
    #expect(result.status == 2)
    #expect(!FileManager.default.fileExists(atPath: workspace.db))
  }

  @Test func missingInputFile() throws {
    let path = workspace.directory.path("nowhere.json")
    let result = try workspace.run("put", Sample.scope() + ["--file", path])
    #expect(result.status == 2)
    #expect(result.stderr == "error: \(path): no such file\n")
    #expect(!FileManager.default.fileExists(atPath: workspace.db))
  }

  @Test(arguments: ["check", "show", "scopes", "doctor", "purge"])
  func readingCommandsNeverCreateTheDatabase(_ command: String) throws {
    var arguments: [String] =
      switch command {
      case "check": Sample.scope() + ["--entitlement", "pro"]
      case "show": Sample.scope()
      case "purge": ["--unusable"]
      default: []
      }
    arguments += ["--json"]
    let result = try workspace.run(command, arguments)
    #expect(result.status == 3)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr == "error: \(workspace.db): no such database\n")
    #expect(!FileManager.default.fileExists(atPath: workspace.db))
  }

  @Test func checkMovesANonDatabaseAsideAndAnswersUnavailable() throws {
    try workspace.directory.write("cache.sqlite", Self.notADatabase)
    let result = try workspace.run(
      "check",
      Sample.scope() + ["--entitlement", "pro", "--now", SampleSnapshot.requestDate, "--json"])
    #expect(result.status == 1)
    #expect(try result.json()["state"] as? String == "offline_unavailable")
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1)
    let warning = try #require(lines.first)
    #expect(
      warning.hasPrefix(
        "warning: \(workspace.db): not a usable database (file is not a database); moved aside to \(workspace.db).damaged-"
      ))
    // Nothing was erased: the original bytes are where the warning says.
    let movedTo = try #require(
      warning.components(separatedBy: "moved aside to ").last?.components(separatedBy: " ").first)
    #expect(FileManager.default.contents(atPath: movedTo) == Data(Self.notADatabase.utf8))
    #expect(try workspace.run("doctor").status == 0)
  }

  @Test(arguments: ["scopes", "doctor", "purge"])
  func inspectionLeavesANonDatabaseAlone(_ command: String) throws {
    try workspace.directory.write("cache.sqlite", Self.notADatabase)
    let result = try workspace.run(command, command == "purge" ? ["--unusable"] : [])
    #expect(result.status == 3)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr == "error: \(workspace.db): damaged (file is not a database); left untouched\n")
    #expect(FileManager.default.contents(atPath: workspace.db) == Data(Self.notADatabase.utf8))
    let siblings = try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path)
    #expect(siblings == ["cache.sqlite"])
  }

  /// An empty file is a database with no tables yet: opening it as a cache would create them,
  /// so an inspection says what is there and leaves it at 0 bytes; `doctor` calls it empty.
  @Test(arguments: ["scopes", "queue", "purge", "doctor"])
  func inspectionLeavesAnEmptyFileEmpty(_ command: String) throws {
    try workspace.directory.write("cache.sqlite", "")
    let result = try workspace.run(command, command == "purge" ? ["--unusable"] : [])
    if command == "doctor" {
      #expect(result.status == 0)
      #expect(
        result.stdout.hasPrefix(
          "\(workspace.db): empty: no cache has been written to it yet (an app opening it "
            + "creates its tables)\n"))
    } else {
      #expect(result.status == 3)
      #expect(
        result.stderr
          == "error: \(workspace.db): an empty file (0 bytes): no cache has been written to it "
          + "yet; left untouched\n")
    }
    #expect(FileManager.default.contents(atPath: workspace.db) == Data())
    let siblings = try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path)
    #expect(siblings == ["cache.sqlite"])
  }

  @Test func putReplacesANonDatabaseAsTheAppWould() throws {
    try workspace.directory.write("cache.sqlite", Self.notADatabase)
    let result = try workspace.put()
    #expect(result.stderr.hasPrefix("warning: \(workspace.db): not a usable database"))
    #expect(try workspace.check(now: "2026-11-30T12:01:00Z").result.status == 0)
  }

  @Test func doctorReportsHealth() throws {
    try workspace.put()
    let text = try workspace.run("doctor")
    #expect(text.status == 0)
    #expect(text.stdout.hasPrefix("\(workspace.db): healthy\n  integrity       ok\n"))
    let json = try workspace.run("doctor", ["--json"]).json()
    #expect(json["path"] as? String == workspace.db)
    #expect(json["healthy"] as? Bool == true)
    #expect(json["integrity"] as? [String] == ["ok"])
    #expect(json["schemaProblems"] as? [String] == [])
    #expect(json["schemaVersion"] as? Int == json["supportedSchemaVersion"] as? Int)
    #expect(json["journalMode"] as? String == "wal")
    #expect((json["pageSize"] as? Int ?? 0) >= 512)
    #expect((json["pageCount"] as? Int ?? 0) > 0)
    #expect(json["freelistCount"] as? Int != nil)
    #expect(
      json["fileSize"] as? Int == (json["pageSize"] as? Int ?? 0) * (json["pageCount"] as? Int ?? 0)
    )
    #expect(json["walSize"] as? Int != nil)
    #expect(json["scopeCount"] as? Int == 1)
  }

  @Test func doctorNeverChangesTheFile() throws {
    try workspace.put()
    let before = FileManager.default.contents(atPath: workspace.db)
    #expect(try workspace.run("doctor").status == 0)
    #expect(FileManager.default.contents(atPath: workspace.db) == before)
  }

  @Test func doctorFindsDamage() throws {
    try workspace.put()
    // Overwrite everything after the first page (the schema stays readable): the table
    // pages are garbage now.
    var bytes = try #require(FileManager.default.contents(atPath: workspace.db))
    let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
    #expect(bytes.count > pageSize)
    for index in pageSize..<bytes.count { bytes[index] = 0xA5 }
    try bytes.write(to: URL(fileURLWithPath: workspace.db))
    let result = try workspace.run("doctor", ["--json"])
    #expect(result.status == 3)
    if result.stdout.isEmpty {
      #expect(result.stderr.hasPrefix("error: \(workspace.db): damaged ("))
    } else {
      #expect(try result.json()["healthy"] as? Bool == false)
      #expect(try workspace.run("doctor").stdout.hasPrefix("\(workspace.db): DAMAGED\n"))
    }
  }

  /// A table another tool rebuilt passes SQLite's integrity check; `doctor` names each
  /// statement it breaks, where `check` can only answer `unreadable`. A table added beside
  /// the cache's breaks nothing.
  @Test func doctorNamesTheStatementsAChangedTableBreaks() throws {
    try workspace.put()
    try SQLiteConnection(path: workspace.db).execute(
      "CREATE TABLE notes (x); INSERT INTO notes VALUES (1)")
    #expect(try workspace.run("doctor").status == 0)
    try SQLiteConnection(path: workspace.db).execute(
      "DROP TABLE entitlement; CREATE TABLE entitlement (x)")
    let text = try workspace.run("doctor")
    #expect(text.status == 3)
    #expect(
      text.stdout.hasPrefix(
        "\(workspace.db): DAMAGED: another tool changed its tables, and this build cannot use "
          + "them\n  integrity       ok\n  statements      point read: no such column: e.status\n"),
      "\(text.stdout)")
    let json = try workspace.run("doctor", ["--json"]).json()
    #expect(json["healthy"] as? Bool == false)
    let problems = try #require(json["schemaProblems"] as? [String])
    #expect(problems.contains("entitlement write: table entitlement has no column named scope_id"))
    #expect(!problems.contains { $0.hasPrefix("purchase") })
    let check = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", "2026-11-30T12:01:00Z"])
    #expect(check.status == 1)
    #expect(check.stdout.hasPrefix("pro: offline unavailable: unreadable\n"))
    #expect(check.stdout.contains("entitlement-cache doctor checks the file"))

    // A count over a changed table fails too: doctor still names the statements, and the
    // count it cannot take reads unreadable, where it stopped with SQLite's error.
    try SQLiteConnection(path: workspace.db).execute(
      "DROP TABLE purchase_queue; CREATE TABLE purchase_queue (x)")
    let queue = try workspace.run("doctor")
    #expect(queue.status == 3)
    #expect(queue.stdout.contains("\n  purchases       unreadable\n"), "\(queue.stdout)")
    let queueJSON = try workspace.run("doctor", ["--json"]).json()
    #expect(
      (queueJSON["schemaProblems"] as? [String])?.contains(
        "purchase counts: no such column: state") == true)
    #expect(queueJSON["purchasesByState"] is NSNull)
  }

  /// A table another tool dropped is named by `doctor`, as the app finds it at open (and moves
  /// the file aside); a newer build's change to a table is no damage: `doctor` reads the file.
  @Test func doctorNamesAMissingTableAndReadsANewerBuildsChange() throws {
    try workspace.put()
    try SQLiteConnection(path: workspace.db).execute("DROP TABLE schema_compatibility")
    let missing = try workspace.run("doctor", ["--json"])
    #expect(missing.status == 3)
    let problems = try #require(try missing.json()["schemaProblems"] as? [String])
    #expect(problems == ["missing table: schema_compatibility"])

    try FileManager.default.removeItem(atPath: workspace.db)
    try workspace.put()
    try SQLiteConnection(path: workspace.db).execute(
      """
      ALTER TABLE scope RENAME COLUMN verification TO trust;
      PRAGMA user_version = \(SQLiteCustomerInfoCache.supportedSchemaVersion + 1);
      """)
    let newer = try workspace.run("doctor")
    #expect(newer.status == 0, "\(newer.stderr)")
    #expect(
      newer.stdout.hasPrefix(
        "\(workspace.db): healthy; written by a newer schema, which this build reads and never "
          + "writes\n"), "\(newer.stdout)")
  }

  @Test func newerSchemaIsLeftUntouched() throws {
    try workspace.put()
    // A build that changed what this one reads records a read floor beyond it.
    try SQLiteConnection(path: workspace.db).execute(
      "UPDATE schema_compatibility SET read_version = 99")
    // PRAGMA user_version is the 4-byte big-endian integer at offset 60 of the header.
    var bytes = try #require(FileManager.default.contents(atPath: workspace.db))
    bytes.replaceSubrange(60..<64, with: [0, 0, 0, 99])
    try bytes.write(to: URL(fileURLWithPath: workspace.db))
    let check = try workspace.run("check", Sample.scope() + ["--entitlement", "pro"])
    #expect(check.status == 3)
    #expect(
      check.stderr.hasPrefix(
        "error: \(workspace.db): written by schema version 99, newer than this build's "))
    #expect(check.stderr.hasSuffix("; file left untouched\n"))
    let put = try workspace.run("put", Sample.scope(), stdin: SampleSnapshot.json)
    #expect(put.status == 3)
    #expect(FileManager.default.contents(atPath: workspace.db) == bytes)
    let doctor = try workspace.run("doctor", ["--json"])
    #expect(doctor.status == 3)
    #expect(try doctor.json()["schemaVersion"] as? Int == 99)
  }

  /// A build one version newer that only added a table, and recorded that this build still
  /// reads its file: `check` answers, `put` is refused, and the file is left as it was.
  @Test func newerSchemaWithinTheReadFloorIsReadNotWritten() throws {
    try workspace.put()
    let newer = SQLiteCustomerInfoCache.supportedSchemaVersion + 1
    try SQLiteConnection(path: workspace.db).execute(
      """
      CREATE TABLE loyalty (points INTEGER);
      UPDATE schema_compatibility SET read_version = \(newer - 1);
      PRAGMA user_version = \(newer);
      """)
    let bytes = try #require(FileManager.default.contents(atPath: workspace.db))
    let check = try workspace.run("check", Sample.scope() + ["--entitlement", "pro"])
    #expect(check.status == 0, "\(check.stderr)")
    let put = try workspace.run("put", Sample.scope(), stdin: SampleSnapshot.json)
    #expect(put.status == 3)
    #expect(put.stderr.contains("written by schema version \(newer), newer than this build's"))
    #expect(FileManager.default.contents(atPath: workspace.db) == bytes)
    let doctor = try workspace.run("doctor")
    #expect(doctor.status == 0)
    #expect(doctor.stdout.contains("schema version  \(newer), readable from \(newer - 1)"))
  }
}
