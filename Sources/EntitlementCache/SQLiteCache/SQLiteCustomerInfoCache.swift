import CSQLite

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
/// // Never backwards: an answer older than the stored one is not stored.
/// _ = try cache.storeAnswer(try CustomerInfoSnapshot(jsonData: responseBody), for: scope)
/// if cache.hasActiveEntitlement("pro", for: scope) { showPro() }
/// ```
///
/// Concurrency: one writer connection and one reader connection, each behind its own lock.
/// Reads never wait for a write to commit (WAL), and the hot path takes one uncontended lock,
/// with no actor hop and no dispatch queue. Another process's or cache instance's write is seen
/// once ``CacheConfiguration/changeCheckInterval`` has passed since the last check (within
/// about 50 ms with the default, as measured in <doc:Storage>) through `PRAGMA data_version`.
public final class SQLiteCustomerInfoCache: CustomerInfoCache {
  /// The database file.
  package let path: String
  /// How the cache was opened.
  package let configuration: CacheConfiguration
  /// Set when the file was found damaged, at open or by a later write, and moved aside.
  package var damageReport: DamageReport? { damage.withLock { $0 } }
  /// The clock every read and write uses.
  public let clock: CacheClock

  /// The most recent read that could not use the file, why, and when: what explains an
  /// `unreadable`, `storageUnavailable` or `newerSchema` answer. Told to
  /// ``CacheConfiguration/onDiagnostic`` too, when it differs from the last one told.
  package var lastReadFailure: ReadFailureReport? { readFailure.withLock { $0 } }

  // Lock order: `writer`, then `reads`; never the other way round. A write holds `writer` for
  // its whole transaction and takes `reads` inside it, briefly, to collect read marks and to
  // install its result. Nothing takes `writer` while holding `reads`: the cross-process check
  // asks the writer connection, with a try-lock, before a read takes `reads` (see
  // `checkForOtherWrites()`), so no interleaving of reads and writes can deadlock.
  // `damage`, `readFailure`, `awaitingStorage` and `readOnlySchema` are leaves: nothing is
  // locked while they are held.
  /// The store's writer connection; nil once the cache is closed.
  let writer: Locked<StoreWriter?>
  /// The read path: the reader connection and everything resident in memory.
  let reads: Locked<ScopeReader>
  let damage: Locked<DamageReport?>
  let readFailure = Locked<ReadFailureReport?>(nil)
  /// When a read next asks whether another connection wrote.
  let watch: CrossConnectionWatch
  /// Writes this instance committed, for ``changeMark()``.
  let committedWrites = Locked<UInt64>(0)
  /// Who ``observeWrites(_:)`` registered.
  let writeObservers = WriteObservers()
  /// Set while the file is there but cannot be opened yet; nil once open, and once closed.
  /// A leaf, like `damage`.
  let awaitingStorage: Locked<AwaitingStorage?>
  /// Set when the file is from a newer schema this build can still read: why every write is
  /// refused. A leaf.
  let readOnlySchema: Locked<SQLiteCacheError?>
  /// Whether ``CacheConfiguration/onDiagnostic`` was last told the storage is unavailable.
  let storageHealth: StorageHealth

