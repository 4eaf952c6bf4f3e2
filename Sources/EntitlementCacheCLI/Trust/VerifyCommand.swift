import EntitlementCache

/// `verify SCOPE --trust-root F`: checks the stored snapshot's signature and rows now.
enum VerifyCommand: Command {
  static let spec = CommandSpec(
    name: "verify",
    summary: "check a stored snapshot's signature and columns again now (exit 0 when verified)",
    usage: "verify SCOPE --trust-root F [options]",
    discussion: """
      Reads the scope from the file and checks it as every read from disk does:
      the signature over the stored body, the nonce and the key's expiry as checked when it
      was stored, and every stored column against the body. Prints verified or failed with
      the reason; tampered means the file was edited since the snapshot was stored.
      Exit status: 0 verified, 1 not verified or nothing stored, 2 usage, 3 storage.
      """,
    flags: CommonFlags.scope + [CommonFlags.trustRoot] + CommonFlags.general,
    notes: [CommonFlags.databaseNote],
    examples: [
      "entitlement-cache verify --db cache.sqlite --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a --trust-root test-root.pub"
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let scope = try invocation.scope()
    guard invocation.arguments.has("--trust-root") else {
      throw CLIError.usage("verify: missing --trust-root F (the root public keys to check against)")
    }
    let cache = try invocation.openCache(.inspect)
    let verdict: TrustVerdict?
    do {
      verdict = try cache.verifySnapshot(for: scope)
    } catch {
      throw CLIError(error, path: cache.path)
    }
    invocation.emit(
      text: verdict.map { "\($0) for \(TextOutput.scope(scope))\n" }
        ?? "Nothing is stored for \(TextOutput.scope(scope)).\n",
      json: .object([
        ("scope", scopeJSON(scope)),
        ("verification", .text(verdict.map { $0 == .verified ? "verified" : "failed" })),
        ("verificationFailure", .text(verdict?.failure?.rawValue)),
      ]))
    return verdict == .verified ? .success : .notGranted
  }
}
