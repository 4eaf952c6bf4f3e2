/// A failure of a cache's storage: what kind of trouble it is, which a caller can act on
/// without knowing the storage, and the storage's own error, for logs.
///
/// A custom cache wraps its own errors in one; the SQLite cache's names the file and the failed
/// SQLite call.
/// Two failures are equal when their kinds and descriptions are: the underlying error need
/// not be equatable.
public struct StorageFailure: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of trouble a storage failure is.
  ///
  /// A struct rather than an enum so that kinds can be added without breaking a `switch`.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    /// The kind's name, such as `unavailable`.
    public let description: String

    private init(_ name: String) { description = name }

    /// The storage exists but cannot be opened or read now (permissions, or data protection
    /// before the device's first unlock). Trying again later may succeed.
    public static let unavailable = Kind("unavailable")
    /// The device has no room for the write; nothing was written.
    public static let full = Kind("full")
    /// The stored data is damaged or is not this storage's format.
    public static let damaged = Kind("damaged")
    /// The storage was written by a newer version of the app than this one understands.
    public static let newerSchema = Kind("newer schema")
    /// There is no storage where the configuration points, and it was not to be created.
    public static let missing = Kind("missing")
    /// Anything else: a lock held too long by another process, a file-system call that
    /// failed, an error of the storage's own.
    public static let other = Kind("other")
  }

  /// What kind of trouble this is.
  public var kind: Kind
  /// The storage's own error, for its description. Like every error the cache
  /// throws, it must not contain tokens, raw identities or stored values.
  public var underlying: any Error & Sendable

  /// Creates a failure of `kind` around a storage's own error.
  public init(_ kind: Kind, underlying: any Error & Sendable) {
    self.kind = kind
    self.underlying = underlying
  }

  /// The underlying error's description.
  public var description: String { String(describing: underlying) }

  /// Whether two failures have the same kind and description.
  public static func == (lhs: StorageFailure, rhs: StorageFailure) -> Bool {
    lhs.kind == rhs.kind && lhs.description == rhs.description
  }

  /// Hashes the kind and the description, the parts ``==(_:_:)`` compares.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(kind)
    hasher.combine(description)
  }
}
