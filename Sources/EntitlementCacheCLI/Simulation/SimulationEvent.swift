import EntitlementCache

/// One thing a simulation printed: a publish, the end of a fetch, a `check` step, a queued
/// purchase's change, or a diagnostic the cache or the client told.
package struct SimulationEvent: Sendable {
  /// What happened.
  enum Kind: Sendable {
    /// The client published a state: the decision for every watched entitlement.
    case update(decisions: [String: AccessDecision])
    /// A fetch (or a forced wait for one) ended; `requestedAt` is when its request reached the
    /// server (true virtual time, in milliseconds since the Unix epoch), nil for a forced wait
    /// that ended before the answer.
    case fetch(flow: RefreshFlow, outcome: RefreshOutcome, requestedAt: Int64?)
    /// A `check` step read the cache-only decision.
    case check(AccessDecision)
    /// A queued purchase changed state; `user` is its observer.
    case purchase(QueuedPurchase)
    /// A `purchase` step observed a transaction another user observed first: nothing changed.
    case purchaseBoundToAnotherUser(transaction: String)
    /// The cache or the client told a diagnostic; `user` is its scope's, when it has one.
    case diagnostic(Diagnostic)
  }

  /// True virtual time, in milliseconds since the Unix epoch: the start plus the time elapsed,
  /// whatever a `setClock` step made the device's wall clock say.
  let at: Int64
  /// The user label the event is for; nil for a diagnostic of the whole file.
  let user: String?
  /// The index of the last step started when it happened: what a reader of the log, such as
  /// the demo, groups it under.
  let step: Int
  let kind: Kind
}

/// The events of one run, in the order they happened, and the index of the step running.
final class EventLog: Sendable {
  private struct State {
    var events: [SimulationEvent] = []
    var step = 0
  }

  private let state = Locked(State())
  /// Milliseconds since the Unix epoch in true virtual time.
  private let now: @Sendable () -> Int64

  init(now: @escaping @Sendable () -> Int64) {
    self.now = now
  }

  /// Every event so far.
  var events: [SimulationEvent] { state.withLock { $0.events } }

  /// Events recorded from now on belong to step `index`.
  func begin(step index: Int) {
    state.withLock { $0.step = index }
  }

  func record(user: String?, _ kind: SimulationEvent.Kind) {
    let at = now()
    state.withLock { state in
      state.events.append(SimulationEvent(at: at, user: user, step: state.step, kind: kind))
    }
  }
}
