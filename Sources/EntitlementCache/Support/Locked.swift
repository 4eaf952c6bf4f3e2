import Synchronization

/// A value reachable only while a lock is held.
///
/// `Mutex` alone would make every closure that touches a connection prove, through region
/// isolation, that nothing it captures is shared; the store's closures pass the connection to
/// helpers and statement callbacks, which that analysis cannot follow. This box keeps the
/// same runtime discipline with a rule checked by review instead.
///
/// `@unchecked Sendable` is sound because:
/// - `value` is private and read or written only inside `withLock` and `withLockIfAvailable`,
///   while `mutex` is held, so no two threads ever touch it at the same time;
/// - both take non-escaping closures, and every caller (all internal to this module) returns
///   only `Sendable` values copied out of the state, never the value or a class instance
///   reachable from it.
final class Locked<Value>: @unchecked Sendable {
  private let mutex = Mutex(())
  // The mutex already guarantees exclusive access, so the runtime's dynamic exclusivity check
  // (a thread-local access-set insert and remove, about 80 instructions) would only repeat it
  // on every read of the hot path.
  @exclusivity(unchecked) private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with exclusive access to the value.
  func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    try mutex.withLock { _ throws(Failure) in try body(&value) }
  }

  /// Runs `body` with exclusive access if no other thread holds the lock; nil otherwise.
  func withLockIfAvailable<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result? {
    try mutex.withLockIfAvailable { _ throws(Failure) in try body(&value) }
  }
}
