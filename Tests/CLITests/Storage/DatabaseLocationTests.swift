import Foundation
import TestSupport
import Testing

/// Where the database is without `--db`.
@Suite struct DatabaseLocationTests {
  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  private func put(_ environment: [String: String]) throws -> CLIResult {
    try CLI.run(
      ["put"] + Sample.scope() + ["--now", SampleSnapshot.requestDate], in: directory.path,
      stdin: SampleSnapshot.json, environment: environment)
  }

  @Test func homeIsTheLastResortAndItsDirectoryIsCreatedPrivately() throws {
    let result = try put([:])
    #expect(result.status == 0, "\(result.stderr)")
    let path = directory.path(".local/share/entitlement-cache/cache.sqlite")
    #expect(FileManager.default.fileExists(atPath: path))
    let attributes = try FileManager.default.attributesOfItem(
      atPath: directory.path(".local/share/entitlement-cache"))
    #expect((attributes[.posixPermissions] as? Int) == 0o700)
    let file = try FileManager.default.attributesOfItem(atPath: path)
    #expect((file[.posixPermissions] as? Int) == 0o600)
    let check = try CLI.run(
      ["check"] + Sample.scope() + ["--entitlement", "pro", "--now", SampleSnapshot.requestDate],
      in: directory.path)
    #expect(check.status == 0)
  }

  @Test func xdgDataHomeComesBeforeHome() throws {
    let xdg = directory.path("xdg")
    #expect(try put(["XDG_DATA_HOME": xdg]).status == 0)
    #expect(FileManager.default.fileExists(atPath: xdg + "/entitlement-cache/cache.sqlite"))
    #expect(!FileManager.default.fileExists(atPath: directory.path(".local")))
    // The XDG spec says to ignore a relative value.
    #expect(try put(["XDG_DATA_HOME": "relative/xdg"]).status == 0)
    #expect(
      FileManager.default.fileExists(
        atPath: directory.path(".local/share/entitlement-cache/cache.sqlite")))
  }

  @Test func theEnvironmentVariableComesFirstAndDbBeforeIt() throws {
    let named = directory.path("named.sqlite")
    #expect(
      try put(["ENTITLEMENT_CACHE_DB": named, "XDG_DATA_HOME": directory.path("xdg")]).status == 0)
    #expect(FileManager.default.fileExists(atPath: named))
    #expect(!FileManager.default.fileExists(atPath: directory.path("xdg")))
    let flag = directory.path("flag.sqlite")
    let result = try CLI.run(
      ["scopes", "--db", flag], in: directory.path, environment: ["ENTITLEMENT_CACHE_DB": named])
    #expect(result.stderr == "error: \(flag): no such database\n")
  }

  @Test func readingTheDefaultCreatesNothing() throws {
    let result = try CLI.run(
      ["check"] + Sample.scope() + ["--entitlement", "pro"], in: directory.path)
    #expect(result.status == 3)
    #expect(
      result.stderr
        == "error: \(directory.path(".local/share/entitlement-cache/cache.sqlite")): no such database\n"
    )
    #expect(!FileManager.default.fileExists(atPath: directory.path(".local")))
  }

  @Test func aNamedPathInAMissingDirectoryIsAnError() throws {
    let path = directory.path("missing/cache.sqlite")
    let result = try CLI.run(
      ["put", "--db", path] + Sample.scope(), in: directory.path, stdin: SampleSnapshot.json)
    #expect(result.status == 3)
    #expect(
      result.stderr
        == "error: \(path): the directory \(directory.path("missing")) does not exist; the tool "
        + "creates the database file, not the directories above it\n")
  }
}
