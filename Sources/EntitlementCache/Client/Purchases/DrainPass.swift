/// One pass over the purchase queue: every known observer's unsent entries, posted in
/// observation order. Callers that need the queue drained after their call (a purchase, a
/// restore, a sync) wait for a pass that started after it, as refreshes wait for a flight.
final class DrainPass: Sendable {
  private struct State {
    var finished = false
    var postsBackedOff = false
    var refreshFollows = false
    var syncedWithoutAnswer: Set<ScopeKey> = []
    var onFinish: [@Sendable () -> Void] = []
  }

  private let state = Locked(State())

  init() {}

  /// Whether the pass posts entries still backing off: a pass someone asked for (a restore, a
  /// sync, a purchase, the network back) posts at once; one the app's lifecycle or a wake-up
  /// started keeps to each entry's time.
  var postsBackedOff: Bool { state.withLock { $0.postsBackedOff } }

  /// Makes the pass post backed-off entries too; called before it starts.
  func postBackedOff() {
    state.withLock { $0.postsBackedOff = true }
  }

  /// Says that the caller waiting for the pass refreshes after it (a purchase, a restore, a
  /// sync), so the pass need not.
  func refreshFollowsIt() {
    state.withLock { $0.refreshFollows = true }
  }

  /// Notes that an entry of `observer` synced and the server answered no CustomerInfo with it.
  func noteSyncedWithoutAnswer(_ observer: ScopeKey) {
    state.withLock { _ = $0.syncedWithoutAnswer.insert(observer) }
  }

  /// Whether the state of `observer` may not show a purchase that synced in this pass: one
  /// synced with no CustomerInfo, and no refresh is to follow. A fetch that left before the
  /// post ended (a start's, a log-in's) can land after it and say "not entitled".
  func leavesUnrefreshed(_ observer: ScopeKey) -> Bool {
    state.withLock { !$0.refreshFollows && $0.syncedWithoutAnswer.contains(observer) }
  }

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

/// The purchase updates told while one call waits: what its sync result says synced, whichever
/// pass posted it.
final class PurchaseChangeLog: Sendable {
  private let changes = Locked<[PurchaseUpdate]>([])

  init() {}

  func append(_ update: PurchaseUpdate) {
    changes.withLock { $0.append(update) }
  }

  var all: [PurchaseUpdate] { changes.withLock { $0 } }
}
