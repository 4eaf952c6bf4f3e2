import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The refresh client at the edges of identity switches, flights and backoff: a verified
/// snapshot against a failed answer, work queued for a user who left, a fetch that never
/// answers, a client dropped without stop(). Each test failed before the fix it keeps.
@Suite("Refresh client: edges of identity, flights and backoff")
struct RefreshEdgeCaseTests {
  static let hourLater = Fixture.requestDate.addingTimeInterval(.hour)

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a failed verification never replaces a verified_on_device snapshot")
  func verifiedOnDeviceKept() throws {
    let harness = try ClientHarness()
    try harness.storeDirectly(ClientFixture.json(verification: "verified_on_device"), user: "alice")
    harness.client.start()
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(
      json: ClientFixture.json(
        requestDate: Self.hourLater, verification: "failed", status: "expired"))
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: verificationFailed"])
    #expect(harness.client.access(to: "pro").isGranted)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a restore queued for a user who then logs out is never sent")
  func queuedFetchAfterLogOut() throws {
    let harness = try ClientHarness()
    harness.client.start()
    harness.runtime.runUntilIdle()
    let restore = harness.run { client in await client.restorePurchases().state.appUserID }
    _ = harness.run { client in try? await client.logOut(to: "guest") }
    harness.fetcher.answer(user: "alice", json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(
      harness.fetcher.waiting.map { "\($0.appUserID) \($0.flow)" } == ["guest identityChange"])
    #expect(restore.result == "guest")
    #expect(try harness.cache.load(ClientFixture.identity("alice").scope) == nil)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a timeout recorded after logOut does not bring the removed user's row back")
  func timeoutAfterLogOut() throws {
    let harness = try ClientHarness()
    harness.client.start()
    harness.runtime.runUntilIdle()
    let forced = harness.run { client in
      await client.state(fetchPolicy: .fetchCurrent(timeout: .seconds(3))).appUserID
    }
    harness.runtime.advance(by: .seconds(1))
    _ = harness.run { client in try? await client.logOut(to: "guest") }
    harness.runtime.advance(by: .seconds(2))
    #expect(forced.result == "guest")
    #expect(try harness.cache.load(ClientFixture.identity("alice").scope) == nil)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a fetch that never answers fails after the fetch timeout and frees the scope's flight")
  func hungFetch() throws {
    let harness = try ClientHarness { $0.changeCheckInterval = nil }
    harness.client.start()
    harness.runtime.runUntilIdle()
    let restore = harness.run { client in await client.restorePurchases().state.appUserID }
    harness.runtime.advance(by: .seconds(59))
    #expect(harness.outcomes.isEmpty)
    harness.runtime.advance(by: .seconds(1))
    #expect(harness.outcomes == ["alice: failed"])
    #expect(harness.fetcher.requests.map(\.flow) == [.start, .restore])
    harness.fetcher.answer(user: "alice", json: ClientFixture.json())  // the hung one, too late
    harness.fetcher.answer(user: "alice", json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(restore.result == "alice")
    #expect(harness.outcomes == ["alice: failed", "alice: stored"])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("while a failure backs off, cachedOrFetched reads do not fetch")
  func cachedOrFetchedWaitsOutTheBackoff() throws {
    let harness = try ClientHarness { $0.changeCheckInterval = nil }
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.start(answering: .failure(.transient(status: nil)))
    for _ in 0..<5 { _ = harness.run { client in await client.state() } }
    #expect(harness.fetcher.requests.count == 1)
    #expect(harness.fetcher.waiting.isEmpty)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a retry pending for A is not sent after a switch to B")
  func retryStopsAtIdentityChange() throws {
    let harness = try ClientHarness { $0.changeCheckInterval = nil }
    harness.start(answering: .failure(.transient(status: nil)))
    _ = harness.run { client in try? await client.logIn("bob") }
    harness.runtime.advance(by: .minute * 10)
    #expect(harness.fetcher.requests.filter { $0.appUserID == "alice" }.map(\.flow) == [.start])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a client dropped without stop() is freed and leaves no wait behind")
  func droppedClientIsFreed() throws {
    let runtime = SimulatedRuntime(start: Fixture.requestDate)
    let cache = InMemoryCustomerInfoCache(clock: runtime.clock)
    try cache.store(
      try CustomerInfoSnapshot(jsonData: Data(ClientFixture.json().utf8)),
      for: ClientFixture.identity("alice").scope)
    weak var dropped: EntitlementClient?
    do {
      let client = try EntitlementClient(
        cache: cache, fetcher: HandAnsweredFetcher(), identity: ClientFixture.identity("alice"),
        runtime: runtime)
      dropped = client
      client.start(in: .background)  // fresh: no fetch, only the timers
      runtime.runUntilIdle()
      #expect(!runtime.pendingWaits.isEmpty)
    }
    runtime.runUntilIdle()
    #expect(dropped == nil)
    #expect(runtime.pendingWaits.isEmpty)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a fetch queued behind one that stores asks after that answer: its failure is recorded and retried",
    arguments: CacheKind.allCases)
  func queuedFetchFailingAfterAStoredAnswerIsRecorded(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind)
    harness.client.start()
    // The purchase flow's fetch must start after the call, so it queues behind the start's.
    let purchase = harness.run { client in await client.refreshAfterPurchase() }
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(harness.fetcher.waiting.map(\.flow) == [.purchase])
    harness.fetcher.answer(.failure(.transient(status: nil)))
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: stored", "alice: failed"])
    #expect(purchase.result?.customerInfo?.freshness == .offline)
    // And retried, as any failure of a fetch that asked after the last stored answer.
    harness.runtime.advance(by: .seconds(2))
    #expect(harness.fetcher.waiting.map(\.flow) == [.retry])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "an answer that does not parse, for a fetch another flow's stored answer overtook, records nothing",
    arguments: CacheKind.allCases)
  func overtakenInvalidAnswerRecordsNothing(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.client.start()
    // While the start's fetch is out, a purchase post stores the server's answer.
    _ = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
    }
    harness.runtime.runUntilIdle()
    harness.poster.answer(
      .success(.synced(FetchedCustomerInfo(body: Data(ClientFixture.json().utf8)))))
    harness.runtime.runUntilIdle()
    #expect(harness.client.access(to: "pro").evidence.freshness == .fresh)
    harness.fetcher.answer(json: "not json")
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: invalidResponse"])
    let stored = try harness.cache.load(ClientFixture.identity("alice").scope)
    #expect(stored?.bookkeeping.lastRefreshFailedAt == nil)
    #expect(harness.client.access(to: "pro").evidence.freshness == .fresh)
    // The purchase's own refresh, queued behind, is all that asks again: no retry, which
    // would be due within 1.25 s.
    harness.runtime.advance(by: .seconds(2))
    #expect(harness.fetcher.waiting.map(\.flow) == [.purchase])
  }

}
