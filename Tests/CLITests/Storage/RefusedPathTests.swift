import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A database the system refuses to show this user is never called missing: every command
/// tells "not there" (`ENOENT` on the file itself) from "there but refused" (a folder without
/// search permission, links that loop), as <doc:Reliability> documents.
@Suite struct RefusedPathTests {
  /// Where `runuser` is, when this process may use it: as root on Linux. The suite runs as
  /// root, which permissions do not stop, so the refused folder is tried as `nobody`.
  static let runuser: String? = {
    guard getuid() == 0, getpwnam("nobody") != nil else { return nil }
    return ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
  }()

  /// Whether `nobody` can run a copy of the tool here at all (its libraries, the temporary
  /// folder): otherwise the test would fail for its set-up, not for the tool.
  static let nobodyRunsTheTool: Bool = {
    guard let runuser, let directory = try? TemporaryDirectory() else { return false }
    let tool = directory.path("entitlement-cache")
    guard (try? FileManager.default.copyItem(atPath: CLI.binary, toPath: tool)) != nil,
      (try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool))
        != nil,
      (try? FileManager.default.setAttributes(
        [.posixPermissions: 0o755], ofItemAtPath: directory.path)) != nil
    else { return false }
    let probe = try? CLI.run(
      ["version"], in: directory.path, prefix: [runuser, "-u", "nobody", "--", tool],
      binaryless: true)
    return probe?.status == 0
  }()

  /// Every command that opens the database, with the flags it needs beyond `--db`.
  static let commands: [[String]] = [
    ["check"] + Sample.scope() + ["--entitlement", "pro"], ["show"] + Sample.scope(),
    ["scopes"], ["doctor"], ["queue"], ["purge"] + Sample.scope(),
    ["refresh-failed"] + Sample.scope(), ["put"] + Sample.scope() + ["--file", "snapshot.json"],
    ["import"] + Sample.scope() + ["--file", "snapshot.json"],
    ["relocate", "--from", "elsewhere.sqlite"],
  ]

  @Test(
    "a folder this user cannot enter is refused, not missing, by every command",
    .enabled(
      if: nobodyRunsTheTool,
      "needs root, runuser, and a tool the user nobody can run from the temporary folder"))
  func aFolderWithoutSearchPermission() throws {
    let workspace = try Workspace()
    let directory = workspace.directory.path
    // The tool is copied where nobody may run it: the build folder may be in root's home.
    let tool = workspace.directory.path("entitlement-cache")
    try FileManager.default.copyItem(atPath: CLI.binary, toPath: tool)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
    let box = workspace.directory.path("box")
    try FileManager.default.createDirectory(atPath: box, withIntermediateDirectories: false)
    let db = box + "/cache.sqlite"
    #expect(
      try CLI.run(["put", "--db", db] + Sample.scope(), in: directory, stdin: SampleSnapshot.json)
        .status == 0)
    let snapshot = workspace.directory.path("snapshot.json")
    try Data(SampleSnapshot.json.utf8).write(to: URL(fileURLWithPath: snapshot))
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: snapshot)
    let nobody = try #require(getpwnam("nobody")).pointee.pw_uid
    for path in [box, db] { #expect(chown(path, nobody, gid_t(0)) == 0) }
    // Its owner may not search it: nothing inside can be seen, not even whether it exists.
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: box)
    let before = try Data(contentsOf: URL(fileURLWithPath: db))

    let runuser = try #require(Self.runuser)
    for command in Self.commands {
      let result = try CLI.run(
        [command[0], "--db", db] + command.dropFirst(), in: directory,
        prefix: [runuser, "-u", "nobody", "--", tool], binaryless: true)
      #expect(result.status == 3, "\(command[0]): \(result.stderr)")
      #expect(result.stderr.contains("cannot be opened now"), "\(command[0]): \(result.stderr)")
      #expect(result.stderr.contains("not damaged"), "\(command[0]): \(result.stderr)")
      #expect(!result.stderr.contains("no such database"), "\(command[0]): \(result.stderr)")
    }
    // A file to move that is in that folder is refused too, and named: not the database.
    let mine = workspace.directory.path("mine")
    try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: false)
    #expect(chown(mine, nobody, gid_t(0)) == 0)
    let move = try CLI.run(
      ["relocate", "--db", mine + "/cache.sqlite", "--from", db], in: directory,
      prefix: [runuser, "-u", "nobody", "--", tool], binaryless: true)
    #expect(move.status == 3, "\(move.stderr)")
    #expect(move.stderr.hasPrefix("error: \(db): cannot be opened now"), "\(move.stderr)")
    // A file that is really not there, in a folder nobody may enter, is still missing.
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: box)
    let missing = try CLI.run(
      ["check", "--db", box + "/other.sqlite"] + Sample.scope() + ["--entitlement", "pro"],
      in: directory, prefix: [runuser, "-u", "nobody", "--", tool], binaryless: true)
    #expect(missing.status == 3)
    #expect(missing.stderr.contains("no such database"), "\(missing.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before)
    #expect(try FileManager.default.contentsOfDirectory(atPath: box) == ["cache.sqlite"])
  }

  @Test("links that loop are refused, not missing, by every command")
  func linksThatLoop() throws {
    let workspace = try Workspace()
    let loop = workspace.directory.path("loop.sqlite")
    try FileManager.default.createSymbolicLink(atPath: workspace.db, withDestinationPath: loop)
    try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: workspace.db)
    try Data(SampleSnapshot.json.utf8).write(
      to: URL(fileURLWithPath: workspace.directory.path("snapshot.json")))
    for command in Self.commands {
      let result = try workspace.run(command[0], Array(command.dropFirst()))
      #expect(result.status == 3, "\(command[0]): \(result.stderr)")
      #expect(result.stderr.contains("symbolic links loop"), "\(command[0]): \(result.stderr)")
      #expect(!result.stderr.contains("no such database"), "\(command[0]): \(result.stderr)")
    }
  }
}
