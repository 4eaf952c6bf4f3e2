#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The one seam through which tests look inside a ``SQLiteCustomerInfoCache``: what memory
/// holds, the two connections, and the cross-connection rule. Nothing else of the store's
/// internals is reached from a test, so the store can be reshaped without rewriting its
/// tests' assertions. Internal: apps never see it.
struct StoreTestingSeam {
  let cache: SQLiteCustomerInfoCache

  /// Runs `body` on the writer connection, under its lock.
  func withWriter<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
    try cache.writer.withLock { connection -> Result<T, any Error> in
      guard let connection else { return .failure(CacheError.closed) }
      return Result { try body(connection.connection) }
    }.get()
  }

  /// Runs `body` on the reader connection, under the reads lock.
  func withReader<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
    try cache.reads.withLock { path -> Result<T, any Error> in
      guard let reader = path.reader else { return .failure(CacheError.closed) }
      return Result { try body(reader.connection) }
    }.get()
  }

  /// The scope's facts as memory holds them after a full read of the scope.
  func residentFacts(
    _ scope: CacheScope
  ) throws -> (entitlements: [String: EntitlementFacts], snapshot: SnapshotFacts?) {
    try cache.reads.withLock { path throws(ReadFailure) in
      let resident = try path.resident(scope, whole: false)
      return (resident.entitlements, resident.snapshot)
    }
  }

  /// Whether memory holds the scope.
  func isResident(_ scope: CacheScope) -> Bool {
    cache.reads.withLock { $0.residents[scope.key] != nil }
  }

  /// How many scopes memory holds.
  var residentCount: Int {
    cache.reads.withLock { $0.residents.table.count }
  }

  /// Reads the scope into memory, as its first read does.
  func readIntoMemory(_ scope: CacheScope) throws {
    _ = try residentFacts(scope)
  }

  /// Hands the read path a `data_version` read from a writer that is not the cache's own now.
  func observeFromAnotherWriter(dataVersion: Int64?) {
    cache.reads.withLock { $0.observe(dataVersion: dataVersion, writerSerial: .max) }
  }

  /// Hands the read path a `data_version` as the cross-connection check would.
  func observe(dataVersion: Int64?) {
    cache.reads.withLock {
      $0.observe(dataVersion: dataVersion, writerSerial: $0.writerSerial)
    }
  }

  /// The read marks memory holds that the file does not have yet.
  var unpersistedMarks: [ScopeKey: ReadMarks] {
    cache.reads.withLock { $0.residents.unpersistedMarks() }
  }

  /// How many stored bodies reads have decoded since the cache opened.
  var bodyDecodes: Int {
    cache.reads.withLock { $0.bodyDecodes }
  }

  /// Whether the next read asks whether another connection wrote.
  var isCrossConnectionCheckDue: Bool { cache.watch.isDue }

  /// The nanoseconds the cache waits between those checks.
  var crossConnectionCheckInterval: UInt64 { cache.watch.interval }
}

extension SQLiteCustomerInfoCache {
  /// See ``StoreTestingSeam``.
  var testingSeam: StoreTestingSeam { StoreTestingSeam(cache: self) }
}
