/// When to ask SQLite whether another connection wrote: at most once per interval, measured on
/// a coarse monotonic clock, so the hot read pays one clock read and one relaxed atomic load.
///
/// Kept outside the reads lock on purpose: the check asks the writer connection, and a read
/// must not ask for the writer's lock while holding its own (see the lock order stated in
/// ``SQLiteCustomerInfoCache``).
///
/// The time of the last check needs no ordering: it says only when to ask, and what the
/// asking reads is ordered by the writer's lock.
final class CrossConnectionWatch: Sendable {
  /// Nanoseconds between checks.
  let interval: UInt64
  private let lastCheck: AtomicWord

  /// - Parameter interval: The time between checks, validated to lie within a day; zero
  ///   checks on every read.
  init(interval: Duration) {
    let (seconds, attoseconds) = interval.components
    // Within 0...86,400 s (validated with the configuration), so the nanoseconds fit; a
    // value outside is clamped rather than trapped on.
    self.interval =
      UInt64(clamping: max(0, min(seconds, 86_400))) * 1_000_000_000
      + UInt64(clamping: max(0, attoseconds / 1_000_000_000))
    lastCheck = AtomicWord(MonotonicClock.nanoseconds())
  }

  /// Whether it is time to check.
  @inline(__always) var isDue: Bool {
    MonotonicClock.nanoseconds() &- lastCheck.load() >= interval
  }

  /// Records that a check ran now.
  func checked() {
    lastCheck.store(MonotonicClock.nanoseconds())
  }
}
