import EntitlementCache
import Foundation
import TestSupport
import Testing

/// What the tool prints agrees with itself, with its help and with its manual
/// (<doc:CommandLineTool>).
@Suite struct OutputAgreementTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  /// A relative time counted from the server's estimated time says so, where the line's own
  /// timestamp is the device's: "ended 2027-01-29 (1 h ago)" beside a 2027-01-09 stamp read
  /// as a contradiction.
  @Test func relativeTimesSayWhichClockTheyCountFrom() throws {
    let demo = try CLI.run(["demo"], in: workspace.directory.path)
    #expect(demo.status == 0)
    let rollback = try #require(demo.stdout.range(of: "\n9. Clock rollback\n"))
    let lines = demo.stdout[rollback.upperBound...].split(separator: "\n").prefix(8)
    let stamped = try #require(lines.firstIndex { $0.contains("2027-01-09T13:00:00Z") })
    #expect(
      lines[stamped + 1].contains("ended 2027-01-29T13:00:00Z (1 h ago by server time)"),
      "\(lines)")
    // Where the two clocks agree, nothing is added.
    #expect(demo.stdout.contains("valid until 2027-01-29T13:00:00Z (in 30 d)\n"))

    // `check`: device times read from the device clock, server instants by server time.
    try workspace.put(SampleSnapshot.single(), now: "2026-11-30T16:00:00Z")
    let check = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", "2026-11-30T16:00:00Z"])
    #expect(check.stdout.contains("  stored at         2026-11-30T16:00:00Z (now)\n"))
    #expect(
      check.stdout.contains("  verified at       2026-11-30T12:00:00Z (now by server time)\n"))

    // Half a second before the boundary access still holds: "now" read as already passed.
    try workspace.put(SampleSnapshot.single(), now: SampleSnapshot.requestDate)
    let edge = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--now", "2026-12-30T11:59:59.600Z"])
    #expect(edge.status == 0)
    #expect(
      edge.stdout.contains("  valid until       2026-12-30T12:00:00Z (in <1 s)\n"), "\(edge.stdout)"
    )
  }

  /// `put` of a hand-written snapshot whose requestDate is hours from the device clock says
  /// what offset the cache now applies and how to avoid it.
  @Test func putExplainsALargeClockOffset() throws {
    let result = try workspace.run(
      "put", Sample.scope() + ["--now", "2026-11-30T16:00:00Z"], stdin: SampleSnapshot.single())
    #expect(result.status == 0)
    #expect(
      result.stdout.contains(
        "  clock offset  -4 h: the requestDate is behind this device's clock, so the cache reads "
          + "server times that much behind it until the next put (--now 2026-11-30T12:00:00Z "
          + "stores it as fetched then)\n"))
    let json = try workspace.run(
      "put", Sample.scope() + ["--now", "2026-11-30T16:00:00Z", "--json"],
      stdin: SampleSnapshot.single())
    #expect(try json.json()["clockOffset"] as? Int == -14_400)
    // A fractional offset reads the same in put and in the evidence: both round to nearest.
    let fractional = try workspace.run(
      "put", Sample.scope() + ["--now", "2026-11-30T11:59:59.400Z", "--json"],
      stdin: SampleSnapshot.single())
    let show = try workspace.run(
      "show", Sample.scope() + ["--now", "2026-11-30T11:59:59.400Z", "--json"])
    #expect(try fractional.json()["clockOffset"] as? Int == 1)
    #expect(try show.json()["clockOffset"] as? Int == 1)
    let onTime = try workspace.run(
      "put", Sample.scope() + ["--now", SampleSnapshot.requestDate], stdin: SampleSnapshot.single())
    #expect(!onTime.stdout.contains("clock offset"))
  }

  /// The demo's second column starts at one place whether or not a stamp has milliseconds.
  @Test func columnsStayAlignedWhenATimeHasMilliseconds() throws {
    let demo = try CLI.run(["demo"], in: workspace.directory.path)
    let stamped = demo.stdout.split(separator: "\n").filter {
      $0.hasPrefix("   2") && $0.dropFirst(3).prefix(4).allSatisfy(\.isNumber)
    }
    #expect(stamped.contains { $0.contains(".678Z ") }, "no stamp with milliseconds")
    let starts = Set(
      stamped.map { line -> Int in
        let afterStamp = line.dropFirst(3).drop { $0 != " " }
        return line.count - afterStamp.drop { $0 == " " }.count
      })
    #expect(starts.count == 1, "second column starts at \(starts.sorted())")
  }

  /// The manual's list of `show --json`'s keys is in the order the tool prints them.
  @Test func theDocumentedShowKeyOrderIsTheRealOne() throws {
    let manual = try Documentation.article("CommandLineTool")
    let start = try #require(manual.range(of: "- **`show`**: `{"))
    let end = try #require(manual[start.upperBound...].range(of: "}`."))
    let documented = manual[start.upperBound..<end.lowerBound]
      .split(separator: "\"", omittingEmptySubsequences: false).enumerated()
      .filter { $0.offset % 2 == 1 }.map { String($0.element) }

    try workspace.put()
    let show = try workspace.run(
      "show", Sample.scope() + ["--now", "2026-11-30T12:05:00Z", "--json"])
    // The top-level keys, and the keys of `scope` and `bookkeeping`, in the printed order.
    var printed: [String] = []
    var parent = ""
    for line in show.stdout.split(separator: "\n") {
      let indent = line.prefix { $0 == " " }.count
      guard line.dropFirst(indent).hasPrefix("\"") else { continue }
      let key = String(line.dropFirst(indent + 1).prefix { $0 != "\"" })
      if indent == 2 {
        printed.append(key)
        parent = key
      } else if indent == 4, parent == "scope" || parent == "bookkeeping" {
        printed.append(key)
      }
    }
    #expect(documented == printed)
  }

  @Test func helpNamesEverythingTheCommandPrints() throws {
    let simulate = try CLI.run(["simulate", "--help"], in: workspace.directory.path)
    #expect(simulate.stdout.contains("change of a queued purchase (purchase: pending, posting"))
    let demo = try CLI.run(["demo", "--help"], in: workspace.directory.path)
    #expect(demo.stdout.contains("a clock\nset back before a refresh"))
    #expect(demo.stdout.contains("a purchase made offline, queued, then posted as its buyer"))
    #expect(demo.stdout.contains("\"by\nserver time\""))
  }

  @Test func versionNamesTheBuildTheSchemaAndSQLite() throws {
    let version = try CLI.run(["--version"], in: workspace.directory.path)
    #expect(version.status == 0)
    #expect(
      version.stdout
        == "entitlement-cache \(PackageVersion.version) (schema version "
        + "\(SQLiteCustomerInfoCache.supportedSchemaVersion), SQLite "
        + "\(PackageVersion.sqliteVersion))\n")
    #expect(try CLI.run(["version"], in: workspace.directory.path).stdout == version.stdout)
    let json = try CLI.run(["version", "--json"], in: workspace.directory.path).json()
    #expect(json["schemaVersion"] as? Int == SQLiteCustomerInfoCache.supportedSchemaVersion)
    #expect(json["version"] as? String == PackageVersion.version)
  }
}
