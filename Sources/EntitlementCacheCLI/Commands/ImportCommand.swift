import EntitlementCache
import EntitlementCacheImport

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// `import SCOPE [--file F] [--saved-at TIME] [--format F] [--label L]`: stores a previous
/// cache's snapshot as of its save (`Sources/EntitlementCache/EntitlementCache.docc/Articles/AdoptingOnAnInstalledBase.md`).
enum ImportCommand: Command {
  /// The formats `--format` takes.
  enum Format: String, CaseIterable {
    case snapshot
    case revenueCatV1 = "revenuecat-v1"
  }

  static let spec = CommandSpec(
    name: "import",
    summary: "store a previous cache's snapshot as of when it was saved",
    usage:
      "import SCOPE [--file F] [--saved-at TIME] [--format snapshot|revenuecat-v1] [--label L] [options]",
    discussion: """
      What an SDK that adopts the cache does at the first launch after the upgrade: the
      snapshot is stored as a refresh at --saved-at would have been (default: its
      requestDate), so the time since then counts as time that passed, and only when the
      scope holds no snapshot. It is never verified and never high trust; check and show
      say "imported" with the label until a put replaces it. --format revenuecat-v1 reads
      RevenueCat's v1 subscriber response (label revenuecat-v1 unless --label says
      otherwise). Exit status: 0 imported; 1 not imported, the scope holds a snapshot;
      2 bad input, or a --saved-at ahead of --now by more than the rollback tolerance;
      3 storage error.
      """,
    flags: CommonFlags.scope + [
      Flag("--file", "F", "read the previous cache's JSON from F (default: stdin)"),
      Flag("--saved-at", "TIME", "when the previous cache saved it (ISO-8601)"),
      Flag("--format", "F", "snapshot (this package's format, the default) or revenuecat-v1"),
      Flag("--label", "L", "what it came from, shown in the evidence (default: the format)"),
    ]
      + CommonFlags.general,
    notes: [CommonFlags.databaseNote],
    examples: [
      "entitlement-cache import --db cache.sqlite --sdk-key sdk_live_123 --installation install-1 \\\n      --environment production --user user-a --file previous.json \\\n      --saved-at 2026-11-25T12:00:00Z --label previous-json-cache"
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> ExitStatus {
    let scope = try invocation.scope()
    let file = invocation.arguments.value("--file")
    let data = try InputFile.contents(of: file)
    guard !data.isEmpty else {
      throw CLIError.usage("\(file ?? "stdin"): empty; expected a previous cache's JSON")
    }
    let formatText = invocation.arguments.value("--format") ?? Format.snapshot.rawValue
    guard let format = Format(rawValue: formatText) else {
      throw CLIError.usage(
        "--format: '\(TerminalText.excerpt(formatText))' is not one of "
          + Format.allCases.map(\.rawValue).joined(separator: ", "))
    }
    let savedAt = try invocation.arguments.value("--saved-at").map {
      text throws(CLIError) in try TimeText.parse(text, flag: "--saved-at")
    }
    let snapshot = try Self.snapshot(of: data, format: format, environment: scope.environment)
    let label = invocation.arguments.value("--label") ?? format.rawValue
    let request = SnapshotImport(snapshot: snapshot, savedAt: savedAt, label: label)
    let cache = try invocation.openCache(.write)
    let outcome: ImportOutcome
    do {
      outcome = try cache.importSnapshot(request, for: scope)
    } catch {
      throw CLIError(error, path: cache.path)
    }
    switch outcome {
    case .imported:
      let stored = try? cache.load(scope)
      let keys = snapshot.customerInfo.entitlements.keys.sorted()
      invocation.emit(
        text: "Imported a snapshot for \(TextOutput.scope(scope))\n"
          + TextOutput.table(
            [
              ["origin", TextOutput.importOrigin(label)],
              ["saved at", (stored?.bookkeeping.storedAt ?? invocation.now).iso8601],
              ["server time", snapshot.customerInfo.requestDate.iso8601],
              ["entitlements", keys.isEmpty ? TextOutput.none : keys.joined(separator: ", ")],
            ], indent: "  "),
        json: .object([
          ("scope", scopeJSON(scope)), ("outcome", .string("imported")),
          ("origin", .string("imported")), ("importLabel", .string(label)),
          ("savedAt", .date(stored?.bookkeeping.storedAt ?? invocation.now)),
          ("serverTime", .date(snapshot.customerInfo.requestDate)),
          ("entitlements", .array(keys.map(JSONOutput.string))),
        ]))
      return .success
    case .scopeAlreadyFilled:
      invocation.emit(
        text: "Not imported for \(TextOutput.scope(scope)): the scope holds a snapshot "
          + "already; nothing changed\n",
        json: .object([
          ("scope", scopeJSON(scope)), ("outcome", .string("scopeAlreadyFilled")),
        ]))
      return .notGranted
    case .refused(.savedAfterNow):
      throw CLIError.usage(
        "--saved-at: ahead of now (\(invocation.now.iso8601)) by more than the clock rollback "
          + "tolerance; a clock set back since the save would re-grant what lapsed")
    case .refused(.invalidLabel):
      throw CLIError.usage(
        "--label: must be 1 to \(SnapshotImport.labelLimit) bytes with no control or format characters"
      )
    }
  }

  /// The snapshot `data` holds in `format`; a bad body is a usage error naming the field.
  private static func snapshot(
    of data: Data, format: Format, environment: StoreEnvironment
  ) throws(CLIError) -> CustomerInfoSnapshot {
    switch format {
    case .snapshot:
      do {
        return try CustomerInfoSnapshot(jsonData: data)
      } catch {
        throw CLIError.usage(error.description)
      }
    case .revenueCatV1:
      do {
        return try RevenueCatV1.snapshot(fromSubscriberResponse: data, environment: environment)
      } catch {
        throw CLIError.usage(error.description)
      }
    }
  }
}

/// `refresh` or `imported`, as the evidence's `origin` says it; nil without a snapshot.
func originName(_ origin: SnapshotOrigin?) -> String? {
  switch origin {
  case nil: nil
  case .refresh?: "refresh"
  case .imported?: "imported"
  }
}
