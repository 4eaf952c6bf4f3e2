import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Fetch policies, one flight per scope, never backwards (<doc:RefreshClient>).
@Suite("Refresh client: fetch policies, one flight, never backwards")
struct FlightTests {
  static let hourLater = Fixture.requestDate.addingTimeInterval(.hour)

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("two concurrent refreshes of one scope make one fetch", arguments: CacheKind.allCases)
  func oneFlight(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind)
    harness.client.start()
    let first = harness.run { client in await client.refresh().appUserID }
    let second = harness.run { client in
      await client.state(fetchPolicy: .notStaleCachedOrFetched).appUserID
    }
    #expect(harness.fetcher.requests.count == 1)
    #expect(!first.isFinished && !second.isFinished)
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(first.isFinished && second.isFinished)
    #expect(harness.fetcher.requests.count == 1)
    #expect(harness.outcomes == ["alice: stored"])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a forced fetch that timed out, whose answer is then older than another instance's write, is retried",
    arguments: CacheKind.allCases)
  func timedOutThenOlderAnswerIsRetried(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind)
    try harness.startOverHourOldSnapshot()
    _ = harness.run { client in
      await client.state(fetchPolicy: .fetchCurrent(timeout: .seconds(3)))
    }
    // Another writer stores a newer snapshot while the fetch is out; then the wait times out.
    try harness.storeDirectly(
      ClientFixture.json(requestDate: Self.hourLater.addingTimeInterval(100)), user: "alice")
    harness.runtime.advance(by: .seconds(3))
    harness.fetcher.answer(json: ClientFixture.json(requestDate: Self.hourLater))
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: timedOut", "alice: discardedOlder"])
    #expect(harness.client.access(to: "pro").evidence.freshness == .offline)
    // The recorded timeout still stands, so a retry is due within the first backoff.
    harness.runtime.advance(by: .seconds(2))
    #expect(harness.fetcher.waiting.map(\.flow) == [.retry])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a forced fetch that times out answers the cached state marked offline; its late answer is stored and published",
    arguments: CacheKind.allCases)
  func forcedFetchTimesOut(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind)
    try harness.startOverHourOldSnapshot()
    let forced = harness.run { client in
      await client.state(fetchPolicy: .fetchCurrent(timeout: .seconds(3)))
    }
    harness.runtime.advance(by: .milliseconds(2999))
    #expect(!forced.isFinished)
    harness.runtime.advance(by: .milliseconds(1))
    #expect(forced.result?.customerInfo?.freshness == .offline)
    #expect(forced.result?.decisions["pro"]?.isGranted == true)
    #expect(forced.result?.decisions["pro"]?.evidence.isComputedOffline == true)
    #expect(harness.outcomes == ["alice: timedOut"])
    #expect(
      try harness.cache.load(ClientFixture.identity("alice").scope)?.bookkeeping
        .lastRefreshFailureReason == "timeout")

    harness.runtime.advance(by: .seconds(10))
    harness.fetcher.answer(
      json: ClientFixture.json(requestDate: Self.hourLater.addingTimeInterval(13)))
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: timedOut", "alice: lateStored"])
    #expect(harness.states.map { $0.customerInfo?.freshness } == [.stale, .offline, .fresh])
    #expect(
      try harness.cache.load(ClientFixture.identity("alice").scope)?.bookkeeping.lastRefreshFailedAt
        == nil)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a forced fetch answered in time is stored and answered fresh")
  func forcedFetchInTime() throws {
    let harness = try ClientHarness()
    harness.client.start()
    let forced = harness.run { client in
      await client.state(fetchPolicy: .fetchCurrent(timeout: .seconds(3)))
    }
    harness.runtime.advance(by: .seconds(2))
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(forced.result?.customerInfo?.freshness == .fresh)
    #expect(harness.outcomes == ["alice: stored"])
    // The timeout's wait was cancelled with the answer: nothing is left to fire.
    harness.runtime.advance(by: .seconds(5))
    #expect(harness.outcomes == ["alice: stored"])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("cacheOnly never fetches; cachedOrFetched answers at once and refreshes when stale")
  func cachePolicies() throws {
    let harness = try ClientHarness()
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.start(answering: ClientFixture.json())
    #expect(harness.fetcher.requests.count == 1)

    let cached = harness.run { client in await client.state(fetchPolicy: .cacheOnly) }
    let fresh = harness.run { client in await client.state() }
    #expect(cached.isFinished && fresh.isFinished)
    #expect(harness.fetcher.requests.count == 1)

    harness.runtime.advance(by: .seconds(301))
    let cachedOnly = harness.run { client in await client.state(fetchPolicy: .cacheOnly) }
    #expect(cachedOnly.result?.customerInfo?.freshness == .stale)
    #expect(harness.fetcher.requests.count == 1)
    let stale = harness.run { client in await client.state() }
    #expect(stale.result?.customerInfo?.freshness == .stale)
    #expect(harness.fetcher.waiting.map(\.flow) == [.fetchPolicy])

    let waitsForFresh = harness.run { client in
      await client.state(fetchPolicy: .notStaleCachedOrFetched)
    }
    #expect(!waitsForFresh.isFinished)
    harness.fetcher.answer(
      json: ClientFixture.json(requestDate: Fixture.requestDate.addingTimeInterval(301)))
    harness.runtime.runUntilIdle()
    #expect(waitsForFresh.result?.customerInfo?.freshness == .fresh)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "restore and sync return only after a fetch that started after them",
    arguments: [RefreshFlow.restore, .sync, .purchase])
  func restoreWaitsForItsOwnFetch(flow: RefreshFlow) throws {
    let harness = try ClientHarness()
    harness.client.start()
    let call = harness.run { client -> String in
      switch flow {
      case .restore: await client.restorePurchases().state.appUserID
      case .sync: await client.syncPurchases().state.appUserID
      default: await client.refreshAfterPurchase().appUserID
      }
    }
    let joiner = harness.run { client in await client.refresh().appUserID }
    #expect(harness.fetcher.waiting.map(\.flow) == [.start])
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(!call.isFinished)
    #expect(joiner.isFinished)
    #expect(harness.fetcher.waiting.map(\.flow) == [flow])
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(call.result == "alice")
    #expect(harness.fetcher.requests.map(\.flow) == [.start, flow])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("an answer older than the stored snapshot is not stored", arguments: CacheKind.allCases)
  func olderAnswerDiscarded(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind)
    try harness.storeDirectly(ClientFixture.json(requestDate: Self.hourLater), user: "alice")
    harness.client.start()
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(
      json: ClientFixture.json(requestDate: Fixture.requestDate, status: "expired"))
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: discardedOlder"])
    let stored = try harness.cache.load(ClientFixture.identity("alice").scope)
    #expect(stored?.snapshot?.customerInfo.requestDate == Self.hourLater)
    #expect(harness.client.access(to: "pro").isGranted)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a failed verification never replaces a verified snapshot", arguments: CacheKind.allCases)
  func failedVerificationKept(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind)
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.client.start()
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(
      json: ClientFixture.json(
        requestDate: Self.hourLater, verification: "failed", status: "expired"))
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: verificationFailed"])
    let stored = try harness.cache.load(ClientFixture.identity("alice").scope)
    #expect(stored?.snapshot?.customerInfo.verification == .known(.verified))
    #expect(stored?.bookkeeping.lastRefreshFailureReason == "verification_failed")
    #expect(harness.client.currentState?.customerInfo?.freshness == .offline)
    #expect(harness.client.access(to: "pro").isGranted)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a failed verification is stored over an unverified snapshot: it replaces no trust")
  func failedVerificationOverUnverified() throws {
    let harness = try ClientHarness()
    try harness.storeDirectly(ClientFixture.json(verification: "not_requested"), user: "alice")
    harness.client.start()
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(
      json: ClientFixture.json(requestDate: Self.hourLater, verification: "failed"))
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: stored"])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a body that is not a snapshot is recorded as a failed refresh and stores nothing")
  func invalidBody() throws {
    let harness = try ClientHarness()
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.start(answering: #"{"entitlements": 3}"#)
    #expect(harness.outcomes == ["alice: invalidResponse"])
    let stored = try harness.cache.load(ClientFixture.identity("alice").scope)
    #expect(stored?.bookkeeping.lastRefreshFailureReason == "invalid_response")
    #expect(stored?.snapshot?.customerInfo.requestDate == Fixture.requestDate)
  }
}
