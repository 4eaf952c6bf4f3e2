import EntitlementCache
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The clauses about what is stored: the round trip, failures, scopes, rejected writes.
extension ContractContext {
  typealias T = ContractTime

  func roundTrip() throws {
    let run = try open(bootSession: "contract-boot")
    try run.expectNothingStored(ContractScope.primary, "before any store")

    // The server's clock 90 s ahead of the device's, so serverTime and storedAt differ.
    let first = try ContractSnapshot.make(
      requestDate: T.at(90),
      entitlements: [
        ContractEntitlement(key: "pro", status: "active", expiresAt: T.at(30 * T.day))
      ],
      accessContextExpiresAt: T.at(15 * T.minute))
    try run.store(first)
    let loaded = try require(try run.load(), "load after store")
    equal(loaded.snapshot?.jsonData, first.jsonData, "load gives back the stored bytes")
    equal(loaded.snapshot?.customerInfo, first.customerInfo, "and the CustomerInfo they hold")
    let stored = loaded.bookkeeping
    equal(stored.storedAt, T.start, "storedAt is the device time of the store")
    equal(stored.serverTime, T.at(90), "serverTime is the snapshot's requestDate")
    equal(stored.serverOffset, 90, "serverOffset is requestDate - storedAt")
    equal(stored.lastRefreshAttemptAt, T.start, "a store is a refresh attempt")
    equal(stored.lastRefreshFailedAt, nil, "a store records no failure")
    equal(stored.lastRefreshFailureReason, nil, "a store records no failure reason")
    equal(stored.deviceHighWaterMark, T.start, "a store sets the high-water mark to its time")
    if let size = stored.snapshotSize {
      equal(size, first.jsonData.count, "snapshotSize is the stored byte count")
    }
    if let digest = stored.snapshotSHA256 {
      equal(digest.count, 32, "snapshotSHA256 is a SHA-256 digest")
    }
    if let boot = stored.refreshBootInstant {
      equal(boot, run.clock.bootInstant, "refreshBootInstant is the boot clock at the store")
    }

    // A read an hour later raises the mark; a cache may show that lazily, never beyond it.
    run.clock.advance(by: .seconds(T.hour))
    equal(run.access("pro").state, .granted, "pro an hour after the store")
    var afterRead = try run.bookkeeping("load after a read")
    expect(
      afterRead.deviceHighWaterMark >= T.start && afterRead.deviceHighWaterMark <= T.at(T.hour),
      "after a read the mark is between the store and the read, not \(afterRead.deviceHighWaterMark)"
    )
    afterRead.deviceHighWaterMark = stored.deviceHighWaterMark
    equal(afterRead, stored, "a read changes no bookkeeping but the high-water mark")

    // A refresh with the clock set back replaces everything and resets the mark to its time.
    run.clock.set(T.at(30 * T.minute))
    let second = try ContractSnapshot.granting(
      "gold", requestDate: T.at(30 * T.minute - 10), until: T.at(60 * T.day))
    try run.store(second)
    let replaced = try require(try run.load(), "load after the second store")
    equal(replaced.snapshot?.jsonData, second.jsonData, "the second store replaces the bytes")
    let again = replaced.bookkeeping
    equal(again.storedAt, T.at(30 * T.minute), "storedAt is the second store's time")
    equal(again.serverTime, T.at(30 * T.minute - 10), "serverTime is the new requestDate")
    equal(again.lastRefreshAttemptAt, T.at(30 * T.minute), "the attempt is the second store")
    equal(
      again.deviceHighWaterMark, T.at(30 * T.minute),
      "a store resets the mark to its own time, even below a time reads saw")
    if let size = again.snapshotSize {
      equal(size, second.jsonData.count, "snapshotSize follows the new bytes")
    }
    if let old = stored.snapshotSHA256, let new = again.snapshotSHA256 {
      expect(old != new, "snapshotSHA256 follows the new bytes; it stayed the same")
    }
    equal(run.access("gold").state, .granted, "the new snapshot's key is granted")
    equal(
      run.access("pro").state, .denied(.notEntitled),
      "the old snapshot's key is gone: a store replaces, never merges")
    try expectChangeMark(run)
  }

