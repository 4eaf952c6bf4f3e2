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
      Entitlements are re-evaluated now (lapsed ones read "expired": past their expiry or
      grace, or lifetime ones past the offline window), an expired access context is
      removed, tokens are redacted, and fields this build does not know are left out (they
      stay in the file). Never creates the database.
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
    var stored: CachedCustomerInfo?
    var evaluated: EvaluatedCustomerInfo?
    // Two reads, and another process may commit between them (the two-process soak caught a
    // server time of one snapshot printed with the access context of the next): read again
    // until both saw the same write, or leave out what only the first read gives.
    var agree = false
    for _ in 0..<Self.consistentReadAttempts where !agree {
      do {
        stored = try cache.load(scope)
        evaluated = try cache.evaluatedCustomerInfo(for: scope, policy: policy)
      } catch {
        throw CLIError(error, path: cache.path)
      }
      // A scope whose refreshes have only failed loads its bookkeeping and no snapshot, and
      // evaluates to nothing: both reads saw it so.
      agree =
        Self.sameWrite(stored?.bookkeeping, evaluated?.bookkeeping)
        || (evaluated == nil && stored?.snapshot == nil)
    }
    let view = ShowOutput(
      scope: scope, now: invocation.now, stored: agree ? stored : nil, evaluated: evaluated)
    invocation.emit(text: view.text, json: view.json)
    return .success
  }

  /// Enough for any real pace of writes; a writer faster than that loses only the line on an
  /// expired access context.
  static let consistentReadAttempts = 8

  /// Whether two reads of a scope saw the same write: the same snapshot, stored at the same
  /// time, with the same refresh failure.
  static func sameWrite(_ first: ScopeBookkeeping?, _ second: ScopeBookkeeping?) -> Bool {
    guard let first, let second else { return first == nil && second == nil }
    return first.snapshotSHA256 == second.snapshotSHA256 && first.storedAt == second.storedAt
      && first.lastRefreshFailedAt == second.lastRefreshFailedAt
      && first.lastRefreshFailureReason == second.lastRefreshFailureReason
  }
}
