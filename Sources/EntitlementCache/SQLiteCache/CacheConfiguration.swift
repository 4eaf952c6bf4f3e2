#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How a ``SQLiteCustomerInfoCache`` opens, stores and prunes. Every knob has a default.
public struct CacheConfiguration: Sendable {
  /// What to do with a file that is not a database or is damaged.
  package enum DamageHandling: Sendable, Hashable {
    /// Move it aside (never erase it), start a new empty database, and report it in
    /// ``SQLiteCustomerInfoCache/damageReport``. Reads answer `offlineUnavailable` until a
    /// refresh writes a new snapshot. The default for apps.
    case moveAside
    /// Throw a storage error with ``SQLiteCacheError/damaged(path:movedTo:cause:)`` and leave the file alone.
    /// For inspection tools.
    case fail
  }

  /// How hard a commit works to survive power loss.
  public enum Durability: Sendable, Hashable {
    /// `synchronous=NORMAL` in WAL mode: a commit survives an app crash; a power loss may
    /// lose the latest commits but never corrupts. The default: a lost snapshot is refetched.
    case normal
    /// `synchronous=FULL`: every commit is on disk before it returns.
    case full
  }

  /// When the operating system lets the app read the database file, on Apple platforms: the
  /// data protection class the file is created in, and its `-wal` and `-shm` companions with
  /// it (`SQLITE_OPEN_FILEPROTECTION_*`). A file that exists keeps the class it has. Other
  /// platforms have no such classes and ignore it.
  public enum FileProtection: Sendable, Hashable {
    /// Readable only while the device is unlocked. A prewarmed launch, a background fetch or
    /// a push handled while the device is locked finds the file unavailable.
    case complete
    /// A file already open stays readable when the device locks; opening needs it unlocked.
    case completeUnlessOpen
    /// Readable from the device's first unlock after a reboot until the next reboot: what
    /// background work needs. The default.
    case completeUntilFirstUserAuthentication
    /// Always readable.
    case none
  }

  /// The file's data protection class on Apple platforms; ignored elsewhere. Default
  /// ``FileProtection/completeUntilFirstUserAuthentication``. Before the first unlock even
  /// that class is not readable: reads answer ``UnavailableReason/storageUnavailable`` then.
  public var fileProtection: FileProtection = .completeUntilFirstUserAuthentication

  /// The policy reads use when they do not pass one. Default ``OfflinePolicy/conservative``.
  public var policy: OfflinePolicy = .conservative
  /// Create the file when it does not exist. Default true.
  public var createIfMissing = true
  /// What to do with a damaged file. Default ``DamageHandling/moveAside``.
  package var damageHandling: DamageHandling = .moveAside
  /// Default ``Durability/normal``.
  public var durability: Durability = .normal
  /// How long a statement waits for another process's lock. Default 5 s.
  public var busyTimeout: TimeInterval = 5
  /// A scope that can no longer grant anything and was not used for this long is pruned (a
  /// blocked installation of an entitled user counts as granting). Default 90 days.
  public var retention: TimeInterval = 90 * 86_400
  /// At most this many scopes are kept; the least recently used go first. Default 100, far
  /// above one device's real account switches, and a bound on a shared device's file.
  public var maxScopes = 100
  /// At most this many final purchase-queue entries (synced, conflicted, rejected, expired)
  /// are kept, the oldest going first; entries still to post are never deleted. Default
  /// 1,000. A synced entry is also deleted 30 days after it synced,
  /// the others then keep only their binding (no token), and an unsent one expires
  /// 30 days after it was observed, so on a shared device the queue holds
  /// at most this many bindings and two months of tokens.
  public var maxFinalPurchases = 1_000
  /// Run the retention rules when the cache opens. Default true.
  package var pruneOnOpen = true
  /// Write the high-water marks and last-use times that reads raise in memory to the file,
  /// lazily with the next write and when the cache is deinitialized. Default true. Inspection
  /// tools that read with an overridden clock set it false, so a what-if read at a future
  /// time never moves the file's trusted time (which would expire access for the real app).
  package var persistsReadTimeBookkeeping = true
  /// How often a read asks whether another connection or process wrote to the file: the
  /// change check of <doc:Storage#Writes-by-another-process>, which ``SQLiteCustomerInfoCache/changeMark()``
  /// asks too. Default 50 ms: such a write is seen by this cache's reads within about 50 ms
  /// (the latency measured is in that article, beside the client's
  /// ``ClientConfiguration/changeCheckInterval``); zero checks on every read. At most a day.
  public var changeCheckInterval: Duration = .milliseconds(50)

