#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The time one evaluation uses (<doc:TimeModel>): the device's time guarded against being set
/// back, the time elapsed since the refresh, and the cache's estimate of the server's clock.
///
/// Two clocks meet here. The device's can be set by a person, or run minutes slow; the
/// server's issues every boundary (`expiresAt`, grace, `verifiedAt`, the access context,
/// device access). Boundaries are compared with ``serverNow``, which is the snapshot's
/// `requestDate` plus the time the device measured since the refresh, so a device clock that is
/// wrong by any constant amount neither gains nor loses access, and setting it back never
/// winds ``serverNow`` back.
struct ClockReading: Sendable, Hashable {
  /// `max(now, deviceHighWaterMark)`: the device time, never behind a device time already seen.
  /// In the refresh's boot session, `max(deviceHighWaterMark, storedAt + the boot clock's time
  /// since the refresh)`, whatever the wall clock says.
  var effectiveDeviceNow: Date
  /// Time since the refresh that stored the snapshot, measured on the device: on the boot clock
  /// in the refresh's boot session, else `effectiveDeviceNow - storedAt`. Never negative; zero
  /// without a snapshot.
  var elapsed: TimeInterval
  /// The estimate of the server's clock: `requestDate + elapsed`, which is the time model's
  /// `max(effectiveDeviceNow + serverOffset, requestDate)` since `serverOffset` is
  /// `requestDate - storedAt`. Without a snapshot, `effectiveDeviceNow`.
  var serverNow: Date
  /// The device clock is more than the tolerance behind a device time already seen (or, in
  /// the refresh's boot session, behind the time the boot clock measured): it was set back. A
  /// diagnostic only, never because the server's clock is ahead; it never grants or denies by
  /// itself.
  var rollbackSuspected: Bool
  /// ``ScopeBookkeeping/serverOffset`` in whole seconds, for the evidence.
  var clockOffset: Int?

  /// Reads the clocks for a scope from values a caller already holds: the hot read passes
  /// what its resident computed once, rather than copying the bookkeeping on every read.
  ///
  /// - Parameters:
  ///   - now: The device's wall clock.
  ///   - deviceHighWaterMark: The latest device time seen for the scope; nil for none.
  ///   - storedAt: Device time of the refresh that stored the snapshot; nil without one.
  ///   - serverTime: That snapshot's `requestDate`.
  ///   - bootElapsed: The boot clock's time since the refresh, when it was read in the
  ///     refresh's boot session (see ``BootInstant/elapsed(until:)``); nil otherwise.
  ///   - clockOffset: The refresh's offset in whole seconds.
  ///   - tolerance: How far behind the mark the clock may be before rollback is suspected.
  init(
    now: Date, deviceHighWaterMark: Date?, storedAt: Date?, serverTime: Date?,
    bootElapsed: TimeInterval?, clockOffset: Int?, tolerance: TimeInterval
  ) {
    self.clockOffset = clockOffset
    let bootMeasured = storedAt == nil ? nil : bootElapsed.map { max(0, $0) }
    var seen = deviceHighWaterMark
    if let storedAt, let bootMeasured {
      // What the device clock would read had nobody set it: a device time the cache has now
      // seen, so the mark it raises keeps the boot clock's measure past a reboot, where only
      // the wall clock is left.
      let measured = storedAt.addingTimeInterval(bootMeasured)
      seen = seen.map { max($0, measured) } ?? measured
    }
    if let seen {
      // In the refresh's boot session the boot clock says what time it is, so a wall clock
      // ahead of it (set forward, or a glitch) is not a time any decision used. A mark raised
      // to it would, after a reboot, deny access the boot clock had shown valid, until the
      // next refresh.
      effectiveDeviceNow = bootMeasured == nil ? max(now, seen) : seen
      rollbackSuspected = now < seen.addingTimeInterval(-tolerance)
    } else {
      effectiveDeviceNow = now
      rollbackSuspected = false
    }
    guard let storedAt else {
      elapsed = 0
      serverNow = effectiveDeviceNow
      return
    }
    elapsed = bootMeasured ?? max(0, effectiveDeviceNow.timeIntervalSince(storedAt))
    serverNow = (serverTime ?? storedAt).addingTimeInterval(elapsed)
  }

  /// Reads the clocks for a scope with `bookkeeping`.
  ///
  /// - Parameters:
  ///   - now: The device's wall clock.
  ///   - boot: The boot clock now; nil where there is none.
  ///   - bookkeeping: The scope's bookkeeping; nil when nothing is stored.
  ///   - tolerance: How far behind the mark the clock may be before rollback is suspected.
  init(
    now: Date, boot: BootInstant?, bookkeeping: ScopeBookkeeping?, tolerance: TimeInterval
  ) {
    self.init(
      now: now, deviceHighWaterMark: bookkeeping?.deviceHighWaterMark,
      storedAt: bookkeeping?.storedAt, serverTime: bookkeeping?.serverTime,
      bootElapsed: boot.flatMap { bookkeeping?.refreshBootInstant?.elapsed(until: $0) }.flatMap {
        $0.isFinite ? $0 : nil
      },
      clockOffset: bookkeeping?.clockOffsetSeconds, tolerance: tolerance)
  }

  /// A reading for a scope with nothing stored: no mark, no refresh.
  init(unstoredAt now: Date) {
    self.init(
      now: now, deviceHighWaterMark: nil, storedAt: nil, serverTime: nil, bootElapsed: nil,
      clockOffset: nil, tolerance: 0)
  }
}

extension BootInstant {
  /// The boot clock's time from this reading to `later`; nil when `later` is from another
  /// boot, whose clock started again at zero.
  func elapsed(until later: BootInstant) -> TimeInterval? {
    guard later.session == session else { return nil }
    return later.sinceBoot - sinceBoot
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
  Int(Int64(clamping: interval.rounded()))
}
