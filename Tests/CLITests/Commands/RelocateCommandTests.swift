import Foundation
import TestSupport
import Testing

/// `relocate --from OLD`: another cache file merged into the database and removed, with the
/// exit statuses the manual gives, and the same facts in text and in JSON.
@Suite struct RelocateCommandTests {
  /// The old file: user A's and user B's snapshots, stored through the tool.
  static func oldFile(in workspace: Workspace, name: String = "old.sqlite") throws -> String {
    let old = workspace.directory.path(name)
    for user in [SampleScope.userA, SampleScope.userB] {
      let put = try CLI.run(
        ["put", "--db", old] + Sample.scope(user: user) + ["--now", SampleSnapshot.requestDate],
        in: workspace.directory.path, stdin: SampleSnapshot.json)
      #expect(put.status == 0, "\(put.stderr)")
    }
    return old
  }

  @Test("text and JSON say the same move, and the old file is gone", arguments: [false, true])
  func movesAndSaysWhat(json: Bool) throws {
    let workspace = try Workspace()
    // User A's snapshot is newer in the database already: kept there.
    let newer = SampleSnapshot.single(
      requestDate: "2026-11-30T13:00:00Z", verifiedAt: SampleSnapshot.requestDate)
    try workspace.put(newer, now: "2026-11-30T13:00:00Z")
    let old = try Self.oldFile(in: workspace)
    let moved = try workspace.run("relocate", ["--from", old] + (json ? ["--json"] : []))
    #expect(moved.status == 0, "\(moved.stderr)")
    if json {
      let object = try moved.json()
      #expect(object["outcome"] as? String == "moved")
      #expect(object["snapshotsMoved"] as? Int == 1)
      #expect(object["snapshotsKept"] as? Int == 1)
      #expect(object["purchasesMoved"] as? Int == 0)
      #expect(object["mergedEarlier"] as? Bool == false)
    } else {
      #expect(moved.stdout.contains("snapshots moved  1\n"), "\(moved.stdout)")
      #expect(moved.stdout.contains("snapshots kept   1 "), "\(moved.stdout)")
      #expect(moved.stdout.contains("purchases moved  0\n"), "\(moved.stdout)")
    }
    #expect(!FileManager.default.fileExists(atPath: old))
    let (_, b) = try workspace.check(user: SampleScope.userB, now: "2026-11-30T12:30:00Z")
    #expect(b["state"] as? String == "granted")
    let evidence = try #require(b["evidence"] as? [String: Any])
    #expect(evidence["storedAt"] as? String == SampleSnapshot.requestDate)

    let again = try workspace.run("relocate", ["--from", old] + (json ? ["--json"] : []))
    #expect(again.status == 0)
    #expect(
      json
        ? (try again.json()["outcome"] as? String == "nothingToMove")
        : again.stdout == "Nothing to move: no file at \(old)\n")
  }

  @Test func theDatabaseItselfIsAUsageErrorAndChangesNothing() throws {
    let workspace = try Workspace()
    try workspace.put()
    let before = try workspace.logicalState()
    let result = try workspace.run("relocate", ["--from", workspace.db])
    #expect(result.status == 2)
    #expect(result.stderr.contains("is the database itself"), "\(result.stderr)")
    #expect(try workspace.logicalState() == before)
    #expect(try workspace.run("relocate").status == 2)
  }

  @Test func aDamagedOldFileIsAStorageErrorAndStaysAsItIs() throws {
    let workspace = try Workspace()
    try workspace.put()
    let old = workspace.directory.path("damaged.sqlite")
    let garbage = Data(repeating: 0x41, count: 4_096)
    try garbage.write(to: URL(fileURLWithPath: old))
    let before = try workspace.logicalState()
    let result = try workspace.run("relocate", ["--from", old])
    #expect(result.status == 3)
    #expect(result.stderr.contains("damaged"), "\(result.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: old)) == garbage)
    #expect(try workspace.logicalState() == before)
  }
}
