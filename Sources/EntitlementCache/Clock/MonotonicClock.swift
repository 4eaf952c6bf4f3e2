#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A cheap monotonic clock for rate-limiting work on the read path.
///
/// The coarse clocks read a value the kernel updates on every tick (a few milliseconds)
/// without a system call, which is what a "check at most every 50 ms" rule needs.
enum MonotonicClock {
  /// Nanoseconds since an arbitrary fixed point.
  static func nanoseconds() -> UInt64 {
    #if canImport(Darwin)
      return clock_gettime_nsec_np(CLOCK_UPTIME_RAW_APPROX)
    #else
      var spec = timespec()
      clock_gettime(CLOCK_MONOTONIC_COARSE, &spec)
      return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    #endif
  }
}
