import EntitlementCache
import EntitlementCacheTesting

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The clauses about time: re-evaluation, the clock set back, the boot clock.
extension ContractContext {
  /// pro until T + 1 d, lifetime verified at T (so usable until T + 30 d offline).
  private func proForADay(requestDate: Date = ContractTime.start) throws -> CustomerInfoSnapshot {
    try ContractSnapshot.make(
      requestDate: requestDate,
      entitlements: [
        ContractEntitlement(
          key: "pro", status: "active", expiresAt: requestDate.addingTimeInterval(T.day),
          verifiedAt: requestDate),
        ContractEntitlement(key: "lifetime", status: "active", verifiedAt: requestDate),
      ],
      accessContextExpiresAt: requestDate.addingTimeInterval(15 * T.minute))
  }

  func reEvaluation() throws {
    let run = try open()
    try run.store(try proForADay())

    run.clock.set(T.at(5 * T.minute - 1))
    let young = run.access("pro")
    equal(young.evidence.freshness, .fresh, "fresh until staleAfter (5 min)")
    run.clock.set(T.at(5 * T.minute))
    let old = run.access("pro")
    equal(old.evidence.freshness, .stale, "stale from staleAfter on")
    equal(old.state, .granted, "staleness never revokes access")
    equal(
      old.evidence.estimatedServerTime, T.at(5 * T.minute),
      "the estimated server time is requestDate plus the time elapsed on the device")

    run.clock.set(T.at(15 * T.minute - 1))
    let beforeContext = try require(try run.view(), "the evaluated view")
    expect(
      beforeContext.customerInfo.accessContext != nil,
      "the access context stays in the evaluated view until it expires")
    run.clock.set(T.at(15 * T.minute))
    let afterContext = try require(try run.view(), "the evaluated view")
    expect(
      afterContext.customerInfo.accessContext == nil,
      "an expired access context leaves the evaluated view")
    equal(afterContext.decisions["pro"]?.state, .granted, "while pro is still granted")

    run.clock.set(T.at(T.day - 1))
    let lastSecond = run.access("pro")
    equal(lastSecond.state, .granted, "granted in the last second before expiresAt")
    equal(lastSecond.evidence.validUntil, T.at(T.day), "validUntil is expiresAt")
    run.clock.set(T.at(T.day))
    let expired = run.access("pro")
    equal(expired.state, .denied(.expired), "denied(expired) from expiresAt, with no write between")
    equal(expired.evidence.validUntil, T.at(T.day), "validUntil says when access ended")
    let lapsed = try require(try run.view(), "the evaluated view at expiresAt")
    equal(
      lapsed.customerInfo.entitlements["pro"]?.status, .known(.expired),
      "the evaluated view reads the lapsed entitlement as expired")
    equal(run.access("lifetime").state, .granted, "lifetime access is unaffected")
    equal(run.activeKeys(), ["lifetime"], "only lifetime is active")

    run.clock.set(T.at(30 * T.day - 1))
    equal(run.access("lifetime").state, .granted, "lifetime is granted inside its offline window")
    run.clock.set(T.at(30 * T.day))
    let window = run.access("lifetime")
    equal(
      window.state, .denied(.offlineWindowElapsed),
      "lifetime access ends 30 days after verifiedAt offline")
    equal(window.evidence.validUntil, T.at(30 * T.day), "at the end of the offline window")
  }