  /// The largest snapshot ``SQLiteCustomerInfoCache/store(_:for:)`` accepts. Default
  /// ``CustomerInfoSnapshot/defaultSizeLimit``.
  public var snapshotSizeLimit = CustomerInfoSnapshot.defaultSizeLimit

  /// The pinned Ed25519 roots (<doc:TrustedSnapshots>). When set, the library decides verification
  /// itself: a snapshot is `verified` only when its signature checks, and `failed` with a
  /// ``VerificationFailure`` otherwise; the body's own `verification` field is ignored. The
  /// signed material is stored with the snapshot and checked again, against the normalized
  /// columns too, whenever a scope is read from the file; a failed snapshot never replaces a
  /// verified one. Default none: verification is the body's claim.
  public var trustRoots: TrustRoots?

  /// Told what the cache noticed, for an SDK's log: storage unavailable and available again,
  /// damaged, a newer app version's file, a full disk, a snapshot found tampered or an answer
  /// that failed verification, a read that failed. Give the refresh client the same handler
  /// (``ClientConfiguration/onDiagnostic``): it tells only the client's own events, never
  /// these. Called with none of the cache's locks held; what
  /// happens at open is told before the initializer returns. Default none: it is the one
  /// channel through which the cache says why a read answered `unreadable`, or that it moved
  /// a damaged file aside.
  public var onDiagnostic: DiagnosticHandler?

  /// The registered SQLite VFS both connections open the file through; nil for the default.
  /// Package-only: the fault-injecting and power-cut VFS of the reliability tests.
  package var vfsName: String?

  /// The defaults.
  public init() {}

  /// Checks every knob before the cache uses one: a value that would make no sense, or trap a
  /// conversion (an infinite busy timeout, a negative interval, NaN), is an error naming the
  /// field. ``SQLiteCustomerInfoCache/init(path:configuration:clock:)`` calls it first.
  ///
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)``.
  package func validate() throws(CacheError) {
    try Self.check("busyTimeout", busyTimeout, within: 0...Self.longestBusyTimeout)
    guard changeCheckInterval >= .zero, changeCheckInterval <= Self.longestCheckInterval else {
      throw .invalidConfiguration(
        field: "changeCheckInterval", problem: "must be at least 0 s and at most 86400 s")
    }
    try Self.check("retention", retention, within: 0...Double.greatestFiniteMagnitude)
    guard maxScopes >= 0 else {
      throw .invalidConfiguration(field: "maxScopes", problem: "must not be negative")
    }
    guard maxFinalPurchases >= 0 else {
      throw .invalidConfiguration(field: "maxFinalPurchases", problem: "must not be negative")
    }
    guard snapshotSizeLimit > 0 else {
      throw .invalidConfiguration(field: "snapshotSizeLimit", problem: "must be positive")
    }
    try policy.validate(prefix: "policy.", trustRoots: trustRoots)
  }

  /// SQLite takes the busy timeout in Int32 milliseconds: about 24 days.
  static let longestBusyTimeout = TimeInterval(Int32.max / 1000)
  /// A day: longer would mean another process's writes are never seen in practice, and the
  /// interval is converted to nanoseconds.
  static let longestCheckInterval = Duration.seconds(86_400)

  static func check(
    _ field: String, _ value: TimeInterval, within range: ClosedRange<TimeInterval>
  ) throws(CacheError) {
    guard value.isFinite else {
      throw .invalidConfiguration(field: field, problem: "must be a finite number of seconds")
    }
    guard range.contains(value) else {
      let upper =
        range.upperBound == .greatestFiniteMagnitude ? "" : " and at most \(range.upperBound) s"
      throw .invalidConfiguration(
        field: field, problem: "must be at least \(range.lowerBound) s\(upper)")
    }
  }
}

