/// One network fetch for one scope, which every refresh of that scope joins while it is in the
/// air (<doc:RefreshClient>).
///
/// The flight and a caller that stops waiting for it (a `fetchCurrent` timeout) take the same
/// lock to decide who writes first: either the caller records the timeout before the answer is
/// applied, and the answer then lands as `lateStored`, or the answer is already being applied
/// and the caller records nothing. A timeout can never be recorded after the answer it timed
/// out on.
final class Flight: Sendable {
  enum Phase {
    case fetching
    case abandoned
    case applying
    case finished(RefreshOutcome?)
  }

  private struct State {
    var phase: Phase = .fetching
    var onFinish: [@Sendable (RefreshOutcome?) -> Void] = []
  }

  /// The identity the request captured when it was made.
  let identity: ClientIdentity
  /// The identity epoch then: an answer for a scope removed at a later epoch is dropped.
  let epoch: UInt64
  /// The flow that started it.
  let flow: RefreshFlow
  private let state = Locked(State())

  init(identity: ClientIdentity, epoch: UInt64, flow: RefreshFlow) {
    self.identity = identity
    self.epoch = epoch
    self.flow = flow
  }

  /// Calls `body` once the flight ends (at once if it has), with its outcome; nil when it was
  /// cancelled.
  func whenFinished(_ body: @escaping @Sendable (RefreshOutcome?) -> Void) {
    let finished: RefreshOutcome?? = state.withLock { state in
      if case .finished(let outcome) = state.phase { return .some(outcome) }
      state.onFinish.append(body)
      return .none
    }
    if let finished { body(finished) }
  }

  /// A waiter gave up: when the answer has not started to be applied, runs `record` (the
  /// timeout's failure record) before it can be, and returns true.
  func abandon(recording record: () -> Void) -> Bool {
    state.withLock { state in
      switch state.phase {
      case .fetching:
        state.phase = .abandoned
        record()
        return true
      case .abandoned:
        return true
      case .applying, .finished:
        return false
      }
    }
  }

  /// The answer is here; returns whether a waiter gave up on it first.
  func beginApplying() -> Bool {
    state.withLock { state in
      let abandoned: Bool
      if case .abandoned = state.phase { abandoned = true } else { abandoned = false }
      state.phase = .applying
      return abandoned
    }
  }

  /// Ends the flight and tells everyone waiting.
  func finish(_ outcome: RefreshOutcome?) {
    let waiting = state.withLock { state in
      state.phase = .finished(outcome)
      defer { state.onFinish = [] }
      return state.onFinish
    }
    for body in waiting { body(outcome) }
  }
}

/// Resumes a continuation once, from whichever of several events comes first; the others find
/// it taken. An event before the continuation is installed is kept and delivered at install.
final class FirstEvent<Value: Sendable>: Sendable {
  private enum State {
    case waiting(CheckedContinuation<Value, Never>?)
    case decided(Value)
    case delivered
  }

  private let state = Locked(State.waiting(nil))

  init() {}

  /// Installs the continuation to resume.
  func install(_ continuation: CheckedContinuation<Value, Never>) {
    let decided: Value? = state.withLock { state in
      switch state {
      case .waiting:
        state = .waiting(continuation)
        return nil
      case .decided(let value):
        state = .delivered
        return value
      case .delivered:
        return nil
      }
    }
    if let decided { continuation.resume(returning: decided) }
  }

  /// Offers `value`; returns whether it was the first.
  @discardableResult
  func offer(_ value: Value) -> Bool {
    let (first, continuation): (Bool, CheckedContinuation<Value, Never>?) = state.withLock {
      state in
      switch state {
      case .waiting(let continuation?):
        state = .delivered
        return (true, continuation)
      case .waiting(nil):
        state = .decided(value)
        return (true, nil)
      case .decided, .delivered:
        return (false, nil)
      }
    }
    continuation?.resume(returning: value)
    return first
  }
}

/// Decides which of two racers goes on: the first to ``take()`` it.
final class FirstClaim: Sendable {
  private let taken = Locked(false)

  /// True for the first caller only.
  func take() -> Bool {
    taken.withLock { taken in
      defer { taken = true }
      return !taken
    }
  }
}
