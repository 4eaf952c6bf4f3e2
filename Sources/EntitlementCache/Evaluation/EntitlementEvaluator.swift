#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Re-evaluates cached entitlements against the clock: pure functions, no I/O, no global clock.
///
/// The cache calls these on every read. They are public so an SDK can evaluate a CustomerInfo
/// it holds in memory with exactly the rules the cache applies, and refuse what the cache
/// refuses: a policy with a window that is NaN, negative or infinite (which
/// ``OfflinePolicy/validate(trustRoots:)`` names) decides every key
/// ``UnavailableReason/unreadable``, as a cache's read with it does, never a grant that would
/// not end. The snapshot's ``CustomerInfo/verification`` is taken as given: `verified` is only
/// the body's claim unless the caller checked the signature (``ResponseVerifier``), so a caller
/// that did not sets no ``OfflinePolicy/requireVerified``.
///
/// Every window is half-open: access holds while the effective time is *before* its boundary.
public enum EntitlementEvaluator {
  /// The decision for one entitlement of a CustomerInfo held in memory.
  ///
  /// - Parameters:
  ///   - key: The entitlement key, such as `pro`.
  ///   - info: The snapshot; nil when none is available, which gives `offlineUnavailable`.
  ///   - bookkeeping: When the snapshot was stored and what happened since.
  ///   - now: The device's wall clock.
  ///   - bootInstant: The boot clock now, where the platform has one (see
  ///     ``CacheClock/bootInstant``); in the boot session of the refresh it measures the time
  ///     since, whatever `now` says.
  ///   - policy: The offline policy.
  public static func decision(
    for key: String, in info: CustomerInfo?, bookkeeping: ScopeBookkeeping?, now: Date,
    bootInstant: BootInstant? = nil, policy: OfflinePolicy = .conservative
  ) -> AccessDecision {
    if !policy.hasValidWindows {
      return unavailable(key, .unreadable, clock: ClockReading(unstoredAt: now))
    }
    guard let info, let bookkeeping = bookkeeping.map({ $0.withServerTime(of: info) }) else {
      let clock = ClockReading(
        now: now, boot: bootInstant, bookkeeping: bookkeeping,
        tolerance: policy.clockRollbackTolerance)
      return unavailable(key, .noSnapshot, clock: clock)
    }
    let clock = ClockReading(
      now: now, boot: bootInstant, bookkeeping: bookkeeping,
      tolerance: policy.clockRollbackTolerance)
    let facts = EntitlementFacts.table(for: info)[key]
    return decide(
      key, facts: facts, snapshot: SnapshotFacts(info), bookkeeping: bookkeeping, clock: clock,
      policy: policy)
  }

  /// The device time a read at `now` decides with, which a cache raises the scope's
  /// high-water mark to (``ScopeBookkeeping/deviceHighWaterMark``) after the read and after a
  /// failed refresh attempt, as the package's caches do: the wall clock, or the latest device
  /// time already seen when the clock reads earlier (it was set back). In the refresh's boot
  /// session it is the refresh's time plus the boot clock's measure since (or the mark, when
  /// later), whatever the wall clock says. A cache of your own that raises its mark to the
  /// wall clock instead lets a clock set back across a reboot reopen access a read had
  /// already seen end, and a clock set forward in the refresh's boot session deny, after a
  /// reboot, access the boot clock showed valid.
  ///
  /// - Parameters:
  ///   - now: The device's wall clock.
  ///   - bookkeeping: The scope's bookkeeping; nil when nothing is stored.
  ///   - bootInstant: The boot clock now, where the platform has one.
  ///   - policy: The offline policy.
  public static func effectiveDeviceTime(
    now: Date, bookkeeping: ScopeBookkeeping?, bootInstant: BootInstant? = nil,
    policy: OfflinePolicy = .conservative
  ) -> Date {
    ClockReading(
      now: now, boot: bootInstant, bookkeeping: bookkeeping,
      tolerance: policy.clockRollbackTolerance
    ).effectiveDeviceNow
  }

