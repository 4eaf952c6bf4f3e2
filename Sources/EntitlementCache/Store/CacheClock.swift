import Synchronization

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The wall clock the cache reads for `now`: the system clock in apps, a ``ManualClock`` in
/// tests and in the command-line tool's `--now`.
public struct CacheClock: Sendable {
  /// Returns the current time.
  public let now: @Sendable () -> Date

  /// A clock that calls `now`.
  public init(now: @escaping @Sendable () -> Date) {
    self.now = now
  }

  /// The system clock.
  public static let system = CacheClock { Date() }

  /// A clock stopped at `date`.
  public static func fixed(_ date: Date) -> CacheClock {
    CacheClock { date }
  }
}

/// A clock that moves only when told to. Safe to share between threads.
///
/// ```swift
/// let clock = ManualClock(Date(timeIntervalSince1970: 1_796_040_000))
/// let cache = try SQLiteCustomerInfoCache(path: path, clock: clock.cacheClock)
/// clock.advance(by: 3600)
/// ```
public final class ManualClock: Sendable {
  private let current: Mutex<Date>

  /// A clock showing `date`.
  public init(_ date: Date) {
    current = Mutex(date)
  }

  /// The time the clock shows.
  public var now: Date { current.withLock { $0 } }

  /// Moves the clock by `interval` seconds; negative values set it back.
  public func advance(by interval: TimeInterval) {
    current.withLock { $0 = $0.addingTimeInterval(interval) }
  }

  /// Sets the clock to `date`.
  public func set(_ date: Date) {
    current.withLock { $0 = date }
  }

  /// This clock as a ``CacheClock``.
  public var cacheClock: CacheClock {
    CacheClock { [self] in now }
  }
}
