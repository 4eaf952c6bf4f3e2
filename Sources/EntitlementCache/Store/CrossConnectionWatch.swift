import Synchronization

/// When to ask SQLite whether another connection wrote: at most once per interval, measured on
/// a coarse monotonic clock, so the hot read pays one clock read and one relaxed atomic load.
///
/// Kept outside the reads lock on purpose: the check asks the writer connection, and a read
/// must not ask for the writer's lock while holding its own (see the lock order stated in
/// ``SQLiteCustomerInfoCache``).
final class CrossConnectionWatch: Sendable {
  /// Nanoseconds between checks.
  let interval: UInt64
  private let lastCheck: Atomic<UInt64>

  /// - Parameter interval: Nanoseconds between checks; 0 checks on every read.
  init(interval: UInt64) {
    self.interval = interval
    lastCheck = Atomic(MonotonicClock.nanoseconds())
  }

  /// Whether it is time to check.
  @inline(__always) var isDue: Bool {
    MonotonicClock.nanoseconds() &- lastCheck.load(ordering: .relaxed) >= interval
  }

  /// Records that a check ran now.
  func checked() {
    lastCheck.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
  }
}