extension OfflinePolicy {
  /// Checks the policy as the package's caches do before they read with it: a cache of your
  /// own calls this on a policy it is given, since a window that is NaN, negative or infinite
  /// would fail open and grant lifetime access forever.
  ///
  /// - Parameter trustRoots: The cache's pinned roots; without them a policy that requires a
  ///   verified snapshot is refused, since `verified` would be only the body's claim.
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` naming the field.
  public func validate(trustRoots: TrustRoots?) throws(CacheError) {
    try validate(prefix: "", trustRoots: trustRoots)
  }

  /// Every duration finite and not negative, and no verified snapshot required of a cache
  /// without trust roots, where `verified` would be only the body's claim; `prefix` names
  /// where the policy sits.
  func validate(prefix: String, trustRoots: TrustRoots?) throws(CacheError) {
    if requireVerified, trustRoots == nil {
      throw .invalidConfiguration(
        field: prefix + "requireVerified",
        problem: "needs trustRoots: without them `verified` is only the body's claim")
    }
    try validateWindows(prefix: prefix)
  }

  /// Every duration finite and not negative: the part of the check that fails open when
  /// skipped, which ``EntitlementEvaluator`` makes too.
  func validateWindows(prefix: String = "") throws(CacheError) {
    let any = Self.windowRange
    try CacheConfiguration.check(prefix + "staleAfter", staleAfter, within: any)
    try CacheConfiguration.check(
      prefix + "nonExpiringMaxOfflineAge", nonExpiringMaxOfflineAge, within: any)
    if let maxSnapshotAge {
      try CacheConfiguration.check(prefix + "maxSnapshotAge", maxSnapshotAge, within: any)
    }
    try CacheConfiguration.check(
      prefix + "clockRollbackTolerance", clockRollbackTolerance, within: any)
    if let window = acceptsImportedSnapshotsFor {
      try CacheConfiguration.check(prefix + "acceptsImportedSnapshotsFor", window, within: any)
    }
  }

  /// The range every window of a policy must lie in: finite and not negative.
  static let windowRange: ClosedRange<TimeInterval> = 0...Double.greatestFiniteMagnitude

  /// Whether every window is one the caches read with (``validateWindows(prefix:)``).
  var hasValidWindows: Bool {
    do {
      try validateWindows()
      return true
    } catch {
      return false
    }
  }

  /// This policy with each window the caches refuse (NaN, negative or infinite) replaced by
  /// the conservative policy's.
  var withRefusedWindowsConservative: OfflinePolicy {
    // The range's bounds are finite, so it holds no NaN and no infinity.
    func usable(_ value: TimeInterval) -> Bool { Self.windowRange.contains(value) }
    let conservative = OfflinePolicy.conservative
    var policy = self
    if !usable(staleAfter) { policy.staleAfter = conservative.staleAfter }
    if !usable(nonExpiringMaxOfflineAge) {
      policy.nonExpiringMaxOfflineAge = conservative.nonExpiringMaxOfflineAge
    }
    if let age = maxSnapshotAge, !usable(age) {
      policy.maxSnapshotAge = conservative.maxSnapshotAge
    }
    if !usable(clockRollbackTolerance) {
      policy.clockRollbackTolerance = conservative.clockRollbackTolerance
    }
    if let window = acceptsImportedSnapshotsFor, !usable(window) {
      policy.acceptsImportedSnapshotsFor = conservative.acceptsImportedSnapshotsFor
    }
    return policy
  }
}
