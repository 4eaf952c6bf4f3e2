#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The clocks the cache reads: the device's wall clock for `now`, and where the platform has
/// one, the clock that counts since boot across sleep (<doc:TimeModel>).
///
/// Apps use ``system``. Tests inject a `ManualClock` from the `EntitlementCacheTesting`
/// product. The command-line tool's `--now` uses a clock stopped at that date with no boot
/// clock, so a what-if answer follows the date alone.
public struct CacheClock: Sendable {
  /// Returns the device's wall clock: the time a person can set.
  public let now: @Sendable () -> Date
  /// Returns the boot clock's reading, or nil where there is none.
  public let bootInstant: @Sendable () -> BootInstant?

  /// A clock that calls `now` for the wall clock and `bootInstant` for the boot clock.
  ///
  /// - Parameters:
  ///   - now: The wall clock.
  ///   - bootInstant: The boot clock; by default the system's, so a clock of the app's own
  ///     (say, one corrected by a time server) keeps the boot-session rule. It must keep
  ///     counting while the device sleeps (`ProcessInfo.systemUptime` does not), and it is
  ///     called under the cache's read lock, so it must not call back into the cache. Pass
  ///     `{ nil }` for none: offline time is then measured on the wall clock alone, guarded by
  ///     the high-water mark, which holds time still while the clock reads behind it.
  public init(
    now: @escaping @Sendable () -> Date,
    bootInstant: @escaping @Sendable () -> BootInstant? = { CacheClock.systemBootInstant() }
  ) {
    self.now = now
    self.bootInstant = bootInstant
  }

  /// The system's wall clock and, where the platform has one, its boot clock
  /// (`CLOCK_BOOTTIME` with the kernel's boot ID on Linux; `mach_continuous_time` with the
  /// boot session UUID on Apple platforms).
  public static let system = CacheClock(now: { Date() }, bootInstant: { systemBootInstant() })

  /// The system's boot clock now: `CLOCK_BOOTTIME` in the session of the kernel's boot ID on
  /// Linux, `mach_continuous_time` in the boot session UUID's on Apple platforms; nil where
  /// there is none.
  // Usable from inline code because the public initializer's default argument, which is
  // compiled into the caller, calls it.
  @usableFromInline package static func systemBootInstant() -> BootInstant? {
    SystemBootClock.now()
  }

  /// A wall clock stopped at `date`, with no boot clock: a what-if answer follows `date` alone.
  package static func fixed(_ date: Date) -> CacheClock {
    CacheClock(now: { date }, bootInstant: { nil })
  }
}
