import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `put SCOPE [--file F]`: stores a snapshot as a successful refresh at `now`.
enum PutCommand: Command {
  static let spec = CommandSpec(
    name: "put",
    summary: "store a snapshot (JSON from a file or stdin) as a successful refresh",
    usage: "put SCOPE [--file F] [--signature F --trust-root F] [--force] [options]",
    discussion: """
      Validates the snapshot first: bad input is rejected with the field and the problem,
      and nothing is written. Creates the database when it does not exist.
      Stores through the same conditional store as the refresh client: a snapshot whose
      requestDate is older than the stored one's is not stored, nor one that fails
      verification over a verified one (exit 1, nothing changed); --force stores it anyway,
      as a support action, and says so. With --signature the server's signed material is
      stored with it; with --trust-root the signature is checked now, and a snapshot that
      fails it never replaces a verified one, --force or not.
      """,
    flags: CommonFlags.scope + [
      Flag("--file", "F", "read the snapshot from F (default: stdin)"),
      Flag("--signature", "F", "the envelope signed with it (JSON, as sign writes it)"),
      Flag("--request-nonce", "HEX", "the nonce the request sent, which the signature must carry"),
      Flag("--force", nil, "store it even when it is older than the stored snapshot"),
      CommonFlags.trustRoot,
    ]
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
    var signature: ResponseSignature?
    if let envelope = invocation.arguments.value("--signature") {
      signature = try SignatureEnvelope.decode(
        try InputFile.contents(of: envelope), file: envelope, storedUnder: scope)
    }
    let requestNonce = try invocation.arguments.value("--request-nonce").map {
      text throws(CLIError) in try NonceText.parse(text, flag: "--request-nonce")
    }
    let snapshot: CustomerInfoSnapshot
    do {
      snapshot = try CustomerInfoSnapshot(
        jsonData: data, signature: signature, requestNonce: requestNonce)
    } catch {
      throw CLIError.usage(error.description)
    }
    try checkDeviceBudget(snapshot.customerInfo.deviceAccess?.changeBudget)
    let cache = try invocation.openCache(.write)
    let forced = invocation.arguments.has("--force")
    do {
      if forced {
        do throws(CacheError) {
          try cache.store(snapshot, for: scope)
        } catch .unverifiedSnapshot(let reason) {
          // --force skips the never-backwards checks, never verification: the same refusal,
          // and the same exit status, as without it.
          return refusedUnverified(reason, scope: scope, invocation: invocation)
        }
      } else {
        // The conditional store the refresh client uses: never backwards.
        switch try cache.storeAnswer(snapshot, for: scope) {
        case .stored: break
        case .discardedOlder:
          return refused(
            "discarded: older than the stored snapshot (its requestDate is later)",
            outcome: "discardedOlder", reason: nil, forceStores: true, scope: scope,
            invocation: invocation)
        case .refusedUnverified(let reason):
          return refusedUnverified(reason, scope: scope, invocation: invocation)
        }
      }
    } catch {
      throw CLIError(error, path: cache.path)
    }
    let keys = snapshot.customerInfo.entitlements.keys.sorted()
    var rows = [
      ["stored at", invocation.now.iso8601],
      ["entitlements", keys.isEmpty ? TextOutput.none : keys.joined(separator: ", ")],
      ["size", TextOutput.size(snapshot.jsonData.count)],
    ]
    // The offset the cache now applies to every server instant, explained when it is large
    // enough to surprise: a hand-written requestDate put without --now is the usual cause.
    // Rounded to the nearest second as the evidence's clockOffset is, so put and show agree.
    // Both instants are within years 0000-9999, so the whole seconds fit an Int.
    let seconds = snapshot.customerInfo.requestDate.timeIntervalSince(invocation.now)
    let offset = Int(exactly: seconds.rounded()) ?? 0
    if abs(offset) >= 60 {
      rows.append(
        ["clock offset", offsetNote(offset, requestDate: snapshot.customerInfo.requestDate)])
    }
    // What the cache decided, read back from what it now holds.
    let verdict = try Self.verdict(of: scope, in: cache)
    if forced {
      rows.append(["forced", "stored without the never-backwards checks (--force)"])
    }
    if let verdict {
      rows.append(["verification", verdict.description])
    } else if signature != nil {
      rows.append(["signature", "stored, not checked (pass --trust-root to check it)"])
    }
    invocation.emit(
      text: "Stored a snapshot for \(TextOutput.scope(scope))\n"
        + TextOutput.table(rows, indent: "  "),
      json: .object([
        ("scope", scopeJSON(scope)),
        ("outcome", .string(forced ? "forced" : "stored")),
        ("storedAt", .date(invocation.now)),
        ("clockOffset", .integer(offset)),
        ("snapshotSize", .integer(snapshot.jsonData.count)),
        ("entitlements", .array(keys.map(JSONOutput.string))),
        ("signed", .bool(signature != nil)),
        ("verification", .text(verdict.map { $0 == .verified ? "verified" : "failed" })),
        ("verificationFailure", .text(verdict?.failure?.rawValue)),
      ]))
    return .success
  }

