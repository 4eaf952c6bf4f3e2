import Foundation
import TestSupport
import Testing

/// A database the tool may read but not write.
///
/// CI runs as root, for whom `chmod` blocks nothing. The test then runs the tool as the
/// unprivileged `nobody` (uid 65534) through `setpriv`, so the file's mode really applies; as
/// any other user, the mode applies directly. Before trusting the result, the test proves
/// that the tool's user cannot write the file, so it cannot pass by accident.
@Suite struct ReadOnlyFileTests {
  /// The command prefix that runs the tool as a user the file's mode binds.
  private static func unprivilegedPrefix() -> [String]? {
    guard getuid() == 0 else { return [] }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first {
      FileManager.default.isExecutableFile(atPath: $0)
    }
    return setpriv.map { [$0, "--reuid=65534", "--regid=65534", "--clear-groups"] }
  }

  @Test func writesFailWithOneLineAndChangeNothing() throws {
    let prefix = try #require(
      Self.unprivilegedPrefix(), "running as root without setpriv: cannot drop privileges")
    let workspace = try Workspace()
    try workspace.put()
    let directory = workspace.directory.path
    let db = workspace.db
    // The directory stays writable for the tool's user (SQLite creates -shm beside the
    // file to read it), the file does not.
    if getuid() == 0 {
      #expect(chown(directory, 65534, 65534) == 0)
    }
    #expect(chmod(db, 0o444) == 0)
    let before = try #require(FileManager.default.contents(atPath: db))

    // Precondition: the tool's user really cannot open the file for writing.
    let probe = try CLI.run(
      ["-c", "exec 3>>\"$0\"", db], in: directory, prefix: prefix + ["/bin/sh"], binaryless: true)
    #expect(probe.status != 0, "the file is writable by the tool's user; the test proves nothing")

    // A copy the unprivileged user can execute wherever the build directory is.
    let tool = workspace.directory.path("entitlement-cache")
    try FileManager.default.copyItem(atPath: CLI.binary, toPath: tool)
    func run(_ arguments: [String], stdin: String? = nil) throws -> CLIResult {
      try CLI.run(arguments, in: directory, stdin: stdin, prefix: prefix + [tool], binaryless: true)
    }
    let put = try run(
      ["put", "--db", db] + Sample.scope() + ["--now", "2026-11-30T13:00:00Z"],
      stdin: SampleSnapshot.json)
    #expect(put.status == 3)
    #expect(put.stdout.isEmpty)
    #expect(
      put.stderr == "error: \(db): not writable, so the tool cannot store snapshot\n")
    let failed = try run(["refresh-failed", "--db", db] + Sample.scope())
    #expect(failed.status == 3)
    #expect(
      failed.stderr
        == "error: \(db): not writable, so the tool cannot record refresh failure\n")
    let purge = try run(["purge", "--db", db] + Sample.scope())
    #expect(purge.status == 3)
    #expect(purge.stderr.hasPrefix("error: \(db): "))

    // Reading still works, and the snapshot is the one stored before.
    let check = try run(
      ["check", "--db", db] + Sample.scope() + [
        "--entitlement", "pro", "--now", "2026-11-30T12:01:00Z", "--json",
      ])
    #expect(check.status == 0, "\(check.stderr)")
    #expect(
      (try check.json()["evidence"] as? [String: Any])?["storedAt"] as? String
        == SampleSnapshot.requestDate
    )
    #expect(FileManager.default.contents(atPath: db) == before)
  }
}
