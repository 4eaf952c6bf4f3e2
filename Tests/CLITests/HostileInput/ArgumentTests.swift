import Foundation
import TestSupport
import Testing

/// The command line itself: help, and every way of getting it wrong (exit 2, one line).
@Suite struct ArgumentTests {
  static let commands = [
    "put", "refresh-failed", "check", "show", "scopes", "purge", "doctor", "demo", "simulate",
  ]

  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  private func run(_ arguments: [String]) throws -> CLIResult {
    try CLI.run(arguments, in: directory.path)
  }

  @Test func overviewListsEveryCommand() throws {
    let result = try run(["--help"])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    for command in Self.commands {
      #expect(result.stdout.contains("\n  \(command) "), "missing \(command)")
    }
    #expect(try run(["help"]).stdout == result.stdout)
    #expect(try run(["-h"]).stdout == result.stdout)
  }

  @Test(arguments: commands)
  func everyCommandHasHelpWithAnExample(_ command: String) throws {
    let result = try run([command, "--help"])
    #expect(result.status == 0)
    #expect(result.stdout.hasPrefix("entitlement-cache \(command) — "))
    #expect(result.stdout.contains("Usage: entitlement-cache \(command)"))
    #expect(result.stdout.contains("Example"))
    #expect(result.stdout.contains("\n  entitlement-cache \(command)"))
    #expect(try run(["help", command]).stdout == result.stdout)
    // Help after valid flags still shows help and runs nothing.
    #expect(try run([command, "--json", "-h"]).stdout == result.stdout)
  }

  @Test func noCommandIsAUsageError() throws {
    let result = try run([])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr == "error: no command given; try 'entitlement-cache --help'\n")
  }

  @Test func unknownCommandSuggestsTheNearest() throws {
    let result = try run(["chek"])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr == "error: unknown command 'chek'; did you mean 'check'?\n")
    #expect(try run(["refresh"]).stderr.contains("did you mean 'refresh-failed'?"))
    let far = try run(["frobnicate"])
    #expect(far.status == 2)
    #expect(far.stderr == "error: unknown command 'frobnicate'; try 'entitlement-cache --help'\n")
    #expect(try run(["help", "shwo"]).stderr.contains("did you mean 'show'?"))
  }

  @Test func unknownFlagSuggestsTheNearest() throws {
    let result = try run(["check", "--entitelment", "pro"])
    #expect(result.status == 2)
    #expect(result.stdout.isEmpty)
    #expect(
      result.stderr == "error: check: unknown flag --entitelment; did you mean --entitlement?\n")
    #expect(try run(["show", "--jsn"]).stderr.contains("did you mean --json?"))
    #expect(try run(["put", "--sdkkey", "k"]).stderr.contains("did you mean --sdk-key?"))
    let far = try run(["scopes", "--frobnicate"])
    #expect(
      far.stderr
        == "error: scopes: unknown flag --frobnicate; see 'entitlement-cache scopes --help'\n")
    // A flag of another command is unknown here.
    #expect(try run(["doctor", "--entitlement", "pro"]).status == 2)
  }

  @Test func malformedFlagsAreRejected() throws {
    let cases: [([String], String)] = [
      (
        ["check", "--entitlement"],
        "error: check: --entitlement needs a value (--entitlement KEY)\n"
      ),
      (["check", "--json=yes"], "error: check: --json takes no value\n"),
      (["check", "--json", "--json"], "error: check: --json given more than once\n"),
      (["check", "pro"], "error: check: unexpected argument 'pro'\n"),
      (["check", "-x"], "error: check: unexpected argument '-x'\n"),
      (["--json"], "error: --json must follow a command; try 'entitlement-cache --help'\n"),
      (
        ["check", "--entitlement", "--json"],
        "error: check: --entitlement needs a value (--entitlement KEY)\n"
      ),
    ]
    for (arguments, expected) in cases {
      let result = try run(arguments)
      #expect(result.status == 2, "\(arguments)")
      #expect(result.stderr == expected, "\(arguments)")
      #expect(result.stdout.isEmpty)
    }
  }

  @Test func badValuesAreUsageErrors() throws {
    let db = directory.path("cache.sqlite")
    let base = ["check", "--db", db] + Sample.scope() + ["--entitlement", "pro"]
    let cases: [([String], String)] = [
      (
        ["--now", "2026-11-30"],
        "error: --now: '2026-11-30' is not an ISO-8601 time with a UTC offset, such as 2026-11-30T12:00:00Z\n"
      ),
      (["--now", "2026-11-30T12:00:00"], "is not an ISO-8601 time"),
      (["--now", "2026-02-30T12:00:00Z"], "is not an ISO-8601 time"),
      (
        ["--stale-after", "5x"],
        "error: --stale-after: '5x' is not a duration such as 90, 90s, 5m, 12h or 30d\n"
      ),
      (["--stale-after", "-5m"], "is not a duration"),
      (["--max-snapshot-age", "1.5h"], "is not a duration"),
      (["--non-expiring-max-offline-age", "d"], "is not a duration"),
      (["--max-snapshot-age", "99999999999999d"], "is out of range: at most 36500d (100 years)"),
      (["--policy", "lax"], "error: --policy: 'lax' is not conservative or server-snapshot\n"),
    ]
    for (extra, expected) in cases {
      let result = try run(base + extra)
      #expect(result.status == 2, "\(extra)")
      if expected.hasSuffix("\n") {
        #expect(result.stderr == expected)
      } else {
        #expect(result.stderr.hasPrefix("error: ") && result.stderr.contains(expected))
        #expect(result.stderr.filter { $0 == "\n" }.count == 1)
      }
    }
    // Nothing was created by a rejected command.
    #expect(!FileManager.default.fileExists(atPath: db))
  }

  @Test func scopeFlagsAreValidated() throws {
    let missing = try run(["check", "--sdk-key", "k", "--entitlement", "pro"])
    #expect(missing.status == 2)
    #expect(
      missing.stderr
        == "error: check: missing --installation I, --environment E, --user U (a scope is "
        + "--sdk-key K --installation I --environment production|sandbox|local --user U)\n")
    let environment = try run(
      [
        "check", "--sdk-key", "k", "--installation", "i", "--environment", "prod", "--user", "u",
        "--entitlement", "pro",
      ])
    #expect(environment.status == 2)
    #expect(
      environment.stderr
        == "error: check: invalid scope: environment must be production, sandbox or local\n")
    let empty = try run(
      ["show", "--sdk-key", "k", "--installation", "i", "--environment", "local", "--user", ""])
    #expect(empty.stderr == "error: show: invalid scope: app-user ID is empty\n")
    #expect(
      try run(["check"] + Sample.scope()).stderr == "error: check: missing --entitlement KEY\n")
    #expect(
      try run(["check"] + Sample.scope() + ["--entitlement", ""]).stderr
        == "error: --entitlement: empty; give the entitlement's key, such as pro\n")
  }

  @Test func flagValuesMayUseEquals() throws {
    let db = directory.path("cache.sqlite")
    let put = try CLI.run(
      [
        "put", "--db=\(db)", "--sdk-key=k", "--installation=i", "--environment=local", "--user=u",
        "--now=2026-11-30T12:00:00Z",
      ], in: directory.path, stdin: SampleSnapshot.json)
    #expect(put.status == 0, "\(put.stderr)")
  }
}
