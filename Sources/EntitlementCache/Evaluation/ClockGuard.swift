#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The time one evaluation uses, and whether the device clock looks set back.
struct ClockReading: Sendable, Hashable {
  /// The device clock as injected.
  var now: Date
  /// `max(now, highWaterMark)`: setting the clock back never extends an expiry.
  var effectiveNow: Date
  /// The clock is more than the tolerance behind the latest trusted time. A diagnostic only:
  /// it never grants or denies by itself.
  var rollbackSuspected: Bool

  /// Guards `now` with the latest trusted time of the scope.
  init(now: Date, highWaterMark: Date?, tolerance: TimeInterval) {
    self.now = now
    guard let highWaterMark else {
      effectiveNow = now
      rollbackSuspected = false
      return
    }
    effectiveNow = max(now, highWaterMark)
    rollbackSuspected = now < highWaterMark.addingTimeInterval(-tolerance)
  }
}