  /// For a cache that signals its changes: reads leave the mark where it is, and a store, a
  /// failed refresh and a removal each move it.
  private func expectChangeMark(_ run: ContractRun) throws {
    guard let signaling = run.cache as? any CustomerInfoChangeSignaling else { return }
    let scope = ContractScope.primary
    var mark = signaling.changeMark()
    _ = run.access("gold")
    _ = run.activeKeys()
    _ = try run.view()
    _ = try run.load()
    equal(signaling.changeMark(), mark, "reads leave the change mark where it is")
    let writes: [(String, () throws -> Void)] = [
      (
        "a store",
        { try run.store(ContractSnapshot.granting("gold", requestDate: T.start, until: nil)) }
      ),
      ("a failed refresh", { try run.cache.recordRefreshFailure(for: scope, reason: "timeout") }),
      ("a removal", { try run.cache.remove(scope) }),
    ]
    for (write, perform) in writes {
      try perform()
      let moved = signaling.changeMark()
      expect(
        moved != mark, "\(write) moves the change mark, which stayed \(String(describing: mark))")
      mark = moved
    }
  }

  func failureBookkeeping() throws {
    let run = try open(bootSession: "contract-boot")

    // A failure before any snapshot: bookkeeping, and still nothing to decide on.
    try run.fail(reason: "timeout")
    let early = try require(try run.load(), "load after a failure with nothing stored")
    equal(early.snapshot, nil, "a failure alone stores no snapshot")
    equal(early.bookkeeping.storedAt, nil, "a failure alone has no storedAt")
    equal(early.bookkeeping.lastRefreshFailedAt, T.start, "the failure's device time")
    equal(early.bookkeeping.lastRefreshAttemptAt, T.start, "a failure is a refresh attempt")
    equal(early.bookkeeping.lastRefreshFailureReason, "timeout", "the failure's reason")
    expectUnavailable(run.access("pro"), "pro after a failure with nothing stored")
    expect(
      try run.view() == nil,
      "no evaluated view after a failure with nothing stored, yet the cache gave one")
    equal(run.activeKeys(), [], "no active keys after a failure with nothing stored")

    // A store clears it.
    run.clock.advance(by: .seconds(T.minute))
    let snapshot = try ContractSnapshot.granting(
      "pro", requestDate: T.at(T.minute), until: T.at(T.day))
    try run.store(snapshot)
    let cleared = try run.bookkeeping("load after the store")
    equal(cleared.lastRefreshFailedAt, nil, "a store clears the earlier failure")
    equal(cleared.lastRefreshFailureReason, nil, "a store clears the earlier reason")
    equal(cleared.lastRefreshAttemptAt, T.at(T.minute), "the attempt is the store")
    let online = run.access("pro")
    equal(online.state, .granted, "pro after the store")
    equal(online.evidence.freshness, .fresh, "fresh after the store")
    equal(online.evidence.isComputedOffline, false, "not computed offline after the store")
    expect(online.isHighTrust, "verified and online: high trust, not \(online.state) without it")

    // A failure later: access unchanged, served offline.
    run.clock.advance(by: .seconds(10 * T.minute))
    try run.fail(reason: "timeout")
    let failed = try require(try run.load(), "load after the failure")
    equal(failed.snapshot?.jsonData, snapshot.jsonData, "a failure keeps the snapshot")
    equal(failed.bookkeeping.storedAt, T.at(T.minute), "a failure keeps storedAt")
    equal(failed.bookkeeping.lastRefreshFailedAt, T.at(11 * T.minute), "the failure's time")
    equal(failed.bookkeeping.lastRefreshAttemptAt, T.at(11 * T.minute), "the attempt's time")
    equal(failed.bookkeeping.lastRefreshFailureReason, "timeout", "the reason is kept")
    expect(
      failed.bookkeeping.deviceHighWaterMark >= T.at(11 * T.minute),
      "a failed refresh attempt raises the high-water mark to its time")
    let offline = run.access("pro")
    equal(offline.state, .granted, "a failed refresh never revokes access")
    equal(offline.evidence.validUntil, online.evidence.validUntil, "nor moves its boundary")
    equal(offline.evidence.freshness, .offline, "served offline after a failed refresh")
    equal(offline.evidence.isComputedOffline, true, "computed offline after a failed refresh")
    expect(!offline.isHighTrust, "computed offline: never high trust, yet it was")
    let view = try require(try run.view(), "the evaluated view after the failure")
    equal(view.freshness, .offline, "the evaluated view is offline too")
    equal(view.isComputedOffline, true, "and computed offline")

    run.clock.advance(by: .seconds(5 * T.minute))
    try run.fail(reason: "http_503")
    let latest = try run.bookkeeping("load after the second failure")
    equal(latest.lastRefreshFailureReason, "http_503", "the latest failure's reason")
    equal(latest.lastRefreshFailedAt, T.at(16 * T.minute), "the latest failure's time")

    run.clock.advance(by: .seconds(5 * T.minute))
    try run.store(snapshot)
    let recovered = try run.bookkeeping("load after the next store")
    equal(recovered.lastRefreshFailedAt, nil, "the next store clears the failure")
    equal(recovered.lastRefreshFailureReason, nil, "and its reason")
    let back = run.access("pro")
    equal(back.evidence.freshness, .fresh, "fresh again after the next store")
    equal(back.evidence.isComputedOffline, false, "no longer computed offline")
  }