  func clockRollback() throws {
    for read in ContractRead.allCases {
      // No boot clock: the high-water mark alone must hold the line.
      let run = try open()
      try run.store(try proForADay())
      run.clock.set(T.at(T.day + T.hour))
      try see(read, on: run)

      run.clock.set(T.at(T.day + 56 * T.minute))
      let slightly = run.access("pro")
      equal(slightly.state, .denied(.expired), "\(read.rawValue) saw pro end; 4 min back: ended")
      equal(
        slightly.evidence.clockRollbackSuspected, false,
        "a clock 4 min behind the mark is within the 5 min tolerance")

      run.clock.set(T.start)
      let back = run.access("pro")
      equal(
        back.state, .denied(.expired),
        "after \(read.rawValue) saw pro end, setting the clock back 25 h does not re-grant it")
      equal(back.evidence.clockRollbackSuspected, true, "a clock 25 h behind the mark is suspect")
      equal(
        back.evidence.estimatedServerTime, T.at(T.day + T.hour),
        "the estimated server time never runs back")
      let view = try require(try run.view(), "the evaluated view after the clock went back")
      equal(view.decisions["pro"]?.state, .denied(.expired), "the evaluated view keeps pro ended")
      equal(view.clockRollbackSuspected, true, "and says the clock was set back")
      equal(run.activeKeys(), ["lifetime"], "the key listing keeps pro ended")

      try run.fail(reason: "timeout")
      let offline = run.access("pro")
      equal(
        offline.state, .denied(.expired), "a failed refresh at the set-back time re-grants nothing")
      equal(offline.evidence.clockRollbackSuspected, true, "nor clears the suspicion")

      // The server's word is new evidence: a refresh starts the time model over.
      let renewed = try ContractSnapshot.granting(
        "pro", requestDate: T.at(T.day + 2 * T.hour), until: T.at(40 * T.day))
      try run.store(renewed)
      let fresh = run.access("pro")
      equal(fresh.state, .granted, "a successful refresh after the rollback decides anew")
      equal(fresh.evidence.clockRollbackSuspected, false, "and resets the high-water mark")
    }
  }

  func clockSetBackBeforeRefresh() throws {
    for bootSession in [nil, "contract-boot"] {
      let clocks = bootSession == nil ? "wall clock only" : "with a boot clock"
      // The device reads T - 20 d when the server, at T, answers: pro for five days.
      let run = try open(at: T.at(-20 * T.day), bootSession: bootSession)
      let snapshot = try ContractSnapshot.make(
        requestDate: T.start,
        entitlements: [
          ContractEntitlement(
            key: "pro", status: "active", expiresAt: T.at(5 * T.day), verifiedAt: T.start),
          ContractEntitlement(key: "lifetime", status: "active", verifiedAt: T.start),
        ])
      try run.store(snapshot)
      let stored = run.access("pro")
      equal(stored.state, .granted, "\(clocks): pro right after the refresh")
      equal(stored.evidence.storedAt, T.at(-20 * T.day), "\(clocks): storedAt is device time")
      equal(stored.evidence.clockOffset, 20 * 86_400, "\(clocks): the clock offset is +20 d")
      equal(stored.evidence.estimatedServerTime, T.start, "\(clocks): server time is requestDate")
      equal(stored.evidence.validUntil, T.at(5 * T.day), "\(clocks): valid for five days")
      equal(stored.evidence.clockRollbackSuspected, false, "\(clocks): a slow clock is no rollback")

      run.clock.advance(by: .seconds(4 * T.day))
      let fourDays = run.access("pro")
      equal(fourDays.state, .granted, "\(clocks): four device days on, pro is granted")
      equal(fourDays.evidence.estimatedServerTime, T.at(4 * T.day), "\(clocks): server time T+4 d")

      run.clock.advance(by: .seconds(T.day))
      let fiveDays = run.access("pro")
      equal(
        fiveDays.state, .denied(.expired),
        "\(clocks): five device days on, pro has ended, though the device clock reads T - 15 d")
      equal(fiveDays.evidence.validUntil, T.at(5 * T.day), "\(clocks): it ended at expiresAt")
      let view = try require(try run.view(), "\(clocks): the evaluated view")
      equal(
        view.customerInfo.entitlements["pro"]?.status, .known(.expired),
        "\(clocks): the evaluated view reads pro as expired")
      equal(run.activeKeys(), ["lifetime"], "\(clocks): only lifetime is active")
      equal(
        run.access("lifetime").evidence.validUntil, T.at(30 * T.day),
        "\(clocks): the lifetime window is in server time too")
    }
  }