  /// Every entitlement of a CustomerInfo re-evaluated: lapsed ones read `expired`, an expired
  /// access context is removed, and each key has its decision. Under a policy the caches
  /// refuse, each key is decided ``UnavailableReason/unreadable`` and nothing is granted; the
  /// snapshot is still shown as it holds now.
  ///
  /// - Parameters:
  ///   - info: The snapshot.
  ///   - bookkeeping: When it was stored and what happened since.
  ///   - now: The device's wall clock.
  ///   - bootInstant: The boot clock now, where the platform has one.
  ///   - policy: The offline policy.
  public static func evaluate(
    _ info: CustomerInfo, bookkeeping: ScopeBookkeeping, now: Date,
    bootInstant: BootInstant? = nil, policy: OfflinePolicy = .conservative
  ) -> EvaluatedCustomerInfo {
    guard policy.hasValidWindows else {
      return unreadable(
        info, bookkeeping: bookkeeping, now: now, bootInstant: bootInstant, policy: policy)
    }
    return evaluate(
      info, verdict: nil, bookkeeping: bookkeeping, now: now, bootInstant: bootInstant,
      policy: policy)
  }

  /// The evaluation under a policy the caches refuse: every key decided `unreadable`, and no
  /// boundary to wake for. The snapshot is still shown as it holds now (lapsed entitlements
  /// read `expired`, an expired access context is gone), with each refused window read as
  /// ``OfflinePolicy/conservative``'s, so a view of it never shows more than a read would.
  private static func unreadable(
    _ info: CustomerInfo, bookkeeping: ScopeBookkeeping, now: Date, bootInstant: BootInstant?,
    policy: OfflinePolicy
  ) -> EvaluatedCustomerInfo {
    var evaluated = evaluate(
      info, verdict: nil, bookkeeping: bookkeeping, now: now, bootInstant: bootInstant,
      policy: policy.withRefusedWindowsConservative)
    let clock = ClockReading(unstoredAt: now)
    for key in evaluated.decisions.keys {
      evaluated.decisions[key] = unavailable(key, .unreadable, clock: clock)
    }
    evaluated.timeToNextBoundary = nil
    return evaluated
  }

  static func evaluate(
    _ info: CustomerInfo, verdict: TrustVerdict?, bookkeeping: ScopeBookkeeping, now: Date,
    bootInstant: BootInstant?, policy: OfflinePolicy
  ) -> EvaluatedCustomerInfo {
    let bookkeeping = bookkeeping.withServerTime(of: info)
    let clock = ClockReading(
      now: now, boot: bootInstant, bookkeeping: bookkeeping,
      tolerance: policy.clockRollbackTolerance)
    return evaluate(
      info, facts: EntitlementFacts.table(for: info),
      snapshot: SnapshotFacts(info, verdict: verdict), bookkeeping: bookkeeping, clock: clock,
      policy: policy)
  }

  static func evaluate(
    _ info: CustomerInfo, facts: [String: EntitlementFacts], snapshot: SnapshotFacts,
    bookkeeping: ScopeBookkeeping, clock: ClockReading, policy: OfflinePolicy
  ) -> EvaluatedCustomerInfo {
    evaluate(
      info, plan: EvaluationPlan(keys: info.entitlements.keys, facts: facts), snapshot: snapshot,
      bookkeeping: bookkeeping, clock: clock, policy: policy)
  }