  func scopeIsolation() throws {
    let run = try open()
    let primary = ContractScope.primary
    let own = try ContractSnapshot.make(
      requestDate: T.start,
      entitlements: [
        ContractEntitlement(key: "pro", status: "active", expiresAt: T.at(30 * T.day)),
        ContractEntitlement(key: "lifetime", status: "active", verifiedAt: T.start),
      ])
    try run.store(own)
    for (part, scope) in ContractScope.variants {
      try run.expectNothingStored(
        scope, keys: ["pro", "lifetime"],
        "another \(part), after a store under the first scope")
    }

    // Each variant gets a snapshot of its own, with a key no other scope has.
    var theirs: [String: CustomerInfoSnapshot] = [:]
    for (part, scope) in ContractScope.variants {
      let snapshot = try ContractSnapshot.granting(
        key(for: part), requestDate: T.start, until: T.at(10 * T.day))
      theirs[part] = snapshot
      try run.store(snapshot, scope)
    }
    for (part, scope) in ContractScope.variants {
      let step = "another \(part)"
      equal(
        try run.load(scope)?.snapshot?.jsonData, theirs[part]?.jsonData,
        "\(step): load gives its own snapshot")
      equal(run.activeKeys(scope), [key(for: part)], "\(step): only its own keys are active")
      equal(run.access("pro", scope).state, .denied(.notEntitled), "\(step): no pro of another")
      equal(
        run.access(key(for: part), primary).state, .denied(.notEntitled),
        "the first scope does not see the key of another \(part)")
    }
    equal(
      try run.load(primary)?.snapshot?.jsonData, own.jsonData,
      "the first scope keeps its snapshot while others are written")
    equal(run.activeKeys(primary), ["pro", "lifetime"], "the first scope keeps its keys")

    // Failures and removal stay in their scope.
    let (failedPart, failedScope) = ContractScope.variants[0]
    try run.fail(failedScope, reason: "timeout")
    equal(
      run.access("pro", primary).evidence.freshness, .fresh,
      "a failure under another \(failedPart) leaves the first scope online")
    equal(
      try run.bookkeeping("the first scope", of: primary).lastRefreshFailedAt, nil,
      "a failure under another \(failedPart) records nothing under the first scope")
    try run.cache.remove(failedScope)
    try run.expectNothingStored(failedScope, keys: [key(for: failedPart)], "a removed scope")
    equal(
      try run.load(primary)?.snapshot?.jsonData, own.jsonData,
      "removing another \(failedPart) keeps the first scope")
    try run.cache.remove(primary)
    try run.expectNothingStored(primary, keys: ["pro", "lifetime"], "the first scope, removed")
    for (part, scope) in ContractScope.variants.dropFirst() {
      equal(
        try run.load(scope)?.snapshot?.jsonData, theirs[part]?.jsonData,
        "removing the first scope keeps another \(part)")
      equal(run.access(key(for: part), scope).state, .granted, "another \(part) keeps access")
    }
  }

