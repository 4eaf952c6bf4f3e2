import EntitlementCache

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `relocate --from OLD`: merges the cache file at OLD into the database and removes it
/// (`Sources/EntitlementCache/EntitlementCache.docc/Articles/AdoptingOnAnInstalledBase.md`).
enum RelocateCommand: Command {
  static let spec = CommandSpec(
    name: "relocate",
    summary: "merge another cache file into the database, then remove it",
    usage: "relocate --from OLD [options]",
    discussion: """
      What an app runs at every launch once it moved its cache (into an App Group container,
      when it gained a widget). Per scope the later requestDate wins (a tie keeps the
      database's; with --trust-root, a verified snapshot is kept over one that is not) and
      keeps the time it was stored; a queued purchase moves, once, in the state that went
      further; OLD and its -wal and -shm are removed once the merge is on disk. Run again
      after a kill, it merges nothing twice. Exit status: 0 moved,
      or nothing at OLD; 1 merged, but OLD is still open elsewhere and was left (run it
      again); 2 OLD is the database itself; 3 storage error (OLD damaged, from a newer
      schema, or refused), both files left as they were.
      """,
    flags: [
      Flag("--from", "OLD", "the cache file to merge into the database and remove"),
      CommonFlags.trustRoot,
    ] + CommonFlags.general,
    notes: [CommonFlags.databaseNote],
    examples: [
      "entitlement-cache relocate --db group/entitlements.sqlite --from app/entitlements.sqlite"
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    guard let from = invocation.arguments.value("--from"), !from.isEmpty else {
      throw CLIError.usage("relocate: missing --from OLD, the cache file to move")
    }
    let cache = try invocation.openCache(.write)
    let outcome: RelocationOutcome
    do {
      outcome = try cache.relocate(from: from)
    } catch .invalidConfiguration {
      throw CLIError.usage("--from: \(from) is the database itself; nothing to move")
    } catch {
      // A file this process cannot read and write is the one in the way: the old file, when
      // it is that one, where the error itself names no file.
      let blamed = access(from, R_OK | W_OK) != 0 ? from : cache.path
      throw CLIError(error, path: blamed)
    }
    switch outcome {
    case .nothingToMove:
      invocation.emit(
        text: "Nothing to move: no file at \(from)\n",
        json: .object([("outcome", .string("nothingToMove")), ("from", .string(from))]))
      return .success
    case .moved(let summary):
      invocation.emit(
        text: "Moved \(from) into \(cache.path), and removed it\n" + text(summary),
        json: json("moved", from: from, summary))
      return .success
    case .mergedNotRemoved(let summary):
      invocation.emit(
        text: "Merged \(from) into \(cache.path); it is still open elsewhere and was left: "
          + "run relocate again to remove it\n" + text(summary),
        json: json("mergedNotRemoved", from: from, summary))
      return .notGranted
    }
  }

  private static func text(_ summary: RelocationSummary) -> String {
    TextOutput.table(
      [
        ["snapshots moved", "\(summary.snapshotsMoved)"],
        ["snapshots kept", "\(summary.snapshotsKept) (as new or newer here)"],
        ["purchases moved", "\(summary.purchasesMoved)"],
        ["already queued", "\(summary.purchasesAlreadyQueued)"],
      ] + (summary.mergedEarlier ? [["merged before", "yes: only removed now"]] : []),
      indent: "  ")
  }

  private static func json(
    _ outcome: String, from: String, _ summary: RelocationSummary
  ) -> JSONOutput {
    .object([
      ("outcome", .string(outcome)), ("from", .string(from)),
      ("snapshotsMoved", .integer(summary.snapshotsMoved)),
      ("snapshotsKept", .integer(summary.snapshotsKept)),
      ("purchasesMoved", .integer(summary.purchasesMoved)),
      ("purchasesAlreadyQueued", .integer(summary.purchasesAlreadyQueued)),
      ("mergedEarlier", .bool(summary.mergedEarlier)),
    ])
  }
}
