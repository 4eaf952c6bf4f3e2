/// What the cache was doing when an error happened.
public enum CacheOperation: String, Sendable, Hashable {
  /// Opening or creating the database file.
  case open
  /// Bringing the schema up to date.
  case migrate
  /// Writing a snapshot.
  case store = "store snapshot"
  /// Recording a failed refresh.
  case recordRefreshFailure = "record refresh failure"
  /// Deleting a scope.
  case remove = "remove scope"
  /// Reading a scope.
  case load = "load scope"
  /// Deleting scopes by retention rules.
  case prune
  /// Listing scopes (support tools).
  case listScopes = "list scopes"
  /// Checking the file's health.
  case inspect
  /// Persisting read-time bookkeeping.
  case flush
  /// Enqueueing a purchase.
  case enqueuePurchase = "enqueue purchase"
  /// Changing a queued purchase's state.
  case updatePurchase = "update purchase"
  /// Reading the purchase queue.
  case readPurchases = "read purchase queue"
}

/// Everything the cache's public API throws. Messages name the operation and never contain
/// tokens, raw identities or bound values.
public enum CacheError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The snapshot was rejected; nothing was written.
  case invalidSnapshot(SnapshotError)
  /// SQLite failed during the operation; a failed write changed nothing.
  case storage(CacheOperation, SQLiteError)
  /// The file was written by a newer schema than this build knows; it was left untouched.
  case schemaTooNew(path: String, found: Int, supported: Int)
  /// The file is not a database or is damaged. When `movedTo` is set the file was moved
  /// there, never erased, and a new empty database took its place.
  case damagedDatabase(path: String, movedTo: String?, cause: SQLiteError)
  /// There is no database at the path and the configuration does not create one.
  case databaseMissing(path: String)
  /// A file-system call failed (creating the file, moving a damaged file aside).
  case fileSystem(CacheOperation, path: String, reason: String)
  /// The stored snapshot no longer decodes (it was altered outside this library).
  case unreadableSnapshot(SnapshotError)
  /// The cache was closed (``SQLiteCustomerInfoCache/close()``); nothing was written.
  case closed
  /// A ``CacheConfiguration`` value is out of range; nothing was opened.
  case invalidConfiguration(field: String, problem: String)
  /// The snapshot failed verification and the scope's stored snapshot is verified: it was
  /// not stored (DESIGN §12), and the verified one is still readable.
  case unverifiedSnapshot(VerificationFailure)
  /// An ``ObservedPurchase`` was rejected (`field` names which part); nothing was written.
  /// The message never shows the value.
  case invalidPurchase(field: String, problem: String)

  /// One line naming the operation and the problem.
  public var description: String {
    switch self {
    case .invalidSnapshot(let error):
      return error.description
    case .storage(let operation, let error):
      return "\(operation.rawValue): \(error)"
    case .schemaTooNew(let path, let found, let supported):
      return
        "\(path): written by schema version \(found), newer than this build's \(supported); file left untouched"
    case .damagedDatabase(let path, let movedTo?, let cause):
      return "\(path): damaged (\(cause.message)); moved aside to \(movedTo)"
    case .damagedDatabase(let path, nil, let cause):
      return "\(path): damaged (\(cause.message))"
    case .databaseMissing(let path):
      return "\(path): no such database"
    case .fileSystem(let operation, let path, let reason):
      return "\(operation.rawValue): \(path): \(reason)"
    case .unreadableSnapshot(let error):
      return "stored snapshot does not decode: \(error)"
    case .closed:
      return "the cache was closed"
    case .invalidConfiguration(let field, let problem):
      return "configuration: \(field) \(problem)"
    case .unverifiedSnapshot(let reason):
      return
        "\(CacheOperation.store.rawValue): failed verification (\(reason.rawValue)); the verified snapshot stored is kept"
    case .invalidPurchase(let field, let problem):
      return "purchase: \(field) \(problem)"
    }
  }
}
