import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The clauses about what reads answer: fail-closed, and the three reads agreeing.
extension ContractContext {
  func failClosed() throws {
    let run = try open()
    try run.expectNothingStored(
      ContractScope.primary, keys: ["pro", "anything"], "an empty cache")

    let snapshot = try ContractSnapshot.make(
      requestDate: T.start,
      entitlements: [
        ContractEntitlement(key: "pro", status: "active", expiresAt: T.at(30 * T.day)),
        ContractEntitlement(
          key: "mystery", status: "not_a_status_yet", expiresAt: T.at(30 * T.day)),
        ContractEntitlement(key: "gone", status: "revoked", expiresAt: T.at(30 * T.day)),
        ContractEntitlement(key: "retry", status: "billing_retry", expiresAt: T.at(30 * T.day)),
        ContractEntitlement(key: "old", status: "expired", expiresAt: T.at(-T.day)),
      ])
    try run.store(snapshot)
    for offset in [0, T.day, 29 * T.day] {
      run.clock.set(T.at(offset))
      let when = "at T + \(Int(offset / T.day)) d"
      let unknownKey = run.access("nowhere")
      equal(unknownKey.state, .denied(.notEntitled), "\(when): a key the snapshot lacks")
      equal(unknownKey.evidence.validUntil, nil, "\(when): a key never granted has no validUntil")
      equal(unknownKey.evidence.storedAt, T.start, "\(when): the denial rests on the snapshot")
      let unknown = run.access("mystery")
      equal(unknown.state, .denied(.unknownStatus), "\(when): an unknown status never grants")
      equal(unknown.evidence.validUntil, nil, "\(when): nor shows a validUntil")
      equal(run.access("gone").state, .denied(.revoked), "\(when): revoked")
      equal(run.access("retry").state, .denied(.billingRetry), "\(when): billing retry")
      equal(run.access("old").state, .denied(.expired), "\(when): expired by the server")
      equal(run.activeKeys(), ["pro"], "\(when): only pro is active")
      let view = try require(try run.view(), "\(when): the evaluated view")
      equal(
        view.decisions["mystery"]?.state, .denied(.unknownStatus),
        "\(when): the evaluated view never grants an unknown status")
    }

    let unverified = ContractScope.variants[0].scope
    try run.store(
      try ContractSnapshot.make(
        requestDate: T.at(29 * T.day), verification: "signed_twice",
        entitlements: [
          ContractEntitlement(key: "pro", status: "active", expiresAt: T.at(60 * T.day))
        ]),
      unverified)
    let granted = run.access("pro", unverified)
    equal(granted.state, .granted, "an unknown verification still grants")
    expect(!granted.isHighTrust, "but is never high trust, yet it was")

    let failedOnly = ContractScope.variants[1].scope
    try run.fail(failedOnly, reason: "timeout")
    expectUnavailable(
      run.access("pro", failedOnly), "a scope with only a failed refresh, never denied")

    try run.cache.remove(ContractScope.primary)
    try run.expectNothingStored(
      ContractScope.primary, keys: ["pro", "mystery"], "after remove, as never stored")
  }

  func outOfRangePolicy() throws {
    let run = try open()
    try run.store(
      try ContractSnapshot.make(
        requestDate: T.start,
        entitlements: [ContractEntitlement(key: "lifetime", status: "active", verifiedAt: T.start)]
      ))
    run.clock.advance(by: .seconds(400 * T.day))
    var notANumber = OfflinePolicy.conservative
    notANumber.nonExpiringMaxOfflineAge = .nan
    var forever = OfflinePolicy.conservative
    forever.nonExpiringMaxOfflineAge = .infinity
    var ageless = OfflinePolicy.serverSnapshot
    ageless.maxSnapshotAge = .nan
    let policies = [
      ("a NaN offline window", notANumber), ("an infinite offline window", forever),
      ("a NaN maximum snapshot age", ageless),
    ]
    for (name, policy) in policies {
      expect(
        !run.access("lifetime", policy: policy).isGranted,
        "\(name): lifetime access verified 400 days ago is not granted")
      expect(
        !run.activeKeys(policy: policy).contains("lifetime"),
        "\(name): nor listed as active")
      // Throwing is a fail-closed answer too.
      if let view = try? run.view(policy: policy) {
        expect(
          view.decisions["lifetime"]?.isGranted != true,
          "\(name): nor granted in the evaluated view")
      }
    }
  }

  func evaluatedViewAgreesWithAccess() throws {
    try walkRichSnapshot { step, reads in
      let stored = reads.stored.entitlements
      equal(
        Set(reads.view.decisions.keys), Set(stored.keys),
        "\(step): the view decides every entitlement of the snapshot")
      for key in stored.keys.sorted() {
        equal(reads.view.decisions[key], reads.decisions[key], "\(step): \(key)")
        guard let decision = reads.decisions[key], let server = stored[key]?.status else {
          continue
        }
        let shown = reads.view.customerInfo.entitlements[key]?.status
        let lapsed =
          decision.state == .denied(.expired) || decision.state == .denied(.offlineWindowElapsed)
        // Whatever the status (one the server already ended reads expired too), so no list of
        // the statuses that can lapse is kept here to fall behind the enum.
        if lapsed {
          equal(shown, .known(.expired), "\(step): \(key) denied by time reads expired")
        }
        if decision.isGranted {
          equal(shown, server, "\(step): \(key) granted reads as the server said")
        }
      }
      if let context = reads.stored.accessContext {
        equal(
          reads.view.customerInfo.accessContext != nil,
          reads.view.estimatedServerTime < context.expiresAt,
          "\(step): the access context shows exactly until it expires in server time")
      }
      if let pro = reads.decisions["pro"] {
        equal(
          reads.view.clockRollbackSuspected, pro.evidence.clockRollbackSuspected,
          "\(step): the view and a decision agree on a rollback")
        equal(
          reads.view.estimatedServerTime, pro.evidence.estimatedServerTime,
          "\(step): the view and a decision agree on the server time")
      }
    }
  }

