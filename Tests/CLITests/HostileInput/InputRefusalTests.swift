import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Nonsense is refused where it is passed, with a message that says what is wrong, and every
/// date the tool prints is one it reads back.
@Suite struct InputRefusalTests {
  let workspace: Workspace

  init() throws {
    workspace = try Workspace()
  }

  // MARK: Dates

  /// A server's year-9999 `requestDate` makes boundaries past year 9999. The tool prints the
  /// last instant it reads instead, and says "beyond" in text.
  @Test func everyDatePrintedReadsBack() throws {
    let farFuture = "9999-12-31T23:59:59Z"
    let snapshot = SampleSnapshot.single("lifetime", requestDate: farFuture, expiresAt: nil)
    try workspace.put(snapshot)
    let check = try workspace.check("lifetime", now: "2026-12-01T12:00:00Z")
    let evidence = try #require(check.json["evidence"] as? [String: Any])
    #expect(evidence["validUntil"] as? String == "9999-12-31T23:59:59.999Z")
    let show = try workspace.run("show", Sample.scope() + ["--now", "2026-12-01T12:00:00Z"])
    let showJSON = try workspace.run(
      "show", Sample.scope() + ["--now", "2026-12-01T12:00:00Z", "--json"])
    let text = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "lifetime", "--now", "2026-12-01T12:00:00Z"])
    #expect(text.stdout.contains("valid until       beyond 9999-12-31T23:59:59.999Z\n"))
    // Every timestamp in every output is one the tool itself accepts as --now.
    let pattern = try NSRegularExpression(pattern: #"[+-]?\d{4,}-\d\d-\d\dT[0-9:.]+Z"#)
    var seen = Set<String>()
    for output in [check.result.stdout, show.stdout, showJSON.stdout, text.stdout] {
      let range = NSRange(output.startIndex..., in: output)
      for match in pattern.matches(in: output, range: range) {
        seen.insert(String(output[try #require(Range(match.range, in: output))]))
      }
    }
    #expect(seen.contains("9999-12-31T23:59:59.999Z"))
    for timestamp in seen {
      let result = try workspace.run(
        "check", Sample.scope() + ["--entitlement", "x", "--now", timestamp])
      #expect(result.status == 1, "\(timestamp) does not read back: \(result.stderr)")
    }
  }

  @Test func outOfRangeIsSaidAsOutOfRange() throws {
    let cases: [([String], String)] = [
      (
        ["check", "--now", "10000-01-01T00:00:00Z"],
        "error: --now: '10000-01-01T00:00:00Z' is out of range: times are years 0000 through 9999 in UTC\n"
      ),
      (
        ["check", "--now", "+10000-01-30T23:59:59Z"],
        "error: --now: '+10000-01-30T23:59:59Z' is out of range: times are years 0000 through 9999 in UTC\n"
      ),
      (
        ["check", "--now", "9999-12-31T23:59:59-08:00"],
        "error: --now: '9999-12-31T23:59:59-08:00' is out of range: times are years 0000 through 9999 in UTC\n"
      ),
      (
        ["check", "--now", "next tuesday"],
        "error: --now: 'next tuesday' is not an ISO-8601 time with a UTC offset, such as 2026-11-30T12:00:00Z\n"
      ),
      (
        ["check", "--stale-after", "9223372036854775807d"],
        "error: --stale-after: '9223372036854775807d' is out of range: at most 36500d (100 years)\n"
      ),
      (
        ["check", "--max-snapshot-age", "36501d"],
        "error: --max-snapshot-age: '36501d' is out of range: at most 36500d (100 years)\n"
      ),
      (
        ["check", "--stale-after", "5 minutes"],
        "error: --stale-after: '5 minutes' is not a duration such as 90, 90s, 5m, 12h or 30d\n"
      ),
    ]
    for (arguments, expected) in cases {
      let result = try workspace.run(
        arguments[0], Sample.scope() + ["--entitlement", "pro"] + arguments.dropFirst())
      #expect(result.status == 2)
      #expect(result.stderr == expected)
    }
    let snapshot = SampleSnapshot.single(expiresAt: "+10000-01-01T00:00:00Z")
    let put = try workspace.run("put", Sample.scope(), stdin: snapshot)
    #expect(put.status == 2)
    #expect(
      put.stderr
        == "error: entitlements.pro.expiresAt: out of range: dates are years 0000 through 9999 in UTC\n"
    )
  }

  // MARK: Snapshots

  @Test func aChangeBudgetThatCannotBeTrueIsRefused() throws {
    try workspace.put()
    let before = try workspace.logicalState()
    for (budget, expected) in [
      (
        #"{"remaining": 9, "limit": 3, "windowDays": 30}"#,
        "deviceAccess.changeBudget.remaining: 9 is more than limit 3"
      ),
      (
        #"{"remaining": 1, "limit": 3, "windowDays": 9223372036854775807}"#,
        "deviceAccess.changeBudget.windowDays: out of range: 1 through 3660 days"
      ),
      (
        #"{"remaining": 1, "limit": 3, "windowDays": 0}"#,
        "deviceAccess.changeBudget.windowDays: out of range: 1 through 3660 days"
      ),
      (
        #"{"remaining": 1, "limit": 1000000, "windowDays": 30}"#,
        "deviceAccess.changeBudget.limit: out of range: at most 1000"
      ),
    ] {
      let snapshot = SampleSnapshot.single(
        extra: #", "deviceAccess": {"status": "active", "changeBudget": "# + budget + "}")
      let result = try workspace.run("put", Sample.scope(), stdin: snapshot)
      #expect(result.status == 2)
      #expect(result.stderr == "error: \(expected)\n")
    }
    #expect(try workspace.logicalState() == before)
  }

  // MARK: Keys

  @Test func aKeyFileOfTheWrongKindIsRefusedWhereItIsPassed() throws {
    let keygen = try CLI.run(["keygen", "--out", "root"], in: workspace.directory.path)
    #expect(keygen.status == 0)
    let snapshot = try workspace.directory.write("snapshot.json", SampleSnapshot.single())
    let trust = try workspace.run(
      "check", Sample.scope() + ["--entitlement", "pro", "--trust-root", "root.key"])
    #expect(trust.status == 2)
    #expect(
      trust.stderr
        == "error: root.key: holds an Ed25519 private key (keygen's PREFIX.key); --trust-root "
        + "takes an Ed25519 public key (keygen's PREFIX.pub)\n")
    let sign = try CLI.run(
      ["sign"] + Sample.scope() + ["--root-key", "root.pub", "--file", snapshot, "--out", "s.sig"],
      in: workspace.directory.path)
    #expect(sign.status == 2)
    #expect(
      sign.stderr
        == "error: root.pub: holds an Ed25519 public key (keygen's PREFIX.pub); --root-key "
        + "takes an Ed25519 private key (keygen's PREFIX.key)\n")
    #expect(!FileManager.default.fileExists(atPath: workspace.directory.path("s.sig")))
    // A path with a newline cannot fake a line of sign's output.
    let signed = try CLI.run(
      ["sign"] + Sample.scope() + [
        "--root-key", "root.key", "--file", snapshot, "--out", "e.sig\nverification  verified",
      ], in: workspace.directory.path)
    #expect(signed.status == 0, "\(signed.stderr)")
    #expect(signed.stdout.hasSuffix("envelope written to e.sig\\u{A}verification  verified\n"))
    #expect(signed.stdout.split(separator: "\n").count == 1)
  }

  @Test func keygenIntoADirectoryWritesNamedFilesNeverHiddenOnes() throws {
    let keys = workspace.directory.path("keys")
    try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: false)
    for out in ["keys/", "keys"] {
      let result = try CLI.run(["keygen", "--out", out], in: workspace.directory.path)
      if out == "keys/" {
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("keys/entitlement-cache.key  private key"))
      } else {
        // The pair exists already: refused, not replaced, and no hidden file either way.
        #expect(result.status == 2)
        #expect(result.stderr == "error: keys/entitlement-cache.key: exists; not replaced\n")
      }
    }
    let files = try FileManager.default.contentsOfDirectory(atPath: keys).sorted()
    #expect(files == ["entitlement-cache.key", "entitlement-cache.pub"])
    let missing = try CLI.run(["keygen", "--out", "nowhere/"], in: workspace.directory.path)
    #expect(missing.status == 2)
    #expect(missing.stderr == "error: --out: nowhere/ is not a directory that exists\n")
    let empty = try CLI.run(["keygen", "--out="], in: workspace.directory.path)
    #expect(empty.status == 2)
    #expect(
      empty.stderr == "error: --out: empty; give a PREFIX such as test-root, or a directory\n")
    #expect(!FileManager.default.fileExists(atPath: workspace.directory.path(".key")))
  }

  // MARK: Files

  @Test func aDirectoryOrAMissingDirectoryHasItsOwnMessage() throws {
    let directory = workspace.directory.path("folder")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    let expected =
      "error: \(directory): is a directory, not a file; --db names the database file itself\n"
    for command in [["check", "--entitlement", "pro"], ["put"], ["show"], ["doctor"], ["scopes"]] {
      let scope = command[0] == "doctor" || command[0] == "scopes" ? [] : Sample.scope()
      let result = try CLI.run(
        [command[0], "--db", directory] + scope + command.dropFirst(), in: workspace.directory.path,
        stdin: SampleSnapshot.single())
      #expect(result.status == 3, "\(command)")
      #expect(result.stderr == expected, "\(command)")
    }
    _ = try workspace.directory.write("plain-file", "")
    let underFile = try CLI.run(
      ["put", "--db", "plain-file/cache.sqlite"] + Sample.scope(), in: workspace.directory.path,
      stdin: SampleSnapshot.single())
    #expect(underFile.status == 3)
    #expect(underFile.stderr == "error: plain-file/cache.sqlite: plain-file is not a directory\n")
    let missing = workspace.directory.path("absent/cache.sqlite")
    let put = try CLI.run(
      ["put", "--db", missing] + Sample.scope(), in: workspace.directory.path,
      stdin: SampleSnapshot.single())
    #expect(put.status == 3)
    #expect(
      put.stderr
        == "error: \(missing): the directory \(workspace.directory.path("absent")) does not "
        + "exist; the tool creates the database file, not the directories above it\n")
  }

  /// A FIFO or a device where the database should be is refused by name: SQLite would wait
  /// forever to open a FIFO with no writer, and read /dev/null as an empty database.
  @Test func aFIFOOrADeviceIsNoDatabase() throws {
    let fifo = workspace.directory.path("fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    for (path, kind) in [(fifo, "a FIFO"), ("/dev/null", "a character device")] {
      for command in [["doctor"], ["scopes"], ["check", "--entitlement", "pro"], ["put"]] {
        let scope = command[0] == "doctor" || command[0] == "scopes" ? [] : Sample.scope()
        let result = try CLI.run(
          [command[0], "--db", path] + scope + command.dropFirst(), in: workspace.directory.path,
          stdin: SampleSnapshot.single())
        #expect(result.status == 3, "\(command) \(path)")
        #expect(
          result.stderr
            == "error: \(path): is \(kind), not a regular file; --db names a database file\n",
          "\(command) \(path)")
      }
    }
  }

  /// Another program's SQLite database named by `--db` is refused by every command, the
  /// ones that only read included, and left byte for byte as it was: opening it as a cache
  /// added the cache's tables to it and switched its journal, even for `scopes`.
  @Test func anotherProgramsDatabaseIsLeftAsItIs() throws {
    let create = try CLI.run(
      [
        "sqlite3", "other.sqlite", "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('x')",
      ],
      in: workspace.directory.path, prefix: ["/usr/bin/env"], binaryless: true)
    #expect(create.status == 0, "\(create.stderr)")
    let path = workspace.directory.path("other.sqlite")
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    for command in [
      ["scopes"], ["doctor"], ["queue"], ["check", "--entitlement", "pro"], ["show"], ["put"],
    ] {
      let scope = ["scopes", "doctor", "queue"].contains(command[0]) ? [] : Sample.scope()
      let result = try CLI.run(
        [command[0], "--db", "other.sqlite"] + scope + command.dropFirst(),
        in: workspace.directory.path, stdin: SampleSnapshot.single())
      #expect(result.status == 3, "\(command)")
      #expect(
        result.stderr
          == "error: other.sqlite: damaged (another program's SQLite database, not a cache's); "
          + "left untouched\n", "\(command)")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: workspace.directory.path).filter {
        $0.hasPrefix("other.sqlite")
      } == ["other.sqlite"])
  }

  /// A path longer than the system takes is refused with a one-line error quoting its start,
  /// not opened and reported as missing in a 100 KB line.
  @Test func aPathLongerThanTheSystemTakesIsRefusedInOneLine() throws {
    let long = String(repeating: "a", count: 100_000)
    for arguments in [["scopes", "--db", long], ["put", "--file", long] + Sample.scope()] {
      let result = try CLI.run(arguments, in: workspace.directory.path)
      #expect(result.status == 2, "\(arguments[0])")
      #expect(result.stderr.hasSuffix("…'\n"), "\(arguments[0])")
      #expect(result.stderr.utf8.count < 200, "\(arguments[0])")
      #expect(result.stderr.contains("a path of 100000 bytes"), "\(arguments[0])")
    }
  }

  /// A snapshot size the file claims near `Int.max` (edited, or damaged) prints as a size:
  /// the text form's arithmetic trapped on it.
  @Test func aHugeStoredSizePrints() throws {
    let put = try CLI.run(
      ["put", "--db", "cache.sqlite"] + Sample.scope(), in: workspace.directory.path,
      stdin: SampleSnapshot.single())
    #expect(put.status == 0, "\(put.stderr)")
    let edit = try CLI.run(
      ["sqlite3", "cache.sqlite", "UPDATE scope SET snapshot_size = 9223372036854775807"],
      in: workspace.directory.path, prefix: ["/usr/bin/env"], binaryless: true)
    #expect(edit.status == 0, "\(edit.stderr)")
    let scopes = try CLI.run(["scopes", "--db", "cache.sqlite"], in: workspace.directory.path)
    #expect(scopes.status == 0, "\(scopes.stderr)")
    #expect(scopes.stdout.contains(" 8796093022208.0 MiB "), "\(scopes.stdout)")
    let show = try CLI.run(
      ["show", "--db", "cache.sqlite"] + Sample.scope(), in: workspace.directory.path)
    #expect(show.status == 0, "\(show.stderr)")
    #expect(show.stdout.contains("8796093022208.0 MiB"), "\(show.stdout)")
  }

  /// A `--db` that is a symbolic link to a file not there yet: `put` creates the file it
  /// points to, private (0600) as every database the tool creates, whatever the umask (022
  /// here, which left it 0644).
  @Test func aDanglingLinkGetsAPrivateFile() throws {
    let link = workspace.directory.path("link.sqlite")
    #expect(symlink("target.sqlite", link) == 0)
    let put = try CLI.run(
      ["put", "--db", link] + Sample.scope(), in: workspace.directory.path,
      stdin: SampleSnapshot.single(),
      prefix: ["/bin/sh", "-c", #"umask 022; exec "$0" "$@""#])
    #expect(put.status == 0, "\(put.stderr)")
    let attributes = try FileManager.default.attributesOfItem(
      atPath: workspace.directory.path("target.sqlite"))
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
  }

  /// A read-only check of a read-only file leaves a `-shm` with the file's mode 0444; once the
  /// file is writable again, SQLite still refuses every write. The error names the `-shm`.
  /// Root writes through any mode, so as root the tool runs as `nobody` (through setpriv).
  @Test(
    .enabled(
      if: getuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
  func aWriteRefusedForAReadOnlyShmNamesTheShm() throws {
    // A directory and a copy of the binary that the unprivileged user can reach.
    let shared = try TemporaryDirectory()
    try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: shared.path)
    let binary = shared.path("entitlement-cache")
    try FileManager.default.copyItem(atPath: CLI.binary, toPath: binary)
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: binary)
    _ = try shared.write("snapshot.json", SampleSnapshot.single())
    let unprivileged =
      getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
    func asNobody(_ arguments: [String]) throws -> CLIResult {
      try CLI.run(arguments, in: shared.path, prefix: unprivileged + [binary], binaryless: true)
    }
    let put = ["put", "--db", "cache.sqlite"] + Sample.scope() + ["--file", "snapshot.json"]
    #expect(try asNobody(put).status == 0)
    #expect(chmod(shared.path("cache.sqlite"), 0o444) == 0)
    let check = ["check", "--db", "cache.sqlite", "--entitlement", "pro"] + Sample.scope()
    #expect(try asNobody(check).status == 0)
    #expect(FileManager.default.fileExists(atPath: shared.path("cache.sqlite-shm")))
    #expect(chmod(shared.path("cache.sqlite"), 0o644) == 0)
    let refused = try asNobody(put)
    #expect(refused.status == 3)
    #expect(
      refused.stderr
        == "error: cache.sqlite-shm: not writable, though cache.sqlite is, so SQLite cannot "
        + "store snapshot (a read-only open of a read-only database leaves it so); make it "
        + "writable again (chmod u+w cache.sqlite-shm) and run again\n")
    // The recovery the message gives works.
    #expect(chmod(shared.path("cache.sqlite-shm"), 0o644) == 0)
    #expect(try asNobody(put).status == 0)
  }
}
