#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A value reachable only while a lock is held: the package's one lock.
///
/// `Mutex` needs iOS 18 and macOS 15; this box works at every deployment target the package
/// supports, so the tests and benchmarks, which build for the same floor, use it too.
/// `Mutex` alone would also make every closure that touches a connection prove, through region
/// isolation, that nothing it captures is shared; the store's closures pass the connection to
/// helpers and statement callbacks, which that analysis cannot follow. This box keeps the
/// same runtime discipline with a rule checked by review instead.
///
/// The lock is a `pthread_mutex_t`, not `Synchronization.Mutex`, so Thread Sanitizer can check
/// it: `Mutex`'s contended path runs inside `libswiftSynchronization.so`, which the sanitizer
/// does not see, so under contention it reported accesses between two closures of one
/// `withLock` as races (a ten-line `Mutex` counter on four threads reports them with an exact
/// final count; the same counter on `pthread_mutex_t` reports none). The sanitizer intercepts
/// `pthread_mutex_lock`, so every report it makes about this box is a real one.
///
/// `@unchecked Sendable` is sound because:
/// - `value` is private and read or written only inside `withLock` and `withLockIfAvailable`,
///   while `mutex` is held, so no two threads ever touch it at the same time;
/// - both take non-escaping closures, and every caller (all in this package: the library, its
///   testing module, the tool, the tests and the benchmarks) returns only `Sendable` values:
///   values copied out of the state, or instances of `Sendable` classes, which are safe to
///   share by their own proof;
/// - `mutex` is allocated once, initialized before `init` returns and destroyed only in
///   `deinit`, when no thread can hold a reference: this instance is its one owner.
package final class Locked<Value>: @unchecked Sendable, CustomReflectable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  // The mutex already guarantees exclusive access, so the runtime's dynamic exclusivity check
  // (a thread-local access-set insert and remove, about 80 instructions) would only repeat it
  // on every read of the hot path.
  @exclusivity(unchecked) private var value: Value

  package init(_ value: Value) {
    self.value = value
    mutex = .allocate(capacity: 1)
    // A default mutex: initialization with no attributes cannot fail but for resources the
    // process has run out of, where the first lock would fail too; either stops it.
    guard pthread_mutex_init(mutex, nil) == 0 else {
      preconditionFailure("pthread_mutex_init failed; the process is out of resources")
    }
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Runs `body` with exclusive access to the value.
  package func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    lock()
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }

  /// Runs `body` with exclusive access if no other thread holds the lock; nil otherwise.
  package func withLockIfAvailable<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result? {
    guard pthread_mutex_trylock(mutex) == 0 else { return nil }
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }

  /// Takes the lock. A default mutex fails only when it is misused (`EINVAL` for one not
  /// initialized, `EDEADLK` is not reported for this type): never here, where every lock is
  /// paired with an unlock on the same thread by `defer`, so a failure is a broken invariant.
  private func lock() {
    guard pthread_mutex_lock(mutex) == 0 else {
      preconditionFailure("pthread_mutex_lock failed on a lock this instance owns")
    }
  }

  /// No children: reflection (`dump`, a debugger) would read the value without the lock, a
  /// data race, and show what the owner keeps private, such as a client's identity.
  package var customMirror: Mirror { Mirror(self, children: [:]) }
}