  /// Every key of `plan` decided (``decide(_:facts:snapshot:bookkeeping:clock:policy:)``), with
  /// `info` as it holds now: one code path for a CustomerInfo held in memory and for a cache's
  /// resident scope, which keeps its plan.
  static func evaluate(
    _ info: CustomerInfo, plan: EvaluationPlan, snapshot: SnapshotFacts,
    bookkeeping: ScopeBookkeeping, clock: ClockReading, policy: OfflinePolicy
  ) -> EvaluatedCustomerInfo {
    var evaluated = info
    // With trust roots the library's verdict, not the body's claim (<doc:TrustedSnapshots>);
    // for an import, neither.
    let verification = bookkeeping.trustedVerification(snapshot)
    if evaluated.verification != verification {
      evaluated.verification = verification
    }
    var decisions = plan.decisions
    for entry in plan.entries {
      let decision = decide(
        entry.key, facts: entry.facts, snapshot: snapshot, bookkeeping: bookkeeping,
        clock: clock, policy: policy)
      // Locally computed expiry: the server said active or grace, the boundary has passed:
      // its end, or for non-expiring access the offline window, so a reader of the statuses
      // alone never holds lifetime access offline past it. A snapshot too old or not verified
      // enough to decide on still must not show a lapsed entitlement as active.
      var lapsed = decision.state.hasLapsed
      if decision.state == .offlineUnavailable(.snapshotTooOld)
        || decision.state == .offlineUnavailable(.unverified)
      {
        var timeAlone = policy
        timeAlone.maxSnapshotAge = nil
        timeAlone.requireVerified = false
        lapsed =
          decide(
            entry.key, facts: entry.facts, snapshot: snapshot, bookkeeping: bookkeeping,
            clock: clock, policy: timeAlone
          ).state.hasLapsed
      }
      decisions.values[entry.index] = decision
      // Written only when it changes: most lapsed keys already read `expired`, and a write
      // copies the snapshot's whole entitlement table.
      if lapsed, info.entitlements[entry.key]?.status != .known(.expired) {
        evaluated.entitlements[entry.key]?.status = .known(.expired)
      }
    }
    if let accessContext = info.accessContext, clock.serverNow >= accessContext.expiresAt {
      evaluated.accessContext = nil
    }
    let freshness = freshness(bookkeeping, clock: clock, policy: policy)
    return EvaluatedCustomerInfo(
      customerInfo: evaluated, decisions: decisions, freshness: freshness,
      verificationFailure: bookkeeping.trustedVerificationFailure(snapshot),
      clockRollbackSuspected: clock.rollbackSuspected,
      clockOffset: clock.clockOffset, estimatedServerTime: clock.serverNow,
      bookkeeping: bookkeeping,
      timeToNextBoundary: timeToNextBoundary(
        decisions: decisions.values, accessContext: info.accessContext, freshness: freshness,
        clock: clock, policy: policy))
  }

  /// The decision when nothing usable is stored.
  static func unavailable(
    _ key: String, _ reason: UnavailableReason, clock: ClockReading, pendingPurchase: Bool = false
  ) -> AccessDecision {
    AccessDecision(
      entitlement: key, state: .offlineUnavailable(reason),
      evidence: AccessEvidence(
        clockRollbackSuspected: clock.rollbackSuspected, pendingPurchase: pendingPurchase))
  }

  static func freshness(
    _ bookkeeping: ScopeBookkeeping, clock: ClockReading, policy: OfflinePolicy
  ) -> Freshness {
    if bookkeeping.lastRefreshFailedAt != nil { return .offline }
    guard bookkeeping.storedAt != nil else { return .stale }
    // Elapsed time is the device's (<doc:TimeModel>): a device clock minutes slow does not
    // make a refresh read stale the moment it lands.
    return clock.elapsed < policy.staleAfter ? .fresh : .stale
  }

