import Dispatch
import EntitlementCache
import Foundation

/// A thread of its own that stores one snapshot for one scope on a cache, back to back with
/// no pause, from `init` until ``stop()``: the background refresh of
/// `hot_access_under_writes`.
///
/// `init` returns once the first store has landed, so timing never starts before the writes
/// do. ``stop()`` lets the store in progress finish and waits for the thread to exit: no
/// store is cut off, and nothing polls or sleeps. Releasing the writer without calling it
/// (a later case failed to set up) stops it the same way.
final class BackgroundWriter {
  private let control = Control()

  init(cache: SQLiteCustomerInfoCache, snapshot: CustomerInfoSnapshot, scope: CacheScope) throws {
    let control = control
    let thread = Thread {
      control.run { try cache.store(snapshot, for: scope) }
    }
    thread.name = "bench-background-writer"
    thread.start()
    control.firstStore.wait()
    if let failure = control.failure {
      _ = try? control.stop()
      throw failure
    }
  }

  deinit {
    _ = try? control.stop()
  }

  /// Stops the thread and returns how many stores it completed; throws the error that stopped
  /// it early, if one did.
  func stop() throws -> Int {
    try control.stop()
  }
}

/// What the writer thread and the thread that stops it share.
private final class Control: Sendable {
  /// Signalled after the first store, or when the thread ends without one.
  let firstStore = DispatchSemaphore(value: 0)
  private let exited = DispatchSemaphore(value: 0)
  private let stopRequested = Locked(false)
  private let outcome = Locked<Outcome>(Outcome())

  private struct Outcome {
    var writes = 0
    var failure: (any Error)?
    /// The thread's exit has been waited for, so a second ``stop()`` must not wait again.
    var joined = false
  }

  var failure: (any Error)? { outcome.withLock { $0.failure } }

  /// The thread's body: `store` until asked to stop or until it throws.
  func run(_ store: () throws -> Void) {
    var writes = 0
    var failure: (any Error)?
    while !stopRequested.withLock({ $0 }) {
      do {
        try store()
      } catch {
        failure = error
        break
      }
      writes += 1
      if writes == 1 { firstStore.signal() }
    }
    // Only the locals are moved out, so the lock is taken once, not per store.
    outcome.withLock { [writes, failure] in
      $0.writes = writes
      $0.failure = failure
    }
    if writes == 0 { firstStore.signal() }
    exited.signal()
  }

  func stop() throws -> Int {
    stopRequested.withLock { $0 = true }
    let mustWait = outcome.withLock { outcome in
      defer { outcome.joined = true }
      return !outcome.joined
    }
    if mustWait { exited.wait() }
    let (writes, failure) = outcome.withLock { ($0.writes, $0.failure) }
    if let failure { throw failure }
    return writes
  }
}
