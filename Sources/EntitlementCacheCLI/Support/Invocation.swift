import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The flags every command shares, grouped as `--help` shows them.
enum CommonFlags {
  static let db = Flag("--db", "PATH", "the database file (default: see below)")
  static let now = Flag("--now", "TIME", "use this ISO-8601 time instead of the system clock")
  static let json = Flag("--json", nil, "print JSON instead of text")
  static let general = [db, now, json]
  static let trustRoot = Flag(
    "--trust-root", "F", "decide verification by the root public key(s) in F (from keygen)",
    group: "Trust")

  static let scope = [
    Flag("--sdk-key", "K", "the SDK key (hashed; never stored or printed)", group: "Scope"),
    Flag("--installation", "I", "the installation ID (hashed)", group: "Scope"),
    Flag("--environment", "E", "production, sandbox or local", group: "Scope"),
    Flag("--user", "U", "the app-user ID (hashed; never stored or printed)", group: "Scope"),
  ]

  static let policy = [
    Flag("--policy", "P", "conservative (default) or server-snapshot", group: "Policy"),
    Flag("--stale-after", "D", "stale after this age (default 5m)", group: "Policy"),
    Flag(
      "--non-expiring-max-offline-age", "D", "lifetime access offline window (default 30d)",
      group: "Policy"),
    Flag(
      "--max-snapshot-age", "D", "older snapshots grant nothing (default none)", group: "Policy"),
    Flag("--exclude-family-shared", nil, "deny family-shared access", group: "Policy"),
    Flag(
      "--require-verified", nil, "only a verified snapshot decides (needs --trust-root)",
      group: "Policy"),
    trustRoot,
  ]

  /// Where the database is without `--db`, including where that is on this machine.
  static var databaseNote: String {
    let here = (try? DatabaseLocation.resolve(nil).path).map { "\n(here: \($0))" } ?? ""
    return """
      Without --db the database is $ENTITLEMENT_CACHE_DB, else
      $XDG_DATA_HOME/entitlement-cache/cache.sqlite, else
      ~/.local/share/entitlement-cache/cache.sqlite\(here).
      """
  }

  static let durationNote = "Durations are written 90 (seconds), 90s, 5m, 12h or 30d."

  /// The scope flags as a usage fragment.
  static let scopeUsage =
    "--sdk-key K --installation I --environment production|sandbox|local --user U"
}

/// How a command opens the database.
enum DatabaseAccess {
  /// Create the file when missing; move a damaged file aside (as the app would).
  case write
  /// Never create the file; move a damaged file aside (as the app would) and warn.
  case read
  /// Never create the file; a damaged file is an error and stays where it is.
  case inspect
}

