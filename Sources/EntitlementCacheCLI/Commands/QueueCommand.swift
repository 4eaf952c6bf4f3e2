import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `queue`: the purchase queue's entries, by observer hash (`Sources/EntitlementCache/EntitlementCache.docc/Articles/PurchaseQueue.md`).
enum QueueCommand: Command {
  static let spec = CommandSpec(
    name: "queue",
    summary: "the purchase queue's entries, by observer hash, without their tokens",
    usage: "queue [SCOPE] [--state STATE] [options]",
    discussion: """
      Lists every queued purchase in observation order: transaction, product, the
      observer's user hash and environment, state, attempts, when it may be posted again,
      the last failure and a conflict's resolution. Never shows a purchase's token or a raw
      identity. With SCOPE, only the entries that scope observed; with --state, only those
      in that state. Never creates or changes the database, and expires or deletes nothing;
      a damaged file is an error (exit 3) and is left where it is.
      """,
    flags: CommonFlags.scope + [stateFlag] + CommonFlags.general,
    notes: [CommonFlags.databaseNote],
    examples: [
      "entitlement-cache queue --db cache.sqlite",
      "entitlement-cache queue --db cache.sqlite --state pending --json",
    ])

  private static let stateFlag = Flag(
    "--state", "STATE", "only entries in STATE: \(stateNames)", group: "Filters")

  /// `pending, posting, synced, conflict, rejected or expired`.
  private static let stateNames: String = {
    let names = PurchaseState.allCases.map(\.rawValue)
    return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
  }()

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    // Both filters are checked before the file is opened: a bad value is a usage error (exit
    // 2) even when the file is missing or damaged.
    let state = try stateFilter(invocation)
    let scope: CacheScope? = if invocation.hasScopeFlags { try invocation.scope() } else { nil }
    let cache = try invocation.openCache(.inspect)
    let listing: (entries: [QueuedPurchaseSummary], unreadable: Int)
    do {
      listing = try CacheInspector(cache).purchaseQueue()
    } catch {
      throw CLIError(error, path: cache.path)
    }
    let entries = listing.entries.filter { entry in
      (state == nil || entry.state == state) && (scope == nil || entry.observer == scope?.key)
    }
    let filters = Filters(state: state, scope: scope)
    invocation.emit(
      text: text(
        entries, unreadable: listing.unreadable, filters: filters, path: cache.path,
        now: invocation.now),
      json: .object([
        ("count", .integer(entries.count)),
        ("unreadable", .integer(listing.unreadable)),
        ("purchases", .array(entries.map(json))),
      ]))
    return .success
  }

  private static func stateFilter(_ invocation: Invocation) throws(CLIError) -> PurchaseState? {
    guard let text = invocation.arguments.value("--state") else { return nil }
    guard let state = PurchaseState(rawValue: text) else {
      throw CLIError.usage("--state: '\(TerminalText.excerpt(text))' is not \(stateNames)")
    }
    return state
  }

  /// What the listing was narrowed to, for its title.
  private struct Filters {
    var state: PurchaseState?
    var scope: CacheScope?

    /// `, state pending, observed by production 9ed8a3f3548c…`, or nothing.
    var suffix: String {
      var parts: [String] = []
      if let state { parts.append("state \(state.rawValue)") }
      if let scope { parts.append("observed by \(TextOutput.scope(scope))") }
      return parts.map { ", " + $0 }.joined()
    }
  }

  private static func json(_ entry: QueuedPurchaseSummary) -> JSONOutput {
    .object([
      ("transactionId", .string(entry.transactionID)),
      ("productId", .string(entry.productID)),
      (
        "observer",
        .object([
          ("hash", .string(entry.observer.hex)),
          ("environment", .string(entry.environment.rawValue)),
          ("userHash", .string(entry.observerUserHashPrefix)),
        ])
      ),
      ("state", .string(entry.state.rawValue)),
      ("attempts", .integer(entry.attempts)),
      ("nextAttemptAt", .date(entry.nextAttemptAt)),
      ("firstObservedAt", .date(entry.firstObservedAt)),
      ("stateChangedAt", .date(entry.stateChangedAt)),
      ("lastFailure", .text(entry.lastFailure?.recordedReason)),
      ("resolution", .text(entry.resolution?.rawValue)),
    ])
  }

  private static func text(
    _ entries: [QueuedPurchaseSummary], unreadable: Int, filters: Filters, path: String,
    now: Date
  ) -> String {
    var output: String
    if entries.isEmpty {
      output = "No purchases in \(TerminalText.field(path))\(filters.suffix).\n"
    } else {
      var rows = [
        [
          "TRANSACTION", "PRODUCT", "USER", "ENVIRONMENT", "STATE", "ATTEMPTS", "NEXT ATTEMPT",
          "LAST FAILURE", "RESOLUTION",
        ]
      ]
      for entry in entries {
        rows.append([
          entry.transactionID, entry.productID, entry.observerUserHashPrefix,
          entry.environment.rawValue, entry.state.rawValue, String(entry.attempts),
          nextAttempt(entry, now: now), entry.lastFailure?.recordedReason ?? TextOutput.none,
          entry.resolution?.rawValue ?? TextOutput.none,
        ])
      }
      let noun = entries.count == 1 ? "purchase" : "purchases"
      output =
        "\(entries.count) \(noun) in \(TerminalText.field(path))\(filters.suffix)\n"
        + TextOutput.table(rows)
    }
    if unreadable > 0 {
      // Such rows have no state or observer to filter on, so they are reported whatever the
      // filters: a listing that silently shrank would hide that another tool edited the file.
      let (noun, verb) = unreadable == 1 ? ("entry", "is") : ("entries", "are")
      output +=
        "\(unreadable) \(noun) could not be read (a value outside the schema) and \(verb) "
        + "not listed\n"
    }
    return output
  }

  /// When an unsent entry may be posted again: `2026-11-30T12:00:04Z (in 4 s)`, or `due` when
  /// nothing holds it back any more; `—` for an entry that will never be posted again.
  private static func nextAttempt(_ entry: QueuedPurchaseSummary, now: Date) -> String {
    guard entry.state.isUnsent else { return TextOutput.none }
    guard let at = entry.nextAttemptAt else { return "due" }
    guard at > now else { return "\(TextOutput.timestamp(at)) (due)" }
    return TextOutput.time(at, now: now)
  }
}
