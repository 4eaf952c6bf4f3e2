#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The platform's clock that counts since boot across sleep, and the identity of the boot.
///
/// `CLOCK_MONOTONIC` and `mach_absolute_time` stop while the device sleeps, so a phone asleep
/// in a pocket for a week would measure no time; the clocks here keep counting. The boot's
/// identity is read once per process: it cannot change while the process runs.
enum SystemBootClock {
  /// The reading now; nil where the platform has no such clock or the boot's identity cannot
  /// be read, which leaves the cache on the wall-clock rules alone.
  static func now() -> BootInstant? {
    guard let session = session else { return nil }
    #if canImport(Darwin)
      return BootInstant(session: session, sinceBoot: Double(continuousNanoseconds()) / 1e9)
    #else
      var spec = timespec()
      guard clock_gettime(CLOCK_BOOTTIME, &spec) == 0 else { return nil }
      return BootInstant(
        session: session, sinceBoot: Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9)
    #endif
  }

  /// This boot's identity: Linux's random boot ID, or Darwin's boot session UUID. Both are
  /// made anew at every boot and are the same for every process of one boot.
  private static let session: String? = readSession()

  private static func readSession() -> String? {
    #if canImport(Darwin)
      var size = 0
      guard sysctlbyname("kern.bootsessionuuid", nil, &size, nil, 0) == 0, size > 1 else {
        return nil
      }
      var buffer = [CChar](repeating: 0, count: size)
      guard sysctlbyname("kern.bootsessionuuid", &buffer, &size, nil, 0) == 0 else { return nil }
      let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
      return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    #else
      // A procfs file: one line, a UUID. Read with the C library so nothing here depends on
      // Foundation's file APIs being present.
      guard let file = fopen("/proc/sys/kernel/random/boot_id", "r") else { return nil }
      // Closing a file opened for reading reports nothing a reader could act on.
      defer { _ = fclose(file) }
      var buffer = [CChar](repeating: 0, count: 64)
      guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
      let bytes = buffer.prefix { $0 != 0 && $0 != 0x0A }.map { UInt8(bitPattern: $0) }
      return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    #endif
  }

  #if canImport(Darwin)
    /// Darwin's `CLOCK_MONOTONIC` is `mach_continuous_time` in nanoseconds: unlike
    /// `CLOCK_UPTIME_RAW`, it counts while the device sleeps.
    private static func continuousNanoseconds() -> UInt64 {
      clock_gettime_nsec_np(CLOCK_MONOTONIC)
    }
  #endif
}