  /// Opens the cache at `path`, creating the file (mode 0600) and the schema when needed, and
  /// applies the retention rules.
  ///
  /// A file from a newer version of the app is read when that version recorded that this
  /// build still reads it correctly: reads answer as they would there. Otherwise reads answer
  /// ``UnavailableReason/newerSchema``. Either way every write throws a ``StorageFailure`` of
  /// kind ``StorageFailure/Kind/newerSchema`` and the file is left as it is.
  ///
  /// A file that is there but cannot be opened yet (permissions, or data protection before
  /// the device's first unlock) is no error: the cache is made without it, reads answer
  /// ``UnavailableReason/storageUnavailable`` and writes throw a ``StorageFailure`` of kind
  /// ``StorageFailure/Kind/unavailable``, until it opens (see
  /// ``protectedDataDidBecomeAvailable()``). Nothing is created beside or over it.
  ///
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` for a configuration value
  ///   out of range, before the file is touched;
  ///   otherwise ``CacheError/storage(_:_:)``, whose ``StorageFailure/kind`` is
  ///   ``StorageFailure/Kind/damaged`` for a damaged file that a support tool opened without
  ///   moving it aside, ``StorageFailure/Kind/missing`` when the file does not exist and
  ///   ``CacheConfiguration/createIfMissing`` is false, and another kind for a failed SQLite
  ///   or file-system call; its description names the file or the call.
  public init(
    path: String, configuration: CacheConfiguration = CacheConfiguration(),
    clock: CacheClock = .system
  ) throws(CacheError) {
    try configuration.validate()
    self.path = path
    self.configuration = configuration
    self.clock = clock
    watch = CrossConnectionWatch(interval: configuration.changeCheckInterval)
    let storageHealth = StorageHealth()
    self.storageHealth = storageHealth
    let opened: DatabaseOpener.Opened
    do {
      opened = try DatabaseOpener(path: path, configuration: configuration, clock: clock).open()
    } catch .storage(_, let failure)
      where failure.kind == .unavailable || failure.kind == .newerSchema
    {
      // A directory or a device where the file should be never gets here: the opener refuses
      // it by name, a mistake waiting cannot mend.
      damage = Locked(nil)
      writer = Locked(nil)
      awaitingStorage = Locked(AwaitingStorage(failure: failure, lastAttempt: clock.now()))
      reads = Locked(
        ScopeReader(
          reader: nil, dataVersion: nil, writerSerial: nil, trustRoots: configuration.trustRoots,
          awaitingStorage: awaitingStorage, storageHealth: storageHealth))
      readOnlySchema = Locked(nil)
      tellOpening(damaged: false, newer: nil, awaiting: failure)
      return
    }
    damage = Locked(opened.damage)
    writer = Locked(opened.writer)
    awaitingStorage = Locked(nil)
    reads = Locked(
      ScopeReader(
        reader: opened.reader, dataVersion: opened.dataVersion,
        writerSerial: opened.writer.serial, trustRoots: configuration.trustRoots,
        awaitingStorage: awaitingStorage, storageHealth: storageHealth))
    readOnlySchema = Locked(opened.readOnly)
    tellOpening(damaged: opened.damage != nil, newer: opened.readOnly, awaiting: nil)
    if configuration.pruneOnOpen, opened.readOnly == nil {
      try prune()
    }
  }

  /// Persists the read marks reads keep in memory (as ``flush()`` does) and closes the file.
  ///
  /// Call it when the cache is no longer needed, to learn whether the last flush failed.
  /// Afterwards ``access(to:for:policy:)`` answers `offlineUnavailable(.unreadable)`,
  /// ``activeEntitlementKeys(for:policy:)`` is empty, and everything that can throw (writes,
  /// ``load(_:)``, ``evaluatedCustomerInfo(for:policy:)``, the inspector) throws
  /// ``CacheError/closed``; closing again does nothing. The connections close even when the
  /// flush fails; with nothing to persist no transaction is opened.
  ///
  /// - Throws: ``CacheError/storage(_:_:)`` when the read marks could not be written. They
  ///   only ever hold retention and rollback hints: no snapshot is lost.
  public func close() throws(CacheError) {
    // A closed cache never opens its file again.
    awaitingStorage.withLock { $0 = nil }
    try writer.withLock { connection throws(CacheError) in
      guard let open = connection else { return }
      var flushFailure: CacheError?
      // A newer build's file is never written, read marks included.
      if readOnlySchema.withLock({ $0 == nil }) {
        do throws(SQLiteError) {
          try attemptWrite(on: open, onlyReadMarks: true) { _, _ throws(SQLiteError) in { _ in } }
        } catch {
          flushFailure = .sqlite(.flush, error)
        }
      }
      reads.withLock { $0.replaceReader(with: nil, dataVersion: nil, writerSerial: nil) }
      connection = nil
      if let flushFailure { throw flushFailure }
    }
  }

  deinit {
    // Read marks are persisted lazily; this is the last chance for a cache that was not
    // closed. A failure cannot be reported here (close() reports it) and only loses retention
    // and rollback hints, never a snapshot; after close() there is nothing left to flush.
    guard configuration.persistsReadTimeBookkeeping else { return }
    _ = try? flush()
  }

  /// The schema version this build writes.
  package static var supportedSchemaVersion: Int { Migrator.embedded.latestVersion }
}
