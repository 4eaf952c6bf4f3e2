import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `scopes`: every scope in the file, by hash.
enum ScopesCommand: Command {
  static let spec = CommandSpec(
    name: "scopes",
    summary: "every scope in the file, by hash, with freshness and sizes",
    usage: "scopes [options]",
    discussion: """
      Lists hashes only: the file holds no raw SDK key, installation or user ID. Most
      recently used first. Never creates or changes the database; a damaged file is an
      error (exit 3) and is left where it is.
      """,
    flags: CommonFlags.general + CommonFlags.policy,
    notes: [CommonFlags.durationNote, CommonFlags.databaseNote],
    examples: ["entitlement-cache scopes --db cache.sqlite", "entitlement-cache scopes --json"])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let policy = try invocation.policy()
    let cache = try invocation.openCache(.inspect, policy: policy)
    let summaries: [ScopeSummary]
    do {
      summaries = try CacheInspector(cache).scopeSummaries(policy: policy)
    } catch {
      throw CLIError(error, path: cache.path)
    }
    invocation.emit(
      text: text(summaries, path: cache.path, now: invocation.now),
      json: .object([
        ("count", .integer(summaries.count)),
        ("scopes", .array(summaries.map(json))),
      ]))
    return .success
  }

  private static func json(_ summary: ScopeSummary) -> JSONOutput {
    let bookkeeping = summary.bookkeeping
    return .object([
      ("hash", .string(summary.key.hex)),
      ("environment", .text(summary.environment?.rawValue)),
      ("userHash", .string(summary.userHashPrefix)),
      ("freshness", .text(summary.freshness?.rawValue)),
      ("entitlementCount", .integer(summary.entitlementCount)),
      ("snapshotSize", bookkeeping.snapshotSize.map(JSONOutput.integer) ?? .null),
      ("storedAt", .date(bookkeeping.storedAt)),
      ("serverTime", .date(bookkeeping.serverTime)),
      ("lastRefreshAttemptAt", .date(bookkeeping.lastRefreshAttemptAt)),
      ("lastRefreshFailedAt", .date(bookkeeping.lastRefreshFailedAt)),
      ("deviceHighWaterMark", .date(bookkeeping.deviceHighWaterMark)),
      ("lastUsedAt", .date(summary.lastUsedAt)),
    ])
  }

  private static func text(_ summaries: [ScopeSummary], path: String, now: Date) -> String {
    guard !summaries.isEmpty else { return "No scopes in \(TerminalText.field(path)).\n" }
    var rows = [["SCOPE", "ENVIRONMENT", "USER", "FRESHNESS", "ENTITLEMENTS", "SIZE", "STORED"]]
    for summary in summaries {
      rows.append([
        summary.key.hexPrefix, summary.environment?.rawValue ?? TextOutput.none,
        summary.userHashPrefix, summary.freshness?.rawValue ?? "no snapshot",
        String(summary.entitlementCount), TextOutput.size(summary.bookkeeping.snapshotSize),
        TextOutput.time(summary.bookkeeping.storedAt, now: now),
      ])
    }
    let noun = summaries.count == 1 ? "scope" : "scopes"
    let title = "\(summaries.count) \(noun) in \(TerminalText.field(path))\n"
    return title + TextOutput.table(rows)
  }
}
