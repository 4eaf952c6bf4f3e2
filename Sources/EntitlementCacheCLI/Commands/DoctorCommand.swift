import EntitlementCache

/// `doctor`: the file's health, read without changing anything.
enum DoctorCommand: Command {
  static let spec = CommandSpec(
    name: "doctor",
    summary: "integrity check, schema version, page and file sizes, scope and purchase counts",
    usage: "doctor [options]",
    discussion: """
      Opens the file read-only and never changes it. Exit status 3 when the file is
      damaged, is not a database, has tables another tool changed so that a statement of
      the cache no longer prepares (each is named), or was written by a newer schema than
      this build reads (a newer schema whose read floor this build meets is healthy).
      SQLite keeps its -shm index and an empty -wal beside a file read this way; the
      next process that opens it read-write removes them when it closes.
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
      ("schemaProblems", .array(health.schemaProblems.map(JSONOutput.string))),
      ("schemaVersion", .integer(health.schemaVersion)),
      ("supportedSchemaVersion", .integer(health.supportedSchemaVersion)),
      ("readableFromSchemaVersion", health.readableFrom.map(JSONOutput.integer) ?? .null),
      ("journalMode", .string(health.journalMode)),
      ("pageSize", .integer(health.pageSize)),
      ("pageCount", .integer(health.pageCount)),
      ("freelistCount", .integer(health.freelistCount)),
      ("fileSize", .integer(health.fileSize)),
      ("walSize", .integer(health.walSize)),
      ("scopeCount", health.scopeCount.map(JSONOutput.integer) ?? .null),
      ("purchasesByState", health.purchaseCounts.map(purchasesByState) ?? .null),
      ("scopesByVerification", health.verificationCounts.map(verificationJSON) ?? .null),
    ])
  }

  /// Every state, zero included, so a script reads the same keys from every file.
  private static func purchasesByState(_ counts: [PurchaseState: Int]) -> JSONOutput {
    .object(PurchaseState.allCases.map { ($0.rawValue, .integer(counts[$0] ?? 0)) })
  }

  /// `2 verified, 1 failed (tampered), 1 unchecked`: each verdict recorded when a snapshot
  /// was stored, verified first; unchecked ones were stored without trust roots.
  private static func verification(_ counts: [TrustVerdict?: Int]) -> String {
    let ordered = counts.sorted { lhs, rhs in
      Self.order(lhs.key) < Self.order(rhs.key)
    }
    return ordered.map { verdict, count in
      "\(TextOutput.count(count)) \(verdict?.description ?? "unchecked")"
    }.joined(separator: ", ")
  }

  private static func order(_ verdict: TrustVerdict?) -> String {
    switch verdict {
    case .verified?: "0"
    case .failed(let reason)?: "1" + reason.rawValue
    case nil: "2"
    }
  }

  /// Every verdict with a count, for scripts: `verified`, `failed:REASON`, `unchecked`.
  private static func verificationJSON(_ counts: [TrustVerdict?: Int]) -> JSONOutput {
    .object(
      counts.sorted { order($0.key) < order($1.key) }.map { verdict, count in
        let key: String =
          switch verdict {
          case .verified?: "verified"
          case .failed(let reason)?: "failed:" + reason.rawValue
          case nil: "unchecked"
          }
        return (key, .integer(count))
      })
  }

  /// `3 (1 pending, 2 synced)`: the total, then each state that has entries, in the order an
  /// entry moves through them; `0`; or `unreadable`.
  private static func purchases(_ counts: [PurchaseState: Int]?) -> String {
    guard let counts else { return "unreadable" }
    let total = counts.values.reduce(0, +)
    guard total > 0 else { return "0" }
    let parts = PurchaseState.allCases.compactMap { state -> String? in
      guard let count = counts[state], count > 0 else { return nil }
      return "\(TextOutput.count(count)) \(state.rawValue)"
    }
    return "\(TextOutput.count(total)) (\(parts.joined(separator: ", ")))"
  }

  private static func text(_ health: DatabaseHealth, path: String) -> String {
    var verdict = health.isHealthy ? "healthy" : "DAMAGED"
    if health.integrity == ["ok"], !health.schemaProblems.isEmpty {
      verdict = "DAMAGED: another tool changed its tables, and this build cannot use them"
    }
    if health.isHealthy, health.schemaVersion == 0, health.pageCount == 0 {
      verdict = "empty: no cache has been written to it yet (an app opening it creates its tables)"
    }
    if health.schemaVersion > health.supportedSchemaVersion {
      verdict =
        health.isReadable
        ? (health.integrity == ["ok"]
          ? "healthy; written by a newer schema, which this build reads and never writes"
          : verdict)
        : "written by a newer schema than this build knows"
    }
    var rows: [[String]] = []
    for (index, line) in health.integrity.prefix(10).enumerated() {
      rows.append([index == 0 ? "integrity" : "", line])
    }
    if health.integrity.count > 10 {
      rows.append(["", "… \(health.integrity.count - 10) more (see --json)"])
    }
    for (index, problem) in health.schemaProblems.prefix(10).enumerated() {
      rows.append([index == 0 ? "statements" : "", problem])
    }
    if health.schemaProblems.count > 10 {
      rows.append(["", "… \(health.schemaProblems.count - 10) more (see --json)"])
    }
    rows += [
      [
        "schema version",
        "\(health.schemaVersion)"
          + (health.readableFrom.map { ", readable from \($0)" } ?? "")
          + " (this build writes \(health.supportedSchemaVersion))",
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
      ["purchases", purchases(health.purchaseCounts)],
    ]
    if let counts = health.verificationCounts, counts.keys.contains(where: { $0 != nil }) {
      rows.append(["verification", verification(counts)])
    }
    return "\(TerminalText.field(path)): \(verdict)\n" + TextOutput.table(rows, indent: "  ")
  }

  /// `20.0 KiB (20,480 B)`, or `0 B` when there is nothing to round.
  private static func exactSize(_ bytes: Int) -> String {
    bytes < 1024
      ? TextOutput.size(bytes) : "\(TextOutput.size(bytes)) (\(TextOutput.count(bytes)) B)"
  }
}
