#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where the refresh client waits, runs its tasks and draws random numbers. It reads the time
/// from its cache's ``CustomerInfoCache/clock``, never from here.
///
/// Apps use the system's runtime, the default of ``EntitlementClient``'s initializers. Tests and `entitlement-cache simulate` use the
/// `SimulatedRuntime` of the `EntitlementCacheTesting` product: a virtual clock that moves
/// only when told (give it to the cache), and an executor that runs the client's tasks one at a time, so a run is the
/// same byte for byte every time and no test sleeps on the real clock.
///
/// An executor preference needs task executors (iOS 18, macOS 15, tvOS 18, watchOS 11,
/// visionOS 2): on earlier systems the client's tasks run on the global concurrent executor
/// whatever ``taskExecutor`` says, so `SimulatedRuntime` is available only from those versions.
public protocol ClientRuntime: Sendable {
  /// Suspends for `duration` of elapsed time (a clock that keeps counting while the device
  /// sleeps and that nobody can set).
  ///
  /// - Throws: `CancellationError` when the task is cancelled; the client cancels its waits
  ///   when a timer is replaced, the app goes to the background, or ``EntitlementClient/stop()``.
  func sleep(for duration: Duration) async throws

  /// The executor the client's tasks run on; nil for the global concurrent executor.
  ///
  /// A runtime that leaves it out gets the default, nil.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  var taskExecutor: (any TaskExecutor)? { get }

  /// A uniformly random 64-bit value: request nonces, retry jitter, the background delay and
  /// anonymous IDs are drawn from it. Nonces must not be predictable, so an app's runtime
  /// draws from the system's cryptographic generator.
  func nextRandom() -> UInt64
}

extension ClientRuntime {
  /// Nil: the client's tasks run on the global concurrent executor.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  public var taskExecutor: (any TaskExecutor)? { nil }

  /// A uniform fraction in `0..<1`, from ``nextRandom()``'s top 53 bits.
  func randomFraction() -> Double {
    Double(nextRandom() >> 11) / Double(1 << 53)
  }

  /// `count` random bytes.
  func randomBytes(_ count: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    while bytes.count < count {
      withUnsafeBytes(of: nextRandom()) { bytes.append(contentsOf: $0.prefix(count - bytes.count)) }
    }
    return bytes
  }
}

/// The runtime of an app: the system clocks, `ContinuousClock` for waits (it counts across
/// sleep), the global executor and the system's cryptographic random number generator.
package struct SystemClientRuntime: ClientRuntime {
  /// The system runtime.
  package init() {}

  /// Sleeps on `ContinuousClock`.
  package func sleep(for duration: Duration) async throws {
    try await Task.sleep(for: duration, clock: .continuous)
  }

  /// A value from `SystemRandomNumberGenerator`, which is cryptographically secure.
  package func nextRandom() -> UInt64 {
    var generator = SystemRandomNumberGenerator()
    return generator.next()
  }
}

extension Duration {
  /// `seconds` as a duration rounded up to whole milliseconds, so a timer set for a boundary
  /// never fires before it; non-finite or negative values are zero, huge ones a century.
  ///
  /// Rounded to the microsecond first: a difference of dates lands a hair above a whole
  /// millisecond (539.067 s is 539067.0000001 ms), which a plain ceiling would make 1 ms late.
  static func ceilingMilliseconds(_ seconds: TimeInterval) -> Duration {
    guard seconds.isFinite, seconds > 0 else { return .zero }
    let microseconds = min((seconds * 1_000_000).rounded(), 100 * 365 * 86_400_000_000)
    let milliseconds = (microseconds / 1000).rounded(.up)
    return .milliseconds(Int64(milliseconds))
  }

  /// How long the boundary timer sleeps for a boundary `seconds` ahead: rounded up to the
  /// millisecond, so it never fires before the boundary, and at least one millisecond. A
  /// boundary a fraction of a microsecond ahead (a refresh stored at a fractional millisecond,
  /// read back floored) would otherwise round to zero: the timer would fire at once, find the
  /// boundary not yet crossed, publish nothing and set itself again, for ever.
  static func boundaryDelay(_ seconds: TimeInterval) -> Duration {
    max(ceilingMilliseconds(seconds), .milliseconds(1))
  }

  /// The duration in seconds.
  var seconds: TimeInterval {
    let (whole, attoseconds) = components
    return Double(whole) + Double(attoseconds) / 1e18
  }
}
