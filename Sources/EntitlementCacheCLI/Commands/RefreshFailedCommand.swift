import EntitlementCache

/// `refresh-failed SCOPE [--reason TEXT]`: records a failed refresh at `now`.
enum RefreshFailedCommand: Command {
  static let spec = CommandSpec(
    name: "refresh-failed",
    summary: "record a failed refresh (cached access is then served offline)",
    usage: "refresh-failed SCOPE [--reason TEXT] [options]",
    discussion: """
      Cached access is unchanged; its evidence reads "offline" until the next put.
      Creates the database when it does not exist.
      """,
    flags: CommonFlags.scope
      + [
        Flag(
          "--reason", "TEXT",
          "a one-line note for support, at most \(maximumReasonBytes) bytes (never a token or ID)")
      ]
      + CommonFlags.general,
    notes: [CommonFlags.databaseNote],
    examples: [
      "entitlement-cache refresh-failed --db cache.sqlite --sdk-key sdk_live_123 \\\n      --installation install-1 --environment production --user user-a --reason timeout"
    ])

  /// The longest reason stored: a note, not a log. What is longer is refused, never cut, so
  /// what support reads is what was typed.
  static let maximumReasonBytes = 256

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let scope = try invocation.scope()
    let reason = try invocation.arguments.value("--reason").map(validatedReason)
    let cache = try invocation.openCache(.write)
    let hasSnapshot: Bool
    do {
      try cache.recordRefreshFailure(for: scope, reason: reason)
      hasSnapshot = try cache.load(scope)?.snapshot != nil
    } catch {
      throw CLIError(error, path: cache.path)
    }
    let meaning =
      hasSnapshot
      ? "cached access is served offline until the next put"
      : "no snapshot is stored, so every decision is offline_unavailable"
    let rows = [
      ["failed at", invocation.now.iso8601],
      ["reason", reason ?? TextOutput.none],
      ["meaning", meaning],
    ]
    invocation.emit(
      text: "Recorded a failed refresh for \(TextOutput.scope(scope))\n"
        + TextOutput.table(rows, indent: "  "),
      json: .object([
        ("scope", scopeJSON(scope)),
        ("refreshFailedAt", .date(invocation.now)),
        ("reason", .text(reason)),
        ("hasSnapshot", .bool(hasSnapshot)),
      ]))
    return .success
  }

  /// `text` when it is one line of at most ``maximumReasonBytes`` bytes with nothing a
  /// terminal would act on: every later `show` prints it.
  private static func validatedReason(_ text: String) throws(CLIError) -> String {
    guard !text.isEmpty else {
      throw CLIError.usage("--reason: empty; leave the flag out to record no reason")
    }
    guard text.utf8.count <= maximumReasonBytes else {
      throw CLIError.usage(
        "--reason: \(text.utf8.count) bytes; at most \(maximumReasonBytes) are stored")
    }
    if let scalar = text.unicodeScalars.first(where: TerminalText.isUnsafe) {
      throw CLIError.usage(
        "--reason: holds a control, bidirectional or invisible character "
          + "(\(TerminalText.codePoint(scalar))); a reason is one line of plain text")
    }
    return text
  }
}
