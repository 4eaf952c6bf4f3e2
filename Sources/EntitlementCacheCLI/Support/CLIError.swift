import EntitlementCache

/// The exit status of the tool (<doc:CommandLineTool>).
package enum ExitStatus: Int32, Sendable {
  /// Success; for `check`, access is granted.
  case success = 0
  /// `check` answered and access is not granted.
  case notGranted = 1
  /// The command line or the input is wrong; nothing was changed.
  case usage = 2
  /// The database could not be opened, read or written; nothing was changed.
  case storage = 3
}

/// A failed command: one line for stderr and the exit status.
package struct CLIError: Error, Sendable {
  package let status: ExitStatus
  package let message: String

  static func usage(_ message: String) -> CLIError {
    CLIError(status: .usage, message: message)
  }

  static func storage(_ message: String) -> CLIError {
    CLIError(status: .storage, message: message)
  }
}

extension CLIError {
  /// Maps a support-tool error: a bad hash prefix is a usage error, the rest as the cache's.
  init(_ error: InspectionError, path: String) {
    switch error {
    case .ambiguousScope, .invalidScopeHashPrefix: self = .usage(error.description)
    case .cache(let error): self.init(error, path: path)
    }
  }

  /// Maps a library error to a status and a one-line message that names the file.
  init(_ error: CacheError, path: String) {
    switch error {
    case .invalidSnapshot(let problem):
      self = .usage(problem.description)
    case .invalidConfiguration, .invalidPurchase, .unverifiedSnapshot:
      self = .usage(error.description)
    case .unreadableSnapshot(let problem):
      self = .storage("\(path): stored snapshot does not decode (\(problem))")
    case .closed:
      self = .storage(error.description)
    case .storage(let operation, let failure):
      self = .storage(Self.explain(failure, during: operation, path: path))
    }
  }

  /// One line for a failed storage call, naming the file that is in the way.
  private static func explain(
    _ failure: StorageFailure, during operation: CacheOperation, path: String
  ) -> String {
    switch failure.underlying as? SQLiteCacheError {
    case .sqlite(let cause)? where cause.isReadOnly:
      // SQLite says "attempt to write a readonly database" even when the database is writable
      // and a `-shm` or `-wal` beside it is not: name the file that is in the way.
      return DatabaseLocation.readOnlyExplanation(for: path, operation: operation.rawValue)
    case _ where failure.kind == .unavailable:
      // What the app would wait for (a file the device keeps locked, permissions): the tool
      // says so and stops.
      return "\(path): cannot be opened now (\(failure)); the file is unavailable, not damaged, "
        + "and was left untouched"
    case .sqlite(let cause)?:
      // The library's description adds the SQL text, which spans lines and helps nobody here.
      return "\(path): cannot \(operation.rawValue): \(cause.message)"
    case .fileSystem(let failingPath, let reason)?:
      return "\(failingPath): cannot \(operation.rawValue): \(reason)"
    case .damaged(_, nil, _)?:
      return failure.description + "; left untouched"
    case .newerSchema?, .damaged?, .missing?:
      return failure.description
    case nil:
      return "\(path): cannot \(operation.rawValue): \(failure)"
    }
  }
}
