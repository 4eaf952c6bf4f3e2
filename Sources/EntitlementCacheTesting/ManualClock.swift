import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A clock that moves only when told to, with a boot clock when given a boot session. Safe to
/// share between threads.
///
/// ```swift
/// let clock = ManualClock(Date(timeIntervalSince1970: 1_796_040_000), bootSession: "boot-1")
/// let cache = try SQLiteCustomerInfoCache(path: path, clock: clock.cacheClock)
/// clock.advance(by: .seconds(3600))       // an hour passes: both clocks move
/// clock.set(Date(timeIntervalSince1970: 0))  // a person sets the wall clock: the boot clock does not move
/// clock.reboot(session: "boot-2")        // a new boot: the boot clock restarts
/// ```
public final class ManualClock: Sendable {
  private struct Readings {
    var wall: Date
    var boot: BootInstant?
  }

  private let current: Locked<Readings>

  /// A clock showing `date`. With `bootSession` it has a boot clock too, starting at zero time
  /// since boot in that session; without, it has none.
  public init(_ date: Date, bootSession: String? = nil) {
    current = Locked(
      Readings(wall: date, boot: bootSession.map { BootInstant(session: $0, sinceBoot: 0) }))
  }

  /// The time the wall clock shows.
  public var now: Date { current.withLock { $0.wall } }

  /// The boot clock's reading; nil when this clock has none.
  public var bootInstant: BootInstant? { current.withLock { $0.boot } }

  /// Time passes: the wall clock and the boot clock move by `duration`. A negative duration
  /// moves only the wall clock back (the boot clock never runs backwards).
  ///
  /// On the clock of a ``SimulatedRuntime`` (its ``SimulatedRuntime/manualClock``), time passing
  /// is the runtime's ``SimulatedRuntime/advance(by:)``: every wait due on the way ends at its
  /// deadline, so a client's timers fire as they would have.
  public func advance(by duration: Duration) {
    if duration > .zero, let runtimeAdvance = owner.withLock({ $0 }) {
      runtimeAdvance(duration)
    } else {
      move(by: duration.timeInterval)
    }
  }

  /// Moves both clocks by `interval` seconds (only the wall clock when negative), firing
  /// nothing: the runtime's own step.
  func move(by interval: TimeInterval) {
    current.withLock { readings in
      readings.wall = Date(
        timeIntervalSinceReferenceDate: Self.microseconds(
          readings.wall.timeIntervalSinceReferenceDate + interval))
      if interval > 0, let boot = readings.boot {
        readings.boot?.sinceBoot = Self.microseconds(boot.sinceBoot + interval)
      }
    }
  }

  /// The advance of the ``SimulatedRuntime`` this clock belongs to, if any.
  let owner = Locked<(@Sendable (Duration) -> Void)?>(nil)

  /// `seconds` to the nearest microsecond. Sums of many steps in floating point drift; the
  /// cache floors times to whole milliseconds, so a drift below one would move a boundary.
  private static func microseconds(_ seconds: Double) -> Double {
    (seconds * 1_000_000).rounded() / 1_000_000
  }

  /// Sets the wall clock to `date`, as a person or a time server does: the boot clock does not
  /// move.
  public func set(_ date: Date) {
    current.withLock { $0.wall = date }
  }

  /// The device restarts: the boot clock starts again at zero in a new `session`. The wall
  /// clock is unchanged.
  public func reboot(session: String) {
    current.withLock { $0.boot = BootInstant(session: session, sinceBoot: 0) }
  }

  /// This clock as a `CacheClock`, to pass to a cache.
  public var cacheClock: CacheClock {
    CacheClock(now: { [self] in now }, bootInstant: { [self] in bootInstant })
  }
}
