import EntitlementCache

/// `doctor`: the file's health, read without changing anything.
enum DoctorCommand: Command {
  static let spec = CommandSpec(
    name: "doctor",
    summary: "integrity check, schema version, page and file sizes, scope count",
    usage: "doctor [options]",
    discussion: """
      Opens the file read-only and never changes it. Exit status 3 when the file is
      damaged, is not a database, or was written by a newer schema than this build knows.
      """,
    flags: CommonFlags.general,
    notes: [CommonFlags.databaseNote],
    examples: ["entitlement-cache doctor --db cache.sqlite"])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let (path, _) = try invocation.databasePath()
    let health: DatabaseHealth
    do {
      health = try CacheInspector.health(path: path)
    } catch {
      throw CLIError(error, path: path)
    }
    invocation.emit(text: text(health, path: path), json: json(health, path: path))
    return health.isHealthy ? .success : .storage
  }

  private static func json(_ health: DatabaseHealth, path: String) -> JSONOutput {
    .object([
      ("path", .string(path)),
      ("healthy", .bool(health.isHealthy)),
      ("integrity", .array(health.integrity.map(JSONOutput.string))),
      ("schemaVersion", .integer(health.schemaVersion)),
      ("supportedSchemaVersion", .integer(health.supportedSchemaVersion)),
      ("journalMode", .string(health.journalMode)),
      ("pageSize", .integer(health.pageSize)),
      ("pageCount", .integer(health.pageCount)),
      ("freelistCount", .integer(health.freelistCount)),
      ("fileSize", .integer(health.fileSize)),
      ("walSize", .integer(health.walSize)),
      ("scopeCount", health.scopeCount.map(JSONOutput.integer) ?? .null),
    ])
  }

  private static func text(_ health: DatabaseHealth, path: String) -> String {
    var verdict = health.isHealthy ? "healthy" : "DAMAGED"
    if health.schemaVersion > health.supportedSchemaVersion {
      verdict = "written by a newer schema than this build knows"
    }
    var rows: [[String]] = []
    for (index, line) in health.integrity.prefix(10).enumerated() {
      rows.append([index == 0 ? "integrity" : "", line])
    }
    if health.integrity.count > 10 {
      rows.append(["", "… \(health.integrity.count - 10) more (see --json)"])
    }
    rows += [
      [
        "schema version",
        "\(health.schemaVersion) (this build writes \(health.supportedSchemaVersion))",
      ],
      ["journal mode", health.journalMode],
      [
        "pages",
        "\(TextOutput.count(health.pageCount)) × \(TextOutput.count(health.pageSize)) B, "
          + "\(TextOutput.count(health.freelistCount)) free",
      ],
      ["file size", exactSize(health.fileSize)],
      ["WAL size", exactSize(health.walSize)],
      ["scopes", health.scopeCount.map(TextOutput.count) ?? "unreadable"],
    ]
    return "\(path): \(verdict)\n" + TextOutput.table(rows, indent: "  ")
  }

  /// `20.0 KiB (20,480 B)`, or `0 B` when there is nothing to round.
  private static func exactSize(_ bytes: Int) -> String {
    bytes < 1024
      ? TextOutput.size(bytes) : "\(TextOutput.size(bytes)) (\(TextOutput.count(bytes)) B)"
  }
}