  func activeKeysAgreeWithAccess() throws {
    try walkRichSnapshot { step, reads in
      let granted = Set(reads.decisions.filter { $0.value.isGranted }.keys)
      equal(reads.active, granted, "\(step): active keys are exactly the granted ones")
      equal(
        reads.view.activeEntitlementKeys, reads.active,
        "\(step): the evaluated view's active keys are the same")
    }
  }

  /// What the three reads answered at one instant.
  struct RichReads {
    var stored: CustomerInfo
    var decisions: [String: AccessDecision]
    var view: EvaluatedCustomerInfo
    var active: Set<String>
  }

  /// Stores a snapshot with one entitlement of every kind and walks it across its boundaries,
  /// a failed refresh and a clock set back, under three policies, calling `body` with the
  /// reads made at each step: every key's decision first, then the view, then the listing.
  private func walkRichSnapshot(_ body: (String, RichReads) throws -> Void) throws {
    let policies: [(name: String, policy: OfflinePolicy)] = [
      ("conservative", .conservative),
      ("serverSnapshot", .serverSnapshot),
      (
        "no family sharing, 5 d offline, stale after 1 h",
        OfflinePolicy(
          staleAfter: T.hour, nonExpiringMaxOfflineAge: 5 * T.day, excludeFamilyShared: true)
      ),
    ]
    let snapshot = try richSnapshot()
    let keys = snapshot.customerInfo.entitlements.keys.sorted() + ["upgrade", "nowhere"]
    for (index, (name, policy)) in policies.enumerated() {
      // A boot clock under one policy in two: both time models must agree with themselves.
      let run = try open(bootSession: index.isMultiple(of: 2) ? "contract-boot" : nil)
      try run.store(snapshot)
      let steps: [(String, () throws -> Void)] = [
        ("at the store", {}),
        ("4 min on", { run.clock.set(T.at(4 * T.minute)) }),
        ("15 min on", { run.clock.set(T.at(15 * T.minute)) }),
        ("2 d - 1 s on", { run.clock.set(T.at(2 * T.day - 1)) }),
        ("2 d on", { run.clock.set(T.at(2 * T.day)) }),
        ("3 d on", { run.clock.set(T.at(3 * T.day)) }),
        ("a failed refresh", { try run.fail(reason: "timeout") }),
        ("10 d on", { run.clock.set(T.at(10 * T.day)) }),
        ("the clock set back to 1 d", { run.clock.set(T.at(T.day)) }),
        ("21 d on", { run.clock.set(T.at(21 * T.day)) }),
        ("40 d on", { run.clock.set(T.at(40 * T.day)) }),
      ]
      for (label, move) in steps {
        try move()
        var decisions: [String: AccessDecision] = [:]
        for key in keys {
          decisions[key] = run.access(key, policy: policy)
        }
        let view = try require(try run.view(policy: policy), "\(name), \(label): the view")
        let reads = RichReads(
          stored: snapshot.customerInfo, decisions: decisions, view: view,
          active: run.activeKeys(policy: policy))
        try body("\(name), \(label)", reads)
      }
    }
  }

  /// One entitlement of every kind, an unclaimed purchase, an access context and device access.
  private func richSnapshot() throws -> CustomerInfoSnapshot {
    try ContractSnapshot.make(
      requestDate: T.start,
      entitlements: [
        ContractEntitlement(
          key: "pro", status: "active", expiresAt: T.at(3 * T.day), verifiedAt: T.start),
        ContractEntitlement(key: "lifetime", status: "active", verifiedAt: T.at(-10 * T.day)),
        ContractEntitlement(
          key: "graceful", status: "grace", expiresAt: T.at(-T.day),
          gracePeriodExpiresAt: T.at(2 * T.day), verifiedAt: T.start),
        ContractEntitlement(key: "retry", status: "billing_retry", expiresAt: T.at(10 * T.day)),
        ContractEntitlement(key: "old", status: "expired", expiresAt: T.at(-5 * T.day)),
        ContractEntitlement(key: "gone", status: "revoked"),
        ContractEntitlement(
          key: "mystery", status: "not_a_status_yet", expiresAt: T.at(10 * T.day)),
        ContractEntitlement(
          key: "family", status: "active", expiresAt: T.at(10 * T.day), verifiedAt: T.start,
          source: "family_shared"),
      ],
      unclaimed: [
        ContractUnclaimed(id: "tx_9", keys: ["upgrade", "old"], hint: "restore_required")
      ],
      accessContextExpiresAt: T.at(15 * T.minute),
      deviceAccess: (status: "active", expiresAt: T.at(21 * T.day)))
  }
}
