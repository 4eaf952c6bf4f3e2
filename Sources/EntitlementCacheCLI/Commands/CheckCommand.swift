import EntitlementCache

/// `check SCOPE --entitlement KEY`: the library's decision, with its evidence.
enum CheckCommand: Command {
  static let spec = CommandSpec(
    name: "check",
    summary: "the decision for one entitlement now, with its evidence",
    usage: "check SCOPE --entitlement KEY [policy flags] [options]",
    discussion: """
      Exit status: 0 granted; 1 not granted (denied, offline_unavailable, device_blocked);
      2 usage or input error; 3 storage error. Never creates the database. A file that is
      not a database is moved aside, as the app would do, and the answer is
      offline_unavailable.
      """,
    flags: CommonFlags.scope
      + [Flag("--entitlement", "KEY", "the entitlement to decide, such as pro")]
      + CommonFlags.general + CommonFlags.policy,
    notes: [CommonFlags.durationNote, CommonFlags.databaseNote],
    examples: [
      "entitlement-cache check --db cache.sqlite --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a --entitlement pro",
      "entitlement-cache check --db cache.sqlite --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a --entitlement pro \\\n      --now 2026-12-31T00:00:00Z --policy server-snapshot --json",
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let scope = try invocation.scope()
    guard let key = invocation.arguments.value("--entitlement") else {
      throw CLIError.usage("check: missing --entitlement KEY")
    }
    guard !key.isEmpty else {
      throw CLIError.usage("--entitlement: empty; give the entitlement's key, such as pro")
    }
    let policy = try invocation.policy()
    let cache = try invocation.openCache(.read, policy: policy)
    let decision = cache.access(to: key, for: scope, policy: policy)
    invocation.emit(
      text: DecisionOutput.text(decision, now: invocation.now, scope: scope),
      json: DecisionOutput.json(decision))
    return decision.isGranted ? .success : .notGranted
  }
}
