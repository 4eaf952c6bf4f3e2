import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The purchase queue at its edges: retention of final entries, a transaction delivered again,
/// posting as a user of an earlier launch, a clock set forward, a backoff wake-up a hair
/// early. Each test failed before the fix it keeps.
@Suite("Purchase queue: retention, redelivery and backoff edges")
struct PurchaseQueueEdgeCaseTests {
  static let notEntitled = Fixture.notEntitledJSON()

  @Test(
    "a conflicted or expired entry 30 days after retention still binds its transaction to its observer",
    arguments: [PurchaseStateChange.conflict(.loginRequired), .expired])
  func retentionRebindsTransaction(final change: PurchaseStateChange) throws {
    let caches = try QueueCaches()
    let cache = try Fixture.cache(in: caches.directory, clock: caches.clock)
    _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .posting)
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: change)
    // Never synced, so (as purchaseCompleted's doc says) the app never finished it: the store
    // delivers it again, now while user B is current.
    caches.clock.advance(by: .seconds(QueuedPurchase.retentionAge + .minute))
    _ = try cache.prune()
    let again = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeB)
    #expect(
      again == .boundToAnotherObserver,
      "tx1, first observed by A, is now bound to B: \(again)")
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "networkAvailable() and syncPurchases() post a backed-off entry at once",
    .timeLimit(.minutes(1)), arguments: CacheKind.allCases)
  func explicitFlowsPostBackedOffEntries(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    let scope = ClientFixture.identity("alice").scope
    _ = try queue.enqueue(PurchaseFixture.purchase("tx1"), observedBy: scope)
    harness.client.networkAvailable()
    harness.runtime.runUntilIdle()
    // Nine transient failures in a row (a flaky network): the next post is ~512 s away.
    for _ in 1...8 {
      try #require(harness.poster.waiting.count == 1)
      harness.poster.answer(.failure(.transient(status: nil)))
      harness.runtime.runUntilIdle()
      if harness.poster.waiting.isEmpty,
        let due = try queue.queuedPurchases(observedBy: scope)
          .first?.nextAttemptAt
      {
        let wait = due.timeIntervalSince(harness.runtime.manualClock.now)
        harness.runtime.advance(by: .milliseconds(Int64((wait * 1000).rounded(.up))))
      }
    }
    harness.poster.answer(.failure(.transient(status: nil)))
    harness.runtime.runUntilIdle()
    // 10 s later the network is back and the user taps "Restore purchases".
    harness.runtime.advance(by: .seconds(10))
    harness.client.networkAvailable()
    harness.runtime.runUntilIdle()
    let postedOnNetwork = harness.poster.waiting.count
    let sync = harness.run { client in await client.syncPurchases() }
    let postedOnSync = harness.poster.waiting.count
    harness.answerEveryFetch(json: Self.notEntitled)
    while !harness.poster.waiting.isEmpty {
      harness.poster.answer(.success(.synced(nil)))
      harness.runtime.runUntilIdle()
      harness.answerEveryFetch(json: Self.notEntitled)
    }
    #expect(postedOnNetwork == 1, "networkAvailable() did not post the backed-off entry")
    // The network's post failed too; the sync, asked for by the user, posts at once.
    #expect(postedOnSync == 1, "syncPurchases() returned without posting")
    #expect(sync.result?.pending.isEmpty == true, "sync result: \(String(describing: sync.result))")
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "purchaseCompleted lists its entry as synced when the pass already running posted it",
    arguments: CacheKind.allCases)
  func resultMissesEntrySyncedByRunningPass(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    _ = harness.run { client in try? await client.logIn("bob") }
    harness.fetcher.answer(user: "bob", json: Self.notEntitled)
    harness.runtime.runUntilIdle()
    // Bob has a backlog entry; the network comes back: the pass covers bob, then alice.
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    _ = try queue.enqueue(
      PurchaseFixture.purchase("txB"), observedBy: ClientFixture.identity("bob").scope)
    harness.client.networkAvailable()
    harness.runtime.runUntilIdle()
    try #require(harness.poster.waiting.map(\.transactionID) == ["txB"])
    // Alice logs back in and buys while bob's post is in the air.
    _ = harness.run { client in try? await client.logIn("alice") }
    harness.fetcher.answer(user: "alice", json: Self.notEntitled)
    harness.runtime.runUntilIdle()
    let purchase = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase("txA"))
    }
    harness.poster.answer(.success(.synced(nil)))  // txB
    harness.runtime.runUntilIdle()
    try #require(harness.poster.waiting.map(\.transactionID) == ["txA"])
    harness.poster.answer(.success(.synced(nil)))  // txA, by the pass that was running
    harness.runtime.runUntilIdle()
    harness.answerEveryFetch(json: Self.notEntitled)
    let result = try #require(purchase.result ?? nil)
    #expect(harness.purchaseLog.contains("alice: txA synced"))
    #expect(
      result.synced.map(\.transactionID) == ["txA"],
      "txA synced during the call but the result lists it nowhere: synced \(result.synced), pending \(result.pending)"
    )
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a transaction delivered again after it synced is listed as synced, so the app can finish it",
    arguments: CacheKind.allCases)
  func redeliveredSyncedTransaction(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    // Offline purchase: the post fails; the backoff's wake-up syncs it later.
    harness.purchaseWhilePostsFail("tx1", refresh: .failure(.transient(status: nil)))
    harness.runtime.advance(by: .seconds(3))
    harness.poster.answer(.success(.synced(nil)))
    harness.runtime.runUntilIdle()
    harness.answerEveryFetch(json: Self.notEntitled)
    // The store delivers tx1 again (it was never finished): the SDK calls purchaseCompleted.
    let again = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
    }
    harness.answerEveryFetch(json: Self.notEntitled)
    let result = try #require(again.result ?? nil)
    #expect(result.synced.map(\.transactionID) == ["tx1"])
    #expect(harness.poster.requests.count == 2)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "the SDK names a user a previous launch could not post as, and their purchase is posted as them"
  )
  func postQueuedPurchasesOfAnEarlierUser() throws {
    let runtime = SimulatedRuntime(start: Fixture.requestDate, bootSession: "boot-1")
    let directory = try TemporaryDirectory()
    let poster = HandAnsweredPoster()
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    configuration.changeCheckInterval = .zero
    let cache = try SQLiteCustomerInfoCache(
      path: directory.path("cache.sqlite"), configuration: configuration, clock: runtime.clock)
    // Alice bought offline, then logged out; the app was killed; this launch is the guest's.
    let alice = ClientFixture.identity("alice").scope
    _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: alice)
    let client = try EntitlementClient(
      cache: cache, fetcher: HandAnsweredFetcher(), identity: ClientFixture.identity("guest"),
      runtime: runtime, poster: poster)
    client.start()
    client.networkAvailable()
    runtime.runUntilIdle()
    // Only hashes are on disk: nobody to post as yet.
    #expect(poster.requests.isEmpty)
    try client.postQueuedPurchases(observedBy: "alice")
    runtime.runUntilIdle()
    #expect(poster.waiting.map(\.appUserID) == ["alice"])
    #expect(poster.waiting.map(\.scope) == [alice])
    poster.answer(.success(.synced(nil)))
    runtime.runUntilIdle()
    #expect(try cache.queuedPurchases(observedBy: alice).map(\.state) == [.synced])
    #expect(client.identity.appUserID == "guest")
    #expect(throws: ScopeError.self) { try client.postQueuedPurchases(observedBy: "") }
    client.stop()
    runtime.runUntilIdle()
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "an entry a clock set forward expired is queued again when the store delivers it again",
    arguments: CacheKind.allCases)
  func clockForwardExpiryComesBack(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    let scope = ClientFixture.identity("alice").scope
    _ = try queue.enqueue(PurchaseFixture.purchase("tx1"), observedBy: scope)
    harness.client.networkAvailable()
    harness.runtime.runUntilIdle()
    harness.poster.answer(.failure(.transient(status: nil)))
    harness.runtime.runUntilIdle()
    // The user sets the date 31 days ahead: the next drain finds the entry too old to post.
    let now = harness.runtime.manualClock.now
    harness.runtime.manualClock.set(now.addingTimeInterval(31 * .day))
    harness.client.networkAvailable()
    harness.runtime.runUntilIdle()
    #expect(try queue.queuedPurchases(observedBy: scope).map(\.state) == [.expired])
    harness.runtime.manualClock.set(now.addingTimeInterval(10))
    // Never finished, the store delivers it again: it is queued again and posted as alice.
    let again = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
    }
    #expect(harness.poster.waiting.map(\.transactionID) == ["tx1"])
    harness.poster.answer(.success(.synced(nil)))
    harness.runtime.runUntilIdle()
    harness.answerEveryFetch(json: Self.notEntitled)
    #expect(again.result??.synced.map(\.transactionID) == ["tx1"])
    #expect(
      harness.purchaseLog.suffix(3) == [
        "alice: tx1 pending", "alice: tx1 posting", "alice: tx1 synced",
      ])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a backoff wake-up a hair early never re-arms at zero delay", .timeLimit(.minutes(1)),
    arguments: CacheKind.allCases)
  func wakeUpNeverSpins(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    let scope = ClientFixture.identity("alice").scope
    _ = try queue.enqueue(PurchaseFixture.purchase("tx1"), observedBy: scope)
    harness.client.networkAvailable()
    harness.runtime.runUntilIdle()
    // Each wait is advanced rounded up to the millisecond, as the wake-up's timer is: before
    // the fix, the in-memory cache kept the due time finer than that, and the wake-up found
    // it nanoseconds short, re-armed at zero, and never let virtual time move.
    for attempt in 1...6 {
      try #require(harness.poster.waiting.count == 1, "attempt \(attempt)")
      harness.poster.answer(.failure(.transient(status: nil)))
      harness.runtime.runUntilIdle()
      let due = try #require(try queue.queuedPurchases(observedBy: scope).first?.nextAttemptAt)
      let wait = due.timeIntervalSince(harness.runtime.manualClock.now)
      harness.runtime.advance(by: .milliseconds(Int64((wait * 1000).rounded(.up))))
    }
    #expect(harness.poster.requests.count == 7)
  }
}
