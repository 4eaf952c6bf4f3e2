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
  /// Moving another cache file into this one.
  case relocate = "relocate file"
}

/// Everything a ``CustomerInfoCache`` throws, in terms any storage can produce: a rejected
/// input, a refused write, a stored snapshot that no longer decodes, a closed cache, or a
/// failure of the storage itself with that storage's own error inside.
///
/// Messages name the operation and never contain tokens, raw identities or bound values.
public enum CacheError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The snapshot was rejected; nothing was written.
  case invalidSnapshot(SnapshotError)
  /// An ``ObservedPurchase`` was rejected (`field` names which part); nothing was written.
  /// The message never shows the value.
  case invalidPurchase(field: String, problem: String)
  /// A configuration or policy value is out of range; nothing was opened, read or written.
  case invalidConfiguration(field: String, problem: String)
  /// The snapshot failed verification and the scope's stored snapshot is verified: it was
  /// not stored, and the verified one is still readable.
  case unverifiedSnapshot(VerificationFailure)
  /// The stored snapshot no longer decodes (it was altered outside this library).
  case unreadableSnapshot(SnapshotError)
  /// The storage failed during the operation; a failed write changed nothing. The failure
  /// says what kind of trouble it is and carries the storage's own error.
  case storage(CacheOperation, StorageFailure)
  /// The cache was closed; nothing was read or written.
  case closed

  /// One line naming the operation and the problem.
  public var description: String {
    switch self {
    case .invalidSnapshot(let error):
      return error.description
    case .invalidPurchase(let field, let problem):
      return "purchase: \(field) \(problem)"
    case .invalidConfiguration(let field, let problem):
      return "configuration: \(field) \(problem)"
    case .unverifiedSnapshot(let reason):
      return
        "\(CacheOperation.store.rawValue): failed verification (\(reason.rawValue)); the verified snapshot stored is kept"
    case .unreadableSnapshot(let error):
      return "stored snapshot does not decode: \(error)"
    case .storage(let operation, let failure):
      return "\(operation.rawValue): \(failure)"
    case .closed:
      return "the cache was closed"
    }
  }
}
