import CSQLite
import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The SQLite-backed ``CustomerInfoCache``: one snapshot per scope in a WAL-mode database,
/// re-evaluated on every read, with the evaluated state of each scope held in memory after its
/// first read.
///
/// ```swift
/// let cache = try SQLiteCustomerInfoCache(path: cacheFile)
/// let scope = try CacheScope(
///   sdkKey: sdkKey, installationID: installationID, environment: .production,
///   appUserID: userID)
/// try cache.store(try CustomerInfoSnapshot(jsonData: responseBody), for: scope)
/// if cache.hasActiveEntitlement("pro", for: scope) { showPro() }
/// ```
///
/// Concurrency: one writer connection and one reader connection, each behind its own lock.
/// Reads never wait for a write to commit (WAL), and the hot path takes one uncontended lock,
/// with no actor hop and no dispatch queue. Another process's or cache instance's write is seen
/// within ``CacheConfiguration/crossProcessCheckInterval`` plus the clock tick (at most 100 ms
/// with the defaults) through `PRAGMA data_version`.
public final class SQLiteCustomerInfoCache: CustomerInfoCache {
  /// The database file.
  public let path: String
  /// How the cache was opened.
  public let configuration: CacheConfiguration
  /// Set when the file was found damaged, at open or by a later write, and moved aside.
  public var damageReport: DamageReport? { damage.withLock { $0 } }
  /// The clock every read and write uses.
  public let clock: CacheClock

  let writer: Locked<SQLiteConnection>
  let reads: Locked<ReadState>
  let damage: Mutex<DamageReport?>

  /// Opens the cache at `path`, creating the file (mode 0600) and the schema when needed, and
  /// applies the retention rules.
  ///
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` for a configuration value
  ///   out of range (see ``CacheConfiguration/validate()``), before the file is touched;
  ///   ``CacheError/schemaTooNew(path:found:supported:)`` for a file from a newer
  ///   build (left untouched); ``CacheError/damagedDatabase(path:movedTo:cause:)`` for a
  ///   damaged file when ``CacheConfiguration/damageHandling`` is `.fail`;
  ///   ``CacheError/databaseMissing(path:)`` when the file does not exist and
  ///   ``CacheConfiguration/createIfMissing`` is false; storage and file-system errors.
  public init(
    path: String, configuration: CacheConfiguration = CacheConfiguration(),
    clock: CacheClock = .system
  ) throws(CacheError) {
    try configuration.validate()
    self.path = path
    self.configuration = configuration
    self.clock = clock
    let opened = try DatabaseOpener(path: path, configuration: configuration, clock: clock).open()
    damage = Mutex(opened.damage)
    let dataVersion: Int64
    do {
      dataVersion = try opened.writer.scalarInt("PRAGMA data_version")
    } catch {
      throw .storage(.open, error)
    }
    writer = Locked(opened.writer)
    reads = Locked(
      ReadState(
        reader: opened.reader,
        // Validated above: finite, 0...86,400 s, so the nanoseconds fit.
        checkInterval: UInt64(configuration.crossProcessCheckInterval * 1e9),
        dataVersion: dataVersion))
    if configuration.pruneOnOpen {
      try prune()
    }
  }

  deinit {
    // Read-time bookkeeping is persisted lazily; this is the last chance. A failure only loses
    // retention and rollback hints, never a snapshot.
    guard configuration.persistsReadTimeBookkeeping else { return }
    _ = try? flush()
  }

  /// The schema version this build writes.
  public static var supportedSchemaVersion: Int { Migrator.embedded.latestVersion }
}

/// A damaged file found and moved aside.
public struct DamageReport: Sendable, Hashable {
  /// Where the damaged file now is. Nothing was erased.
  public var movedTo: String
  /// What SQLite reported.
  public var cause: SQLiteError
}

extension Migrator {
  /// The migrations compiled into this build from `Migrations/`.
  static let embedded = Migrator(migrations: EmbeddedMigrations.all)
}