  /// Says that a snapshot failing verification was refused over a verified one. A reason is
  /// the trust roots' finding, which `--force` never overrides; without one the snapshot's
  /// own body claimed `failed`, which only the conditional store weighs, so `--force` stores
  /// it.
  private static func refusedUnverified(
    _ reason: VerificationFailure?, scope: CacheScope, invocation: Invocation
  ) -> ExitStatus {
    let why = reason.map { " (\($0.rawValue))" } ?? ""
    return refused(
      "refused: it failed verification\(why) and the stored snapshot is verified",
      outcome: "refusedUnverified", reason: reason, forceStores: reason == nil, scope: scope,
      invocation: invocation)
  }

  /// Says that the conditional store kept the snapshot it holds: exit 1, as `check` answers
  /// "not granted", since the command ran and the answer is no. Text and JSON carry the same
  /// facts: the outcome, the verification failure when there is one, and whether `--force`
  /// would store the snapshot.
  private static func refused(
    _ message: String, outcome: String, reason: VerificationFailure?, forceStores: Bool,
    scope: CacheScope, invocation: Invocation
  ) -> ExitStatus {
    let force = forceStores ? "and --force stores it anyway" : "--force or not"
    invocation.emit(
      text: "Not stored for \(TextOutput.scope(scope)): \(message); nothing changed, \(force)\n",
      json: .object([
        ("scope", scopeJSON(scope)), ("outcome", .string(outcome)),
        ("reason", .text(reason?.rawValue)), ("forceStores", .bool(forceStores)),
      ]))
    return .notGranted
  }

  /// `-4 h: the snapshot's requestDate is 4 h behind this device's clock; …`.
  private static func offsetNote(_ seconds: Int, requestDate: Date) -> String {
    let side = seconds > 0 ? "ahead of" : "behind"
    return "\(TextOutput.signedDuration(seconds)): the requestDate is \(side) this device's "
      + "clock, so the cache reads server times that much \(side) it until the next put "
      + "(--now \(requestDate.iso8601) stores it as fetched then)"
  }

  /// The largest change budget a snapshot may state: counts a server sends, where a bigger
  /// one is a typo in a hand-written file rather than a policy.
  static let largestBudgetLimit = 1_000
  /// The longest budget window, ten years in days.
  static let longestBudgetWindowDays = 3_660

  /// Refuses a device change budget that cannot be true: more changes left than allowed, a
  /// window of no days, or counts beyond any real policy. The library stores what a server
  /// sends, since a display field must never cost a user access; the tool, where a person
  /// writes the snapshot, refuses it at the door.
  private static func checkDeviceBudget(_ budget: DeviceChangeBudget?) throws(CLIError) {
    guard let budget else { return }
    let field = "deviceAccess.changeBudget"
    guard budget.limit <= largestBudgetLimit else {
      throw CLIError.usage("\(field).limit: out of range: at most \(largestBudgetLimit)")
    }
    guard budget.remaining <= budget.limit else {
      throw CLIError.usage(
        "\(field).remaining: \(budget.remaining) is more than limit \(budget.limit)")
    }
    guard (1...longestBudgetWindowDays).contains(budget.windowDays) else {
      throw CLIError.usage(
        "\(field).windowDays: out of range: 1 through \(longestBudgetWindowDays) days")
    }
  }

  /// The verdict the cache holds for `scope`; nil without trust roots.
  private static func verdict(
    of scope: CacheScope, in cache: SQLiteCustomerInfoCache
  ) throws(CLIError) -> TrustVerdict? {
    guard cache.configuration.trustRoots != nil else { return nil }
    do {
      return try cache.verifySnapshot(for: scope)
    } catch {
      throw CLIError(error, path: cache.path)
    }
  }
}

/// `{ "hash": "…", "environment": "production" }`.
func scopeJSON(_ scope: CacheScope) -> JSONOutput {
  .object([("hash", .string(scope.key.hex)), ("environment", .string(scope.environment.rawValue))])
}
