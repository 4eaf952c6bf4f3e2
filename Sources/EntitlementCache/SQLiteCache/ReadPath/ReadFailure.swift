/// Why a read could not produce a resident scope.
enum ReadFailure: Error {
  case storage(SQLiteError)
  case snapshot(SnapshotError)
  /// The cache was closed.
  case closed
  /// The read's policy is out of range.
  case invalid(CacheError)
  /// The file could not be opened yet (``UnavailableReason/storageUnavailable``), or is a newer
  /// build's that this one does not read (``UnavailableReason/newerSchema``).
  case unavailable(StorageFailure)

  /// The reason a decision gives for it: storage that is there but cannot be used yet is
  /// `storageUnavailable`, a newer build's file beyond the read floor `newerSchema`; anything
  /// else is `unreadable`. A file the cache waits for that turned out another program's
  /// reads `unreadable`; one whose opening failed for a while (a lock, a full disk while
  /// migrating) still reads as not there yet, since it is tried again.
  var unavailableReason: UnavailableReason {
    switch self {
    case .unavailable(let failure) where failure.kind == .newerSchema: .newerSchema
    case .unavailable(let failure) where failure.kind == .damaged: .unreadable
    case .unavailable: .storageUnavailable
    // A read of a file that is there refused by the operating system is what a protected
    // file does while the device is locked: try again, never "damaged" or "empty".
    case .storage(let error) where error.storageFailureKind == .unavailable: .storageUnavailable
    case .storage, .snapshot, .closed, .invalid: .unreadable
    }
  }

  /// The error a read's caller throws or reports for it.
  var cacheError: CacheError {
    switch self {
    case .storage(let error): .sqlite(.load, error)
    case .snapshot(let error): .unreadableSnapshot(error)
    case .closed: .closed
    case .invalid(let error): error
    case .unavailable(let failure): .storage(.load, failure)
    }
  }
}