  /// The offline rules (<doc:OfflineRules>) for one key, on a clock already read. The hot path
  /// calls this with facts already in memory.
  ///
  /// Server-issued boundaries are compared with `clock.serverNow`, elapsed times with
  /// `clock.elapsed` (<doc:TimeModel>). `validUntil` follows <doc:OfflineRules#Decisions>: the
  /// first instant without access, in server time, while access holds or after it lapsed by its own
  /// boundary; nil for every other denial and for `offlineUnavailable`, so a denial never shows one
  /// still ahead.
  static func decide(
    _ key: String, facts: EntitlementFacts?, snapshot: SnapshotFacts,
    bookkeeping: ScopeBookkeeping, clock: ClockReading, policy: OfflinePolicy
  ) -> AccessDecision {
    guard let storedAt = bookkeeping.storedAt else {
      return unavailable(
        key, .noSnapshot, clock: clock, pendingPurchase: bookkeeping.hasPendingPurchase)
    }
    let now = clock.serverNow
    let freshness = freshness(bookkeeping, clock: clock, policy: policy)
    // The evidence is built once and each outcome builds its decision from it: mutating a
    // decision built up front copied and destroyed it (and its evidence) on every read.
    let importedAt = bookkeeping.origin.importedAt
    let verification = bookkeeping.trustedVerification(snapshot)
    var evidence = AccessEvidence(
      freshness: freshness, verification: verification,
      isComputedOffline: freshness == .offline, storedAt: storedAt,
      verifiedAt: facts?.verifiedAt, source: facts?.source,
      clockRollbackSuspected: clock.rollbackSuspected,
      clockOffset: clock.clockOffset, estimatedServerTime: now,
      pendingPurchase: bookkeeping.hasPendingPurchase,
      verificationFailure: bookkeeping.trustedVerificationFailure(snapshot),
      origin: bookkeeping.origin)
    // An import the policy accepts unverified for a while: the end of that while, in server
    // time (server time advances with elapsed device time), bounds the grant like any other.
    var acceptanceBoundary: Date?
    if policy.requireVerified, verification != .known(.verified) {
      // Never a tampered one: the window accepts an import's missing signature, not an edit.
      guard let importedAt, let window = policy.acceptsImportedSnapshotsFor,
        verification == .known(.notRequested),
        clock.effectiveDeviceNow.timeIntervalSince(importedAt) < window
      else {
        return AccessDecision(
          entitlement: key, state: .offlineUnavailable(.unverified), evidence: evidence)
      }
      acceptanceBoundary = now.addingTimeInterval(
        window - clock.effectiveDeviceNow.timeIntervalSince(importedAt))
    }

    // The snapshot's age is elapsed device time; the instant it runs out, in server time, is
    // `requestDate + maxSnapshotAge`, since server time advances with elapsed time.
    var snapshotBoundary: Date?
    if let maxSnapshotAge = policy.maxSnapshotAge {
      if clock.elapsed >= maxSnapshotAge {
        return AccessDecision(
          entitlement: key, state: .offlineUnavailable(.snapshotTooOld), evidence: evidence)
      }
      snapshotBoundary = (bookkeeping.serverTime ?? storedAt).addingTimeInterval(maxSnapshotAge)
    }

    // The entitlement's own rules.
    let boundary: Date?
    switch entitlementBoundary(facts, serverTime: bookkeeping.serverTime, policy: policy) {
    case .denied(let reason, let passedBoundary):
      evidence.validUntil = passedBoundary
      return AccessDecision(
        entitlement: key, state: .denied(reason), evidence: evidence, recovery: facts?.claimHint)
    case .usable(let until, let lapse):
      if let until, now >= until {
        evidence.validUntil = until
        return AccessDecision(
          entitlement: key, state: .denied(lapse), evidence: evidence, recovery: facts?.claimHint)
      }
      boundary = until
    }
    if policy.excludeFamilyShared, facts?.source == .known(.familyShared) {
      return AccessDecision(
        entitlement: key, state: .denied(.familySharingExcluded), evidence: evidence,
        recovery: facts?.claimHint)
    }

    // The installation's rules: commercial access is there, but may this device use it?
    var deviceBoundary: Date?
    if let device = snapshot.deviceAccess {
      guard device.status == .known(.active) else {
        evidence.validUntil = earliest(earliest(boundary, snapshotBoundary), acceptanceBoundary)
        return AccessDecision(
          entitlement: key, state: .deviceBlocked(device.reason), evidence: evidence,
          device: DeviceBlockDetails(
            reason: device.reason, nextAllowedAt: device.nextAllowedAt,
            changeBudget: device.changeBudget, devices: device.devices))
      }
      if let expiresAt = device.expiresAt, now >= expiresAt {
        return AccessDecision(
          entitlement: key, state: .offlineUnavailable(.deviceAccessExpired), evidence: evidence)
      }
      deviceBoundary = device.expiresAt
    }
    evidence.validUntil = earliest(
      earliest(earliest(boundary, deviceBoundary), snapshotBoundary), acceptanceBoundary)
    return AccessDecision(entitlement: key, state: .granted, evidence: evidence)
  }