  func bootClock() throws {
    // Set back, with no read between: the boot clock alone saw the time pass.
    let back = try open(bootSession: "contract-boot-1")
    try back.store(try proForADay())
    back.clock.advance(by: .seconds(2 * T.day))
    back.clock.set(T.start)
    let decision = back.access("pro")
    equal(
      decision.state, .denied(.expired),
      "two days on the boot clock end pro, though the wall clock was set back to the store")
    equal(
      decision.evidence.estimatedServerTime, T.at(2 * T.day),
      "the estimated server time is requestDate plus the boot clock's time")
    equal(
      decision.evidence.clockRollbackSuspected, true,
      "a wall clock behind what the boot clock measured is suspect")

    // Set forward: the boot clock, not the wall clock, says an hour passed.
    let forward = try open(bootSession: "contract-boot-1")
    try forward.store(try proForADay())
    forward.clock.set(T.at(10 * T.day))
    forward.clock.advance(by: .seconds(T.hour))
    let ahead = forward.access("pro")
    equal(
      ahead.state, .granted,
      "an hour on the boot clock keeps pro, though the wall clock was set 10 days ahead")
    equal(
      ahead.evidence.estimatedServerTime, T.at(T.hour), "the server time follows the boot clock")
    // Nor is the wall clock ahead a device time seen: neither that read nor a failed refresh
    // attempt raises the mark to it, so once it is put right a reboot leaves pro granted.
    try forward.fail(reason: "timeout")
    forward.clock.set(T.at(T.hour))
    forward.clock.reboot(session: "contract-boot-2")
    equal(
      forward.access("pro").state, .granted,
      "the wall clock set 10 days ahead in the refresh's boot session, then put right, then a "
        + "reboot: pro must stay granted, since a read and a failed refresh attempt raise the "
        + "high-water mark to the device time they decided with "
        + "(EntitlementEvaluator.effectiveDeviceTime), the boot clock's in that session")
  }

  func rollbackAcrossReboot() throws {
    for read in ContractRead.allCases {
      let run = try open(bootSession: "contract-boot-1")
      try run.store(try proForADay())
      // Two days pass on both clocks, then the wall clock goes back to T - 1 d: only the boot
      // clock still knows, and the read measures the time on it.
      run.clock.advance(by: .seconds(2 * T.day))
      run.clock.set(T.at(-T.day))
      switch read {
      case .decision:
        equal(run.access("pro").state, .denied(.expired), "the boot clock ends pro for access(to:)")
      case .keyListing:
        equal(run.activeKeys(), ["lifetime"], "the boot clock ends pro for the key listing")
      case .evaluatedView:
        let view = try require(try run.view(), "the evaluated view")
        equal(
          view.decisions["pro"]?.state, .denied(.expired), "the boot clock ends pro in the view")
      }
      run.clock.reboot(session: "contract-boot-2")
      let rebooted = run.access("pro")
      equal(
        rebooted.state, .denied(.expired),
        """
        after \(read.rawValue) measured two days on the boot clock and the device rebooted \
        with the wall clock set back, pro must stay ended: that read's time is a device time \
        already seen (EntitlementEvaluator.effectiveDeviceTime), and the high-water mark must keep it
        """)
      equal(
        rebooted.evidence.estimatedServerTime, T.at(2 * T.day),
        "after the reboot the estimated server time keeps what \(read.rawValue) measured")
    }
  }

  /// Makes one read of kind `read` at the clock's time, as an app's screen would.
  private func see(_ read: ContractRead, on run: ContractRun) throws {
    switch read {
    case .decision: _ = run.access("pro")
    case .keyListing: _ = run.activeKeys()
    case .evaluatedView: _ = try run.view()
    }
  }
}
