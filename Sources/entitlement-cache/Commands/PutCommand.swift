import EntitlementCache

/// `put SCOPE [--file F]`: stores a snapshot as a successful refresh at `now`.
enum PutCommand: Command {
  static let spec = CommandSpec(
    name: "put",
    summary: "store a snapshot (JSON from a file or stdin) as a successful refresh",
    usage: "put SCOPE [--file F] [options]",
    discussion: """
      Validates the snapshot first: bad input is rejected with the field and the problem,
      and nothing is written. Creates the database when it does not exist.
      """,
    flags: CommonFlags.scope + [Flag("--file", "F", "read the snapshot from F (default: stdin)")]
      + CommonFlags.general,
    notes: [CommonFlags.databaseNote],
    examples: [
      "entitlement-cache put --db cache.sqlite --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a --file snapshot.json",
      "entitlement-cache put --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a < snapshot.json",
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let scope = try invocation.scope()
    let file = invocation.arguments.value("--file")
    let data = try InputFile.contents(of: file)
    guard !data.isEmpty else {
      throw CLIError.usage("\(file ?? "stdin"): empty; expected a snapshot's JSON")
    }
    let snapshot: CustomerInfoSnapshot
    do {
      snapshot = try CustomerInfoSnapshot(jsonData: data)
    } catch {
      throw CLIError.usage(error.description)
    }
    let cache = try invocation.openCache(.write)
    do {
      try cache.store(snapshot, for: scope)
    } catch {
      throw CLIError(error, path: cache.path)
    }
    let keys = snapshot.customerInfo.entitlements.keys.sorted()
    let rows = [
      ["stored at", invocation.now.iso8601],
      ["entitlements", keys.isEmpty ? TextOutput.none : keys.joined(separator: ", ")],
      ["size", TextOutput.size(snapshot.jsonData.count)],
    ]
    invocation.emit(
      text: "Stored a snapshot for \(TextOutput.scope(scope))\n"
        + TextOutput.table(rows, indent: "  "),
      json: .object([
        ("scope", scopeJSON(scope)),
        ("storedAt", .date(invocation.now)),
        ("snapshotSize", .integer(snapshot.jsonData.count)),
        ("entitlements", .array(keys.map(JSONOutput.string))),
      ]))
    return .success
  }
}

/// `{ "hash": "…", "environment": "production" }`.
func scopeJSON(_ scope: CacheScope) -> JSONOutput {
  .object([("hash", .string(scope.key.hex)), ("environment", .string(scope.environment.rawValue))])
}
