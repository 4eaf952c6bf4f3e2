/// How the refresh client behaves. Every field has a documented default.
public struct ClientConfiguration: Sendable {
  /// The entitlement keys every ``ClientState`` carries decisions for. Keys asked through
  /// ``EntitlementClient/accessUpdates(to:)`` are added while someone listens. Default none.
  public var watchedEntitlements: Set<String> = []
  /// How long after a refresh a snapshot is due again while the app is in the background.
  /// In the foreground the policy's `staleAfter` decides. Default 25 hours.
  public var backgroundStaleAfter: Duration = .seconds(25 * 3600)
  /// The longest random delay before a refresh started from the background, so a fleet of
  /// devices woken together does not call the server together. Default 5 seconds.
  public var backgroundJitter: Duration = .seconds(5)
  /// The first retry delay after a failed fetch; each failure doubles it. Default 1 second.
  public var retryInitialDelay: Duration = .seconds(1)
  /// The longest retry delay. Default 5 minutes.
  public var retryMaxDelay: Duration = .seconds(300)
  /// The first delay before a queued purchase is posted again after a transient failure;
  /// each failure of that entry doubles it. Persisted with the entry, so it holds across
  /// launches. Default 2 seconds.
  public var purchaseRetryInitialDelay: Duration = .seconds(2)
  /// The longest such delay. Default 1 hour.
  public var purchaseRetryMaxDelay: Duration = .seconds(3600)
  /// How often, in the foreground, the client looks for a write by another process sharing
  /// the cache (a widget, an extension) and publishes it. Nil: never. Default 0.9 seconds: such
  /// a write is published within about 0.9 s (the figure measured is in the Storage article).
  public var changeCheckInterval: Duration? = .milliseconds(900)
  /// How long a fetch may take before it counts as a transient failure and the scope's flight
  /// ends, so one fetch that never answers cannot hold every later refresh. Nil: no limit.
  /// Default 60 seconds.
  public var fetchTimeout: Duration? = .seconds(60)
  /// Whether ``EntitlementClient/logOut(to:)`` removes the previous user's snapshot (shared
  /// devices). Default true.
  public var removesSnapshotOnLogOut = true
  /// Told what the client noticed, for an SDK's log: a refresh that failed (its flow and
  /// why), a retry scheduled, a suspected clock rollback, a purchase held in memory or bound
  /// to another user. It hears only the client: give the cache the same handler
  /// (``CacheConfiguration/onDiagnostic``), or what the storage noticed (unavailable, damaged,
  /// full, tampered) goes untold. Default none.
  public var onDiagnostic: DiagnosticHandler?

  /// The defaults.
  public init() {}

  /// Checks every value. ``EntitlementClient`` calls it.
  ///
  /// - Throws: ``CacheError/invalidConfiguration(field:problem:)`` naming the first bad field.
  package func validate() throws(CacheError) {
    let durations: [(String, Duration?)] = [
      ("backgroundStaleAfter", backgroundStaleAfter), ("backgroundJitter", backgroundJitter),
      ("retryInitialDelay", retryInitialDelay), ("retryMaxDelay", retryMaxDelay),
      ("changeCheckInterval", changeCheckInterval), ("fetchTimeout", fetchTimeout),
      ("purchaseRetryInitialDelay", purchaseRetryInitialDelay),
      ("purchaseRetryMaxDelay", purchaseRetryMaxDelay),
    ]
    for (field, value) in durations {
      if let value, value < .zero {
        throw .invalidConfiguration(field: field, problem: "must not be negative")
      }
    }
    if retryInitialDelay <= .zero {
      throw .invalidConfiguration(field: "retryInitialDelay", problem: "must be positive")
    }
    if retryMaxDelay < retryInitialDelay {
      throw .invalidConfiguration(
        field: "retryMaxDelay", problem: "must not be less than retryInitialDelay")
    }
    if purchaseRetryInitialDelay <= .zero {
      throw .invalidConfiguration(field: "purchaseRetryInitialDelay", problem: "must be positive")
    }
    if purchaseRetryMaxDelay < purchaseRetryInitialDelay {
      throw .invalidConfiguration(
        field: "purchaseRetryMaxDelay", problem: "must not be less than purchaseRetryInitialDelay")
    }
    if let interval = changeCheckInterval, interval <= .zero {
      throw .invalidConfiguration(
        field: "changeCheckInterval", problem: "must be positive (nil turns it off)")
    }
    if let timeout = fetchTimeout, timeout <= .zero {
      throw .invalidConfiguration(
        field: "fetchTimeout", problem: "must be positive (nil turns it off)")
    }
  }
}
