#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The time one evaluation uses (DESIGN §5.1): the device's time guarded against being set
/// back, the time elapsed since the refresh, and the cache's estimate of the server's clock.
///
/// Two clocks meet here. The device's can be set by a person, or run minutes slow; the
/// server's issues every boundary (`expiresAt`, grace, `verifiedAt`, the access context,
/// device access). Boundaries are compared with ``serverNow``, which is the snapshot's
/// `requestDate` plus the time the device measured since the refresh, so a device clock that is
/// wrong by any constant amount neither gains nor loses access, and setting it back never
/// winds ``serverNow`` back.
struct ClockReading: Sendable, Hashable {
  /// The device's wall clock as injected.
  var now: Date
  /// `max(now, deviceHighWaterMark)`: the device time, never behind a device time already seen.
  var effectiveDeviceNow: Date
  /// Time since the refresh that stored the snapshot, measured on the device: on the boot clock
  /// in the refresh's boot session, else `effectiveDeviceNow - storedAt`. Never negative; zero
  /// without a snapshot.
  var elapsed: TimeInterval
  /// The estimate of the server's clock: `requestDate + elapsed`, which is DESIGN's
  /// `max(effectiveDeviceNow + serverOffset, requestDate)` since `serverOffset` is
  /// `requestDate - storedAt`. Without a snapshot, `effectiveDeviceNow`.
  var serverNow: Date
  /// The device clock is more than the tolerance behind a device time already seen: it was
  /// set back. A diagnostic only, never because the server's clock is ahead; it never grants
  /// or denies by itself.
  var rollbackSuspected: Bool
  /// Whether ``elapsed`` came from the boot clock.
  var usesBootClock: Bool

  /// Reads the clocks for a scope.
  ///
  /// - Parameters:
  ///   - now: The device's wall clock.
  ///   - boot: The boot clock now; nil where there is none.
  ///   - deviceHighWaterMark: The latest device time seen for the scope; nil for none.
  ///   - storedAt: Device time of the refresh that stored the snapshot; nil without one.
  ///   - serverTime: That snapshot's `requestDate`.
  ///   - refreshBoot: The boot clock at that refresh.
  ///   - tolerance: How far behind the mark the clock may be before rollback is suspected.
  init(
    now: Date, boot: BootInstant?, deviceHighWaterMark: Date?, storedAt: Date?,
    serverTime: Date?, refreshBoot: BootInstant?, tolerance: TimeInterval
  ) {
    self.now = now
    if let deviceHighWaterMark {
      effectiveDeviceNow = max(now, deviceHighWaterMark)
      rollbackSuspected = now < deviceHighWaterMark.addingTimeInterval(-tolerance)
    } else {
      effectiveDeviceNow = now
      rollbackSuspected = false
    }
    guard let storedAt else {
      elapsed = 0
      serverNow = effectiveDeviceNow
      usesBootClock = false
      return
    }
    if let refreshBoot, let boot, boot.session == refreshBoot.session {
      elapsed = max(0, boot.sinceBoot - refreshBoot.sinceBoot)
      usesBootClock = true
    } else {
      elapsed = max(0, effectiveDeviceNow.timeIntervalSince(storedAt))
      usesBootClock = false
    }
    serverNow = (serverTime ?? storedAt).addingTimeInterval(elapsed)
  }

  /// Reads the clocks for a scope with `bookkeeping`.
  init(
    now: Date, boot: BootInstant?, bookkeeping: ScopeBookkeeping?, tolerance: TimeInterval
  ) {
    self.init(
      now: now, boot: boot, deviceHighWaterMark: bookkeeping?.deviceHighWaterMark,
      storedAt: bookkeeping?.storedAt, serverTime: bookkeeping?.serverTime,
      refreshBoot: bookkeeping?.refreshBootInstant, tolerance: tolerance)
  }

  /// A reading for a scope with nothing stored: no mark, no refresh.
  init(unstoredAt now: Date) {
    self.init(
      now: now, boot: nil, deviceHighWaterMark: nil, storedAt: nil, serverTime: nil,
      refreshBoot: nil, tolerance: 0)
  }
}

extension ScopeBookkeeping {
  /// ``serverOffset`` in whole seconds, rounded to the nearest and clamped, for the evidence's
  /// `clockOffset`.
  var clockOffsetSeconds: Int? {
    serverOffset.map(wholeSeconds)
  }
}

/// `interval` rounded to whole seconds, clamped to `Int`'s range rather than trapping.
func wholeSeconds(_ interval: TimeInterval) -> Int {
  let rounded = interval.rounded()
  guard rounded.isFinite, abs(rounded) < 9.2e18 else { return interval < 0 ? .min : .max }
  return Int(rounded)
}