/// One run of a command: its parsed flags turned into library values.
package struct Invocation {
  let arguments: ParsedArguments
  /// The clock's time for the whole run, so every relative time in the output agrees.
  let now: Date
  /// The boot clock's reading for the run, taken with `now`; nil with `--now`, so a what-if
  /// answer follows the given time alone (<doc:CommandLineTool>), and where the platform has none.
  let bootInstant: BootInstant?

  package init(_ arguments: ParsedArguments) throws(CLIError) {
    self.arguments = arguments
    if let text = arguments.value("--now") {
      now = try TimeText.parse(text, flag: "--now")
      bootInstant = nil
    } else {
      now = Date()
      bootInstant = CacheClock.system.bootInstant()
    }
  }

  var command: String { arguments.command.name }
  var wantsJSON: Bool { arguments.has("--json") }
  var clock: CacheClock {
    let (now, bootInstant) = (now, bootInstant)
    return CacheClock(now: { now }, bootInstant: { bootInstant })
  }

  /// Prints the JSON form with `--json`, the text form otherwise.
  func emit(text: @autoclosure () -> String, json: @autoclosure () -> JSONOutput) {
    Console.out(wantsJSON ? json().rendered() : text())
  }

  /// Whether any scope flag was given.
  package var hasScopeFlags: Bool { CommonFlags.scope.contains { arguments.has($0.name) } }

  /// The scope named by the four scope flags. Its description holds hashes only.
  package func scope() throws(CLIError) -> CacheScope {
    let missing = CommonFlags.scope.filter { arguments.value($0.name) == nil }
    guard missing.isEmpty else {
      let names = missing.map { "\($0.name) \($0.valueName ?? "")" }.joined(separator: ", ")
      throw CLIError.usage("\(command): missing \(names) (a scope is \(CommonFlags.scopeUsage))")
    }
    do {
      return try CacheScope(
        sdkKey: arguments.value("--sdk-key") ?? "",
        installationID: arguments.value("--installation") ?? "",
        environment: arguments.value("--environment") ?? "",
        appUserID: arguments.value("--user") ?? "")
    } catch {
      throw CLIError.usage("\(command): \(error)")
    }
  }

  /// The preset named by `--policy`, with each policy flag applied over it.
  package func policy() throws(CLIError) -> OfflinePolicy {
    var policy: OfflinePolicy
    switch arguments.value("--policy") {
    case nil, "conservative": policy = .conservative
    case "server-snapshot": policy = .serverSnapshot
    case let other?:
      throw CLIError.usage(
        "--policy: '\(TerminalText.excerpt(other))' is not conservative or server-snapshot")
    }
    if let value = try duration("--stale-after") { policy.staleAfter = value }
    if let value = try duration("--non-expiring-max-offline-age") {
      policy.nonExpiringMaxOfflineAge = value
    }
    if let value = try duration("--max-snapshot-age") { policy.maxSnapshotAge = value }
    if arguments.has("--exclude-family-shared") { policy.excludeFamilyShared = true }
    if arguments.has("--require-verified") {
      guard arguments.has("--trust-root") else {
        throw CLIError.usage(
          "--require-verified needs --trust-root F: without roots `verified` is only the body's claim"
        )
      }
      policy.requireVerified = true
    }
    return policy
  }

  private func duration(_ flag: String) throws(CLIError) -> TimeInterval? {
    guard let text = arguments.value(flag) else { return nil }
    switch DurationText.parse(text) {
    case .success(let value): return value
    case .failure(let problem):
      throw CLIError.usage("\(flag): '\(TerminalText.excerpt(text))' \(problem)")
    }
  }

  /// The database path from `--db` or the default location; a directory, or anything else
  /// there that is not a regular file, is refused here with its own message, before SQLite
  /// answers "unable to open" or "disk I/O error", or waits forever on a FIFO.
  func databasePath() throws(CLIError) -> (path: String, isDefault: Bool) {
    let location = try DatabaseLocation.resolve(arguments.value("--db"))
    if InputFile.isDirectory(location.path) {
      throw CLIError.storage(
        "\(location.path): is a directory, not a file; --db names the database file itself")
    }
    if let kind = InputFile.nonRegularKind(location.path) {
      throw CLIError.storage(
        "\(location.path): is \(kind), not a regular file; --db names a database file")
    }
    return location
  }

  /// Opens the cache. Nothing is pruned and read-time bookkeeping is never written: the tool
  /// changes only what its command says.
  func openCache(_ access: DatabaseAccess, policy: OfflinePolicy = .conservative) throws(CLIError)
    -> SQLiteCustomerInfoCache
  {
    let (path, isDefault) = try databasePath()
    var configuration = CacheConfiguration()
    configuration.policy = policy
    configuration.pruneOnOpen = false
    configuration.persistsReadTimeBookkeeping = false
    configuration.createIfMissing = access == .write
    configuration.damageHandling = access == .inspect ? .fail : .moveAside
    if let file = arguments.value("--trust-root") {
      configuration.trustRoots = try KeyFiles.trustRoots(in: file, flag: "--trust-root")
    }
    if access == .write {
      if isDefault {
        try DatabaseLocation.createDirectory(for: path)
      } else if let directory = DatabaseLocation.missingDirectory(of: path) {
        throw CLIError.storage(
          "\(path): the directory \(directory) does not exist; the tool creates the database "
            + "file, not the directories above it")
      } else if let parent = DatabaseLocation.parent(of: path),
        DatabaseLocation.isNotADirectory(parent)
      {
        throw CLIError.storage("\(path): \(parent) is not a directory")
      }
    }
    // An empty file is a database with no tables yet, which opening would create: an
    // inspection changes nothing, so it says what is there instead.
    if access == .inspect, DatabaseLocation.isEmptyFile(path) {
      throw CLIError.storage(
        "\(path): an empty file (0 bytes): no cache has been written to it yet; left untouched")
    }
    let cache: SQLiteCustomerInfoCache
    do {
      cache = try SQLiteCustomerInfoCache(path: path, configuration: configuration, clock: clock)
    } catch {
      throw CLIError(error, path: path)
    }
    // An app waits for such a file; the tool says why and stops, as for any storage error
    // (a read-only file whose WAL switch or migration its permissions refused is named as
    // not writable, rather than to be waited for).
    if let error = cache.awaitedStorageError(.open) { throw CLIError(error, path: path) }
    if let damage = cache.damageReport {
      Console.warning(
        "\(path): not a usable database (\(damage.cause.message)); moved aside to "
          + "\(damage.movedTo) and replaced with an empty one")
    }
    return cache
  }
}
