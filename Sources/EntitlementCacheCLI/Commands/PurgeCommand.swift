import EntitlementCache

/// `purge SCOPE`, `purge --hash PREFIX`, `purge --unusable`.
enum PurgeCommand: Command {
  static let spec = CommandSpec(
    name: "purge",
    summary: "delete one scope, or every scope that can no longer grant anything",
    usage: "purge (SCOPE | --hash PREFIX | --unusable) [policy flags] [options]",
    discussion: """
      --unusable deletes every scope whose snapshot grants nothing now under the policy
      (scopes without a snapshot included; a blocked device of an entitled user is kept,
      since its answer is device management). --hash takes a hash prefix from 'scopes'.
      Never creates the database; a damaged file is an error (exit 3) and is left alone.
      """,
    flags: CommonFlags.scope + [
      Flag("--hash", "PREFIX", "delete the scope whose hash starts with PREFIX"),
      Flag("--unusable", nil, "delete every scope that can no longer grant anything"),
    ] + CommonFlags.general + CommonFlags.policy,
    notes: [CommonFlags.durationNote, CommonFlags.databaseNote],
    examples: [
      "entitlement-cache purge --db cache.sqlite --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a",
      "entitlement-cache purge --db cache.sqlite --hash 3fa4c1d2",
      "entitlement-cache purge --db cache.sqlite --unusable --policy server-snapshot",
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let arguments = invocation.arguments
    let modes = [invocation.hasScopeFlags, arguments.has("--hash"), arguments.has("--unusable")]
    guard modes.filter({ $0 }).count == 1 else {
      throw CLIError.usage(
        "purge: give exactly one of SCOPE (\(CommonFlags.scopeUsage)), --hash PREFIX or --unusable")
    }
    let policy = try invocation.policy()
    let scope = invocation.hasScopeFlags ? try invocation.scope() : nil
    let prefix = arguments.value("--hash")
    if let prefix, prefix.isEmpty || !prefix.allSatisfy(\.isHexDigit) {
      throw CLIError.usage(
        "--hash: '\(TerminalText.excerpt(prefix))' is not a hexadecimal hash prefix")
    }
    let cache = try invocation.openCache(.inspect, policy: policy)
    let deleted: [ScopeKey]
    do {
      deleted = try purge(cache, scope: scope, prefix: prefix, policy: policy)
    } catch {
      throw CLIError(error, path: cache.path)
    }
    if let prefix, deleted.isEmpty {
      throw CLIError.usage("purge: no scope hash starts with \(prefix); see 'scopes'")
    }
    let what = deleted.count == 1 ? "1 scope" : "\(deleted.count) scopes"
    let list = deleted.map { "  \($0.hexPrefix)\n" }.joined()
    invocation.emit(
      text: "Deleted \(what) from \(TerminalText.field(cache.path)).\n" + list,
      json: .object([
        ("deleted", .integer(deleted.count)),
        ("hashes", .array(deleted.map { .string($0.hex) })),
      ]))
    return .success
  }

  /// The keys of the scopes deleted.
  private static func purge(
    _ cache: SQLiteCustomerInfoCache, scope: CacheScope?, prefix: String?, policy: OfflinePolicy
  ) throws(InspectionError) -> [ScopeKey] {
    let inspector = CacheInspector(cache)
    if let prefix {
      return try inspector.removeScope(hashPrefix: prefix).map { [$0] } ?? []
    }
    do {
      if let scope {
        guard try cache.load(scope) != nil else { return [] }
        try cache.remove(scope)
        return [scope.key]
      }
      // The library reports a count; the listing before and after names them.
      let before = try inspector.scopeSummaries(policy: policy).map(\.key)
      try cache.purgeUnusable(policy: policy)
      let after = Set(try inspector.scopeSummaries(policy: policy).map(\.key))
      return before.filter { !after.contains($0) }
    } catch {
      throw .cache(error)
    }
  }
}
