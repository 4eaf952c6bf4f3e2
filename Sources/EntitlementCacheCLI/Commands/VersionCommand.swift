import EntitlementCache

/// `version` (also `--version`): the tool's version, the schema it writes, and its SQLite.
enum VersionCommand: Command {
  static let spec = CommandSpec(
    name: "version",
    summary: "the tool's version, the schema version it writes, and the SQLite it runs on",
    usage: "version [--json]",
    discussion: """
      Also `entitlement-cache --version`. A file written by a newer schema version than this
      one is never changed by this build; doctor shows a file's own version.
      """,
    flags: [CommonFlags.json],
    examples: ["entitlement-cache --version"])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    invocation.emit(
      text: "entitlement-cache \(PackageVersion.version) (schema version "
        + "\(PackageVersion.schemaVersion), SQLite \(PackageVersion.sqliteVersion))\n",
      json: .object([
        ("version", .string(PackageVersion.version)),
        ("schemaVersion", .integer(PackageVersion.schemaVersion)),
        ("sqliteVersion", .string(PackageVersion.sqliteVersion)),
      ]))
    return .success
  }
}