  private enum EntitlementRule {
    /// Usable until the date (nil: no device-clock boundary of its own); past it, denied for
    /// `lapse`: the server's end date passed, or the offline window of non-expiring access.
    case usable(until: Date?, lapse: DenialReason = .expired)
    /// Denied by the server's status alone; `boundary` is when access ended, when known.
    case denied(DenialReason, boundary: Date?)
  }

  private static func entitlementBoundary(
    _ facts: EntitlementFacts?, serverTime: Date?, policy: OfflinePolicy
  ) -> EntitlementRule {
    guard let facts, let status = facts.status else { return .denied(.notEntitled, boundary: nil) }
    let compareDeviceClock = policy.expiryReference == .deviceClock
    switch status {
    case .known(.revoked): return .denied(.revoked, boundary: nil)
    case .known(.expired):
      // The server said expired as of `requestDate`. Its `expiresAt` is when access ended only
      // if it was not after that; a later one (a refund, a cancellation) is not an end date.
      var ended: Date?
      if let end = facts.expiresAt, let serverTime, end <= serverTime { ended = end }
      return .denied(.expired, boundary: ended)
    case .known(.billingRetry): return .denied(.billingRetry, boundary: nil)
    case .unknown: return .denied(.unknownStatus, boundary: nil)
    case .known(.grace):
      guard compareDeviceClock else { return .usable(until: nil) }
      if let end = facts.gracePeriodExpiresAt ?? facts.expiresAt { return .usable(until: end) }
      return .usable(
        until: offlineWindowEnd(facts, serverTime: serverTime, policy: policy),
        lapse: .offlineWindowElapsed)
    case .known(.active):
      guard compareDeviceClock else { return .usable(until: nil) }
      if let end = facts.expiresAt { return .usable(until: end) }
      // A grace end on an active entitlement is not its end date: it is non-expiring.
      return .usable(
        until: offlineWindowEnd(facts, serverTime: serverTime, policy: policy),
        lapse: .offlineWindowElapsed)
    }
  }

  /// Non-expiring access is usable for a bounded time after the server last verified it;
  /// without `verifiedAt`, after the snapshot's `requestDate`. A `verifiedAt` after the
  /// `requestDate` counts from the `requestDate`: the server cannot have verified access after
  /// it answered, and a window counted from a date years ahead would hold lifetime access
  /// offline for years.
  private static func offlineWindowEnd(
    _ facts: EntitlementFacts, serverTime: Date?, policy: OfflinePolicy
  ) -> Date? {
    let verified =
      switch (facts.verifiedAt, serverTime) {
      case (let verifiedAt?, let serverTime?): min(verifiedAt, serverTime)
      case (let verifiedAt, let serverTime): verifiedAt ?? serverTime
      }
    return verified.map { $0.addingTimeInterval(policy.nonExpiringMaxOfflineAge) }
  }

  private static func earliest(_ first: Date?, _ second: Date?) -> Date? {
    switch (first, second) {
    case (let first?, let second?): min(first, second)
    case (let first?, nil): first
    case (nil, let second): second
    }
  }
}
