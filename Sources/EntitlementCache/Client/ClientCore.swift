#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The refresh client's mutable state, held under its one lock.
struct ClientCore {
  var identity: ClientIdentity
  /// Counts identity changes. A request captures it; a scope removed by `logOut` records the
  /// epoch it was removed at, so answers to requests made before are dropped.
  var epoch: UInt64 = 0
  var phase: AppPhase = .foreground
  var started = false
  var stopped = false
  /// The state last published, which new subscribers get first.
  var published: ClientState?
  /// Numbers the reads `publish` makes outside the lock, and the newest one applied.
  var readGeneration: UInt64 = 0
  var appliedGeneration: UInt64 = 0
  var stateSubscribers: [Int: AsyncStream<ClientState>.Continuation] = [:]
  var accessSubscribers: [Int: AccessSubscriber] = [:]
  var reportSubscribers: [Int: AsyncStream<RefreshReport>.Continuation] = [:]
  private var lastID = 0
  /// The fetch in flight and the one queued behind it, per scope.
  var flights: [ScopeKey: ScopeFlights] = [:]
  /// Scopes `logOut` removed, with the epoch of the removal.
  var removedScopes: [ScopeKey: UInt64] = [:]
  /// Every task the client started and that has not ended, so `stop()` cancels them all.
  var tasks: [Int: Task<Void, Never>] = [:]
  var boundaryTimer: ClientTask?
  var crossProcessCheck: ClientTask?
  var retry = RetrySchedule()
  /// How many answers each scope has had stored by this client, whatever flow brought them.
  var storedAnswers: [ScopeKey: UInt64] = [:]
  /// Each flight whose request has left, with its scope's ``storedAnswers`` then; removed when
  /// it lands. When it fails after another flow stored an answer meanwhile, the failure is
  /// older news than that answer: it is reported but neither recorded as a failed refresh
  /// (which would read `offline`) nor retried. Taken when the request leaves, not when the
  /// flight is made: a flight queued behind another, or waiting out the background delay, asks
  /// the server after the answers stored meanwhile.
  var storedAnswersWhenFetched: [ObjectIdentifier: UInt64] = [:]

  /// Whether an answer was stored for `flight`'s scope since its request left.
  func isSuperseded(_ flight: Flight) -> Bool {
    guard let then = storedAnswersWhenFetched[ObjectIdentifier(flight)] else { return false }
    return storedAnswers[flight.identity.scope.key, default: 0] != then
  }
  /// Every identity that was current in this process, by scope: the users whose queued
  /// purchases this client can post as. Only hashes reach the file, so after a relaunch a
  /// user's entries wait until that user is current again.
  var knownObservers: [ScopeKey: ClientIdentity] = [:]
  /// Purchases observed while the cache's storage was unavailable, with their observers, in
  /// the order observed: enqueued by the next drain pass that finds the storage open.
  var heldPurchases: [(purchase: ObservedPurchase, observer: ClientIdentity)] = []
  /// When a write signal may next start a drain for them, after an attempt that failed.
  var heldPurchasesRetryAt: Date?
  /// The drain pass running and the one queued behind it.
  var drain = DrainPasses()
  /// The wake-up for the earliest backed-off purchase.
  var purchaseRetry: ClientTask?
  var purchaseSubscribers: [Int: AsyncStream<PurchaseUpdate>.Continuation] = [:]
  /// The logs of the calls waiting for a sync result.
  var purchaseLogs: [Int: PurchaseChangeLog] = [:]

  init(identity: ClientIdentity) {
    self.identity = identity
    knownObservers[identity.scope.key] = identity
  }

  mutating func nextSubscriberID() -> Int {
    lastID += 1
    return lastID
  }

  /// Empties every subscriber list and returns the call that ends their streams, to be made
  /// after the lock is released: ending a stream runs its termination handler, which takes the
  /// lock again.
  mutating func takeSubscribers() -> () -> Void {
    let states = Array(stateSubscribers.values)
    let accesses = accessSubscribers.values.map(\.continuation)
    let reports = Array(reportSubscribers.values)
    let purchases = Array(purchaseSubscribers.values)
    stateSubscribers = [:]
    accessSubscribers = [:]
    reportSubscribers = [:]
    purchaseSubscribers = [:]
    return {
      for continuation in states { continuation.finish() }
      for continuation in accesses { continuation.finish() }
      for continuation in reports { continuation.finish() }
      for continuation in purchases { continuation.finish() }
    }
  }
}

/// A task the client started for one job (a timer, the cross-process check, a retry), which
/// replacing or stopping cancels.
struct ClientTask {
  let id: Int
  let task: Task<Void, Never>

  func cancel() { task.cancel() }
}

/// The fetch in flight for one scope, and the one that starts when it ends for flows that need
/// a fetch started after them.
struct ScopeFlights {
  var current: Flight?
  var queued: Flight?
}

/// The drain pass running and the one that starts when it ends.
struct DrainPasses {
  var current: DrainPass?
  var queued: DrainPass?
}

/// One `accessUpdates(to:)` stream: its key and the update it last delivered.
struct AccessSubscriber {
  let entitlement: String
  let continuation: AsyncStream<AccessUpdate>.Continuation
  private var last: AccessUpdate?

  init(entitlement: String, continuation: AsyncStream<AccessUpdate>.Continuation) {
    self.entitlement = entitlement
    self.continuation = continuation
  }

  /// Yields `update` unless it says what the last one said, for the same user.
  mutating func deliver(_ update: AccessUpdate) {
    if let last, last.appUserID.namesSameUser(as: update.appUserID),
      last.decision.saysTheSame(as: update.decision)
    {
      return
    }
    last = update
    continuation.yield(update)
  }
}

/// Backed-off retries after failed fetches (<doc:RefreshClient>): the first after the initial
/// delay, each next one twice as late up to the maximum, each scaled by a random factor in
/// 0.75..<1.25 (and still capped) so devices that failed together do not retry together.
struct RetrySchedule {
  var failures = 0
  /// The retry waiting for its delay, and the token it must still hold when the delay ends:
  /// cancelling a task whose sleep has just ended does not stop it, so it checks.
  var pending: ClientTask?
  var token: UInt64 = 0
  /// Until when, on the wall clock, automatic refreshes wait for the retry.
  var notBefore: Date?

  mutating func cancel() {
    pending?.cancel()
    pending = nil
    token &+= 1
  }

  mutating func reset() {
    cancel()
    failures = 0
    notBefore = nil
  }

  /// Whether a failure's backoff is still running.
  func isBackingOff(now: Date) -> Bool {
    notBefore.map { now < $0 } ?? false
  }

  /// The delay before the retry after one more failure.
  mutating func nextDelay(
    initial: Duration, maximum: Duration, randomFraction: Double
  ) -> Duration {
    failures += 1
    let doublings = min(failures - 1, 40)
    let base = min(initial.seconds * Double(1 << doublings), maximum.seconds)
    let jittered = min(base * (0.75 + 0.5 * randomFraction), maximum.seconds)
    return .ceilingMilliseconds(jittered)
  }
}
