import Synchronization

/// One pass over the purchase queue: every known observer's unsent entries, posted in
/// observation order. Callers that need the queue drained after their call (a purchase, a
/// restore, a sync) wait for a pass that started after it, as refreshes wait for a flight.
final class DrainPass: Sendable {
  private struct State {
    var finished = false
    var changes: [PurchaseUpdate] = []
    var onFinish: [@Sendable () -> Void] = []
  }

  private let state = Mutex(State())

  init() {}

  /// Records a state change the pass made.
  func record(_ update: PurchaseUpdate) {
    state.withLock { $0.changes.append(update) }
  }

  /// The changes the pass made, in order.
  var changes: [PurchaseUpdate] { state.withLock { $0.changes } }

  /// Calls `body` once the pass ends, at once if it has.
  func whenFinished(_ body: @escaping @Sendable () -> Void) {
    let finished = state.withLock { state in
      if !state.finished { state.onFinish.append(body) }
      return state.finished
    }
    if finished { body() }
  }

  /// Ends the pass and tells everyone waiting.
  func finish() {
    let waiting = state.withLock { state in
      state.finished = true
      defer { state.onFinish = [] }
      return state.onFinish
    }
    for body in waiting { body() }
  }

  /// Waits for the pass to end; returns at once when the caller's task is cancelled.
  func wait() async {
    let first = FirstEvent<Void>()
    whenFinished { first.offer(()) }
    await withTaskCancellationHandler {
      await withCheckedContinuation { first.install($0) }
    } onCancel: {
      first.offer(())
    }
  }
}
