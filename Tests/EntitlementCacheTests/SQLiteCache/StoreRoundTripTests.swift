import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// What goes into the file comes back: the server's bytes, the normalized columns a point read
/// uses, and the bookkeeping.
@Suite("Store round trip")
struct StoreRoundTripTests {
  @Test func storedBytesComeBackByteForByte() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let bytes = Data(ModelFixture.richJSON.utf8)
    do {
      let cache = try Fixture.cache(in: directory, clock: clock)
      try cache.store(try CustomerInfoSnapshot(jsonData: bytes), for: Fixture.scopeA)
      #expect(try cache.load(Fixture.scopeA)?.snapshot?.jsonData == bytes)
    }
    let reopened = try Fixture.cache(in: directory, clock: clock)
    let loaded = try #require(try reopened.load(Fixture.scopeA)?.snapshot)
    #expect(loaded.jsonData == bytes)
    #expect(loaded.customerInfo == (try ModelFixture.richInfo()))
  }

  @Test func bookkeepingOfASuccessfulRefresh() throws {
    let directory = try TemporaryDirectory()
    // The device clock is ahead of the server's requestDate, with sub-millisecond noise.
    let storedAt = Fixture.requestDate.addingTimeInterval(90.123_4)
    let clock = ManualClock(storedAt)
    let snapshot = try Fixture.snapshot()
    do {
      let cache = try Fixture.cache(in: directory, clock: clock)
      try cache.store(snapshot, for: Fixture.scopeA)
    }
    let cache = try Fixture.cache(in: directory, clock: clock)
    let bookkeeping = try #require(try cache.load(Fixture.scopeA)?.bookkeeping)
    let milliseconds = Date(unixMilliseconds: storedAt.unixMilliseconds)
    #expect(bookkeeping.storedAt == milliseconds)
    #expect(bookkeeping.serverTime == Fixture.requestDate)
    #expect(bookkeeping.lastRefreshAttemptAt == milliseconds)
    #expect(bookkeeping.lastRefreshFailedAt == nil)
    #expect(bookkeeping.lastRefreshFailureReason == nil)
    #expect(bookkeeping.deviceHighWaterMark == milliseconds)
    #expect(bookkeeping.snapshotSize == snapshot.jsonData.count)
    #expect(bookkeeping.snapshotSHA256 == SHA256.hash(Array(snapshot.jsonData)))
  }

  /// The device mark holds device times only (<doc:Storage#Bookkeeping>); the server's clock being
  /// ahead is recorded as the offset, not folded into the mark (issue 9).
  @Test func theDeviceMarkHoldsTheDeviceTimeWhenTheServerIsAhead() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate.addingTimeInterval(-.hour))
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let bookkeeping = try #require(try cache.load(Fixture.scopeA)?.bookkeeping)
    #expect(bookkeeping.deviceHighWaterMark == Fixture.requestDate.addingTimeInterval(-.hour))
    #expect(bookkeeping.storedAt == Fixture.requestDate.addingTimeInterval(-.hour))
    #expect(bookkeeping.serverOffset == .hour)
    let raw = try StoreTest.connection(directory.path("cache.sqlite"), readOnly: true)
    #expect(try raw.scalarInt("SELECT server_offset FROM scope") == 3_600_000)
  }

  @Test func normalizedColumnsHoldEveryFactAPointReadNeeds() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let info = try ModelFixture.richInfo()
    do {
      let cache = try Fixture.cache(in: directory, clock: clock)
      try cache.store(try CustomerInfoSnapshot(info), for: Fixture.scopeA)
    }
    // A new instance has nothing in memory: these facts come from the file's columns.
    let reopened = try Fixture.cache(in: directory, clock: clock)
    let (entitlements, snapshot) = try StoreTest.residentFacts(reopened, Fixture.scopeA)
    #expect(entitlements == EntitlementFacts.table(for: info))
    #expect(snapshot == SnapshotFacts(info))
    // The table includes the key only an unclaimed purchase mentions, for its claim hint.
    #expect(entitlements["gold"]?.status == nil)
    #expect(entitlements["gold"]?.claimHint == .restoreRequired)
    #expect(entitlements["legacy"]?.status == .unknown("not_a_status_yet"))
    #expect(entitlements["legacy"]?.source == .unknown("partner_bundle"))
  }

  @Test func anActiveInstallationKeepsOnlyItsStatusAndExpiryInMemoryAndInTheFile() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let info = try Fixture.snapshot().customerInfo
    #expect(info.deviceAccess?.devices.isEmpty == false)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let written = try StoreTest.residentFacts(cache, Fixture.scopeA).snapshot
    let read = try StoreTest.residentFacts(
      try Fixture.cache(in: directory, clock: clock), Fixture.scopeA
    ).snapshot
    #expect(written == read)
    #expect(
      read?.deviceAccess
        == DeviceAccessInfo(status: .known(.active), expiresAt: info.deviceAccess?.expiresAt))
    let raw = try StoreTest.connection(cache.path, readOnly: true)
    #expect(try raw.scalarInt("SELECT count(*) FROM scope WHERE device_block IS NULL") == 1)
  }

  @Test func pointReadsFromTheFileDecideLikeTheInMemoryEvaluator() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let info = try ModelFixture.richInfo()
    do {
      let cache = try Fixture.cache(in: directory, clock: clock)
      try cache.store(try CustomerInfoSnapshot(info), for: Fixture.scopeA)
    }
    let reopened = try Fixture.cache(in: directory, clock: clock)
    let bookkeeping = try #require(try reopened.load(Fixture.scopeA)?.bookkeeping)
    for key in ["pro", "legacy", "lifetime", "gold", "absent"] {
      let stored = reopened.access(to: key, for: Fixture.scopeA)
      let direct = EntitlementEvaluator.decision(
        for: key, in: info, bookkeeping: bookkeeping, now: clock.now)
      #expect(stored == direct, "\(key)")
    }
    // The rich snapshot's device is blocked; the decision carries the redacted device list.
    let pro = reopened.access(to: "pro", for: Fixture.scopeA)
    #expect(pro.state == .deviceBlocked(.known(.deviceReplaced)))
    #expect(pro.device?.devices.map(\.id) == ["d_7f3a", "d_0001"])
    #expect(pro.device?.changeBudget == DeviceChangeBudget(remaining: 0, limit: 3, windowDays: 30))
    #expect(reopened.access(to: "legacy", for: Fixture.scopeA).state == .denied(.unknownStatus))
    #expect(reopened.access(to: "gold", for: Fixture.scopeA).recovery == .restoreRequired)
  }

  @Test func evaluatedCustomerInfoKeepsUnknownFields() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(
      try CustomerInfoSnapshot(jsonData: Data(ModelFixture.richJSON.utf8)), for: Fixture.scopeA)
    let evaluated = try #require(try cache.evaluatedCustomerInfo(for: Fixture.scopeA))
    let info = try ModelFixture.richInfo()
    #expect(evaluated.customerInfo.unknownFields == info.unknownFields)
    #expect(
      evaluated.customerInfo.entitlements["pro"]?.unknownFields
        == info.entitlements["pro"]?.unknownFields)
    #expect(evaluated.customerInfo.deviceAccess == info.deviceAccess)
  }

  @Test func textWithZeroBytesIsStoredWhole() throws {
    // JSON allows \u0000 in keys; a C-string bind would cut "pro\u0000x" to "pro" and confuse
    // the two entitlements.
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let json = """
      {"requestDate": "2026-11-30T12:00:00Z", "entitlements": {
        "pro": {"status": "revoked"},
        "pro\\u0000x": {"status": "active", "expiresAt": "2026-12-30T12:00:00Z",
                        "productId": "p\\u0000q"}}}
      """
    let info = try Fixture.snapshot(json).customerInfo
    do {
      let cache = try Fixture.cache(in: directory, clock: clock)
      try cache.store(try Fixture.snapshot(json), for: Fixture.scopeA)
      try cache.recordRefreshFailure(for: Fixture.scopeA, reason: "a\u{0}b")
    }
    let reopened = try Fixture.cache(in: directory, clock: clock)
    #expect(reopened.access(to: "pro", for: Fixture.scopeA).state == .denied(.revoked))
    #expect(reopened.access(to: "pro\u{0}x", for: Fixture.scopeA).state == .granted)
    #expect(reopened.access(to: "pro\u{0}", for: Fixture.scopeA).state == .denied(.notEntitled))
    let (entitlements, _) = try StoreTest.residentFacts(reopened, Fixture.scopeA)
    #expect(entitlements == EntitlementFacts.table(for: info))
    #expect(try reopened.load(Fixture.scopeA)?.bookkeeping.lastRefreshFailureReason == "a\u{0}b")
  }
}
