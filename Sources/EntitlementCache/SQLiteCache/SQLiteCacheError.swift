import CSQLite

/// Why the SQLite cache's storage failed: the underlying error of a
/// ``CacheError/storage(_:_:)`` that ``SQLiteCustomerInfoCache`` throws.
///
/// Paths are the database's own, never an identity; SQL text never includes bound values.
package enum SQLiteCacheError: Error, Sendable, Hashable, CustomStringConvertible {
  /// A SQLite call failed.
  case sqlite(SQLiteError)
  /// The file was written by a newer schema than this build knows; it was left untouched.
  case newerSchema(path: String, found: Int, supported: Int)
  /// The file is not a database or is damaged. When `movedTo` is set the file was moved
  /// there, never erased, and a new empty database took its place.
  case damaged(path: String, movedTo: String?, cause: SQLiteError)
  /// There is no database at the path and the configuration does not create one.
  case missing(path: String)
  /// A file-system call failed (creating the file, moving a damaged file aside).
  case fileSystem(path: String, reason: String)

  /// What kind of storage failure this is.
  package var kind: StorageFailure.Kind {
    switch self {
    case .sqlite(let error): error.storageFailureKind
    case .newerSchema: .newerSchema
    case .damaged: .damaged
    case .missing: .missing
    case .fileSystem: .other
    }
  }

  /// One line naming the file or the SQLite call and the problem.
  package var description: String {
    switch self {
    case .sqlite(let error):
      return error.description
    case .newerSchema(let path, let found, let supported):
      return
        "\(path): written by schema version \(found), newer than this build's \(supported); file left untouched"
    case .damaged(let path, let movedTo?, let cause):
      return "\(path): damaged (\(cause.message)); moved aside to \(movedTo)"
    case .damaged(let path, nil, let cause):
      return "\(path): damaged (\(cause.message))"
    case .missing(let path):
      return "\(path): no such database"
    case .fileSystem(let path, let reason):
      return "\(path): \(reason)"
    }
  }
}

extension SQLiteError {
  /// The kind of storage failure a failed call is, from its extended result code.
  ///
  /// Unavailable is what a file that is there but refused gives: a plain `SQLITE_CANTOPEN`
  /// (not a directory, not a path that cannot be made whole, which stay errors), or an I/O
  /// error reading it, taking its locks or mapping its shared memory. A write's I/O error is
  /// not among them: that may be a failing disk.
  var storageFailureKind: StorageFailure.Kind {
    switch resultCode {
    case SQLITE_FULL: .full
    case SQLITE_CORRUPT, SQLITE_NOTADB: .damaged
    case SQLITE_ERROR where isMissingSchema: .damaged
    case SQLITE_CANTOPEN where extendedResultCode == SQLITE_CANTOPEN: .unavailable
    // A file that cannot be written now: its permissions (``DatabaseFile/notWritable``), or
    // a file system mounted read-only.
    case SQLITE_READONLY where extendedResultCode == SQLITE_READONLY: .unavailable
    case SQLITE_IOERR where Self.refusedAccess.contains(extendedResultCode): .unavailable
    default: .other
    }
  }

  /// `SQLITE_IOERR_READ`, `SHORT_READ`, `FSTAT`, `RDLOCK`, `ACCESS`, `LOCK`, `SHMOPEN`,
  /// `SHMSIZE`, `SHMLOCK` and `SHMMAP`, whose macros Swift cannot import.
  private static let refusedAccess: Set<Int32> = Set(
    [1, 2, 7, 9, 13, 15, 18, 19, 20, 21].map { SQLITE_IOERR | Int32($0 << 8) })
}

extension CacheError {
  /// The SQLite cache's failure during `operation`.
  static func sqlite(_ operation: CacheOperation, _ error: SQLiteCacheError) -> CacheError {
    .storage(operation, StorageFailure(error.kind, underlying: error))
  }

  /// A failed SQLite call during `operation`.
  static func sqlite(_ operation: CacheOperation, _ error: SQLiteError) -> CacheError {
    sqlite(operation, .sqlite(error))
  }

  /// The SQLite cache's own error inside a storage failure, if this is one.
  package var sqliteCacheError: SQLiteCacheError? {
    guard case .storage(_, let failure) = self else { return nil }
    return failure.underlying as? SQLiteCacheError
  }

  /// The failed SQLite call inside a storage failure, if this is one: the call itself, or
  /// what found a file damaged.
  package var sqliteCause: SQLiteError? {
    switch sqliteCacheError {
    case .sqlite(let error)?, .damaged(_, _, let error)?: error
    default: nil
    }
  }
}
