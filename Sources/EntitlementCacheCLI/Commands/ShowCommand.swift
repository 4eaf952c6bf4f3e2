import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `show SCOPE`: the evaluated CustomerInfo and the scope's bookkeeping.
enum ShowCommand: Command {
  static let spec = CommandSpec(
    name: "show",
    summary: "the evaluated CustomerInfo and bookkeeping of one scope, tokens redacted",
    usage: "show SCOPE [policy flags] [options]",
    discussion: """
      Entitlements are re-evaluated now (lapsed ones read "expired"), an expired access
      context is removed, tokens are redacted, and fields this build does not know are left
      out (they stay in the file). Never creates the database.
      """,
    flags: CommonFlags.scope + CommonFlags.general + CommonFlags.policy,
    notes: [CommonFlags.durationNote, CommonFlags.databaseNote],
    examples: [
      "entitlement-cache show --db cache.sqlite --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a",
      "entitlement-cache show --db cache.sqlite --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a --json",
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let scope = try invocation.scope()
    let policy = try invocation.policy()
    let cache = try invocation.openCache(.read, policy: policy)
    let stored: CachedCustomerInfo?
    let evaluated: EvaluatedCustomerInfo?
    do {
      stored = try cache.load(scope)
      evaluated = try cache.evaluatedCustomerInfo(for: scope, policy: policy)
    } catch {
      throw CLIError(error, path: cache.path)
    }
    let view = ShowOutput(
      scope: scope, now: invocation.now, stored: stored, evaluated: evaluated)
    invocation.emit(text: view.text, json: view.json)
    return .success
  }
}