  func rejectedWrite() throws {
    let run = try open()
    let previous = try ContractSnapshot.granting("pro", requestDate: T.start, until: T.at(T.day))
    try run.store(previous)
    run.clock.advance(by: .seconds(T.minute))
    let decision = run.access("pro")
    let before = try run.load()

    // Bytes that do not validate never reach the cache: the snapshot is never built.
    let missingStatus = Data(
      #"{"requestDate": "2026-11-30T12:00:00Z", "entitlements": {"pro": {}}}"#.utf8)
    expect(
      (try? CustomerInfoSnapshot(jsonData: missingStatus)) == nil,
      "a snapshot without an entitlement status is rejected before any write")

    guard let limit = snapshotSizeLimit else { return }
    let oversized = try ContractSnapshot.make(
      requestDate: T.at(T.minute),
      entitlements: [ContractEntitlement(key: "gold", status: "active", expiresAt: nil)],
      totalSize: limit + 1)
    do {
      try run.store(oversized)
      Issue.record(
        comment("a snapshot of \(limit + 1) bytes, over the \(limit)-byte cap, was stored"),
        sourceLocation: location)
    } catch {
      expect(isInvalidSnapshot(error), "an oversized snapshot throws invalidSnapshot, not \(error)")
    }
    expectUnchanged(try run.load(), before, "a rejected write")
    equal(run.access("pro"), decision, "a rejected write keeps the decision")
    equal(run.access("gold").state, .denied(.notEntitled), "nothing of the rejected snapshot")

    let empty = ContractScope.variants[3].scope
    do {
      try run.store(oversized, empty)
      Issue.record(
        comment("an oversized snapshot was stored under an empty scope"), sourceLocation: location)
    } catch {
      expect(isInvalidSnapshot(error), "an oversized snapshot throws invalidSnapshot, not \(error)")
    }
    try run.expectNothingStored(empty, keys: ["gold"], "an empty scope after a rejected write")

    let atTheCap = try ContractSnapshot.make(
      requestDate: T.at(T.minute),
      entitlements: [ContractEntitlement(key: "gold", status: "active", expiresAt: nil)],
      totalSize: limit)
    equal(atTheCap.jsonData.count, limit, "the kit built a snapshot of exactly the cap")
    try run.store(atTheCap)
    equal(
      try run.load()?.snapshot?.jsonData, atTheCap.jsonData,
      "a snapshot of exactly the cap is stored")
  }

  func conditionalStore() throws {
    let run = try open()
    let scope = ContractScope.primary
    let first = try ContractSnapshot.granting("pro", requestDate: T.start, until: T.at(T.day))
    equal(try run.cache.storeAnswer(first, for: scope), .stored, "an answer to an empty scope")
    run.clock.advance(by: .seconds(T.minute))
    let stored = try run.load()

    // Older: an answer the server gave before the one stored, landing late.
    let older = try ContractSnapshot.granting(
      "gold", requestDate: T.at(-T.minute), until: T.at(T.day))
    equal(try run.cache.storeAnswer(older, for: scope), .discardedOlder, "an older answer")
    expectUnchanged(try run.load(), stored, "a discarded answer")
    equal(run.access("gold").state, .denied(.notEntitled), "nothing of a discarded answer")
    // However old: a year-old answer, replayed or cached, is discarded too.
    let yearOld = try ContractSnapshot.granting(
      "gold", requestDate: T.at(-365 * T.day), until: T.at(T.day))
    equal(try run.cache.storeAnswer(yearOld, for: scope), .discardedOlder, "a year-old answer")

    // A failed verification, claimed by an unsigned body, over a verified snapshot.
    let failed = try ContractSnapshot.make(
      requestDate: T.at(T.minute), verification: "failed",
      entitlements: [ContractEntitlement(key: "gold", status: "active", expiresAt: T.at(T.day))])
    let refused = try run.cache.storeAnswer(failed, for: scope)
    expect(
      { if case .refusedUnverified = refused { true } else { false } }(),
      "a failed answer over a verified snapshot is refusedUnverified, not \(refused)")
    expectUnchanged(try run.load(), stored, "a refused answer")

    // Same requestDate and later: stored.
    let again = try ContractSnapshot.granting("pro", requestDate: T.start, until: T.at(2 * T.day))
    equal(try run.cache.storeAnswer(again, for: scope), .stored, "an answer of the same instant")
    let newer = try ContractSnapshot.granting(
      "gold", requestDate: T.at(T.minute), until: T.at(T.day))
    equal(try run.cache.storeAnswer(newer, for: scope), .stored, "a newer answer")
    equal(
      try run.load()?.snapshot?.jsonData, newer.jsonData, "the newer answer is what is stored")
    equal(run.access("gold").state, .granted, "the newer answer decides")

    // The plain store is the unconditional one: a support action may go back.
    try run.store(older)
    equal(try run.load()?.snapshot?.jsonData, older.jsonData, "store(_:for:) stores an older one")

    // A stored date more than a day ahead of both the answer and the clock (a body dated in
    // the future) is what is wrong: the next genuine answer replaces it rather than the scope
    // freezing on it for good.
    let farFuture = try ContractSnapshot.granting(
      "pro", requestDate: T.at(400 * T.day), until: T.at(500 * T.day))
    try run.store(farFuture)
    let genuine = try ContractSnapshot.granting(
      "gold", requestDate: T.at(2 * T.minute), until: T.at(T.day))
    equal(
      try run.cache.storeAnswer(genuine, for: scope), .stored,
      "an answer after one dated 400 days ahead")
    equal(
      try run.load()?.snapshot?.jsonData, genuine.jsonData,
      "the genuine answer replaces the one dated in the future")
  }

  /// `after` holds what `before` held: the same snapshot and bookkeeping, except that the
  /// high-water mark may have caught up with reads made before (a lazy cache persists them
  /// with the next write it attempts), never beyond the clock.
  private func expectUnchanged(
    _ after: CachedCustomerInfo?, _ before: CachedCustomerInfo?, _ step: String
  ) {
    guard var after, let before else {
      equal(after, before, "\(step) keeps what was stored")
      return
    }
    expect(
      after.bookkeeping.deviceHighWaterMark >= before.bookkeeping.deviceHighWaterMark,
      "\(step) never moves the high-water mark back")
    after.bookkeeping.deviceHighWaterMark = before.bookkeeping.deviceHighWaterMark
    equal(after, before, "\(step) keeps the snapshot and its bookkeeping")
  }

  private func key(for part: String) -> String {
    "only-" + part.split(separator: " ").joined(separator: "-").lowercased()
  }

  private func isInvalidSnapshot(_ error: any Error) -> Bool {
    if case .invalidSnapshot? = error as? CacheError { return true }
    return false
  }
}
