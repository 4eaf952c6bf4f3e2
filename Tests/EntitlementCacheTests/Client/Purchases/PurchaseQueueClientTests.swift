import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The refresh client driving the purchase queue (<doc:PurchaseQueue>), on both caches.
@Suite("Refresh client: the purchase queue")
struct PurchaseQueueClientTests {
  static let notEntitled = Fixture.notEntitledJSON()

  static func answer(_ json: String) -> Result<FetchedCustomerInfo, FetchFailure> {
    .success(FetchedCustomerInfo(body: Data(json.utf8)))
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a post's CustomerInfo that does not parse, from a wake-up drain no refresh follows, is retried as a failed refresh",
    arguments: CacheKind.allCases)
  func refusedPostBodyIsRetried(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    harness.purchaseWhilePostsFail("tx1", refresh: Self.answer(Self.notEntitled))
    #expect(harness.fetcher.waiting.isEmpty)
    // The backed-off post's wake-up drains the queue, and no refresh follows a wake-up.
    for _ in 0..<120 where harness.poster.waiting.isEmpty {
      harness.runtime.advance(by: .seconds(1))
    }
    #expect(harness.fetcher.waiting.isEmpty)
    harness.poster.answer(.success(.synced(FetchedCustomerInfo(body: Data("not json".utf8)))))
    harness.runtime.runUntilIdle()
    #expect(harness.client.access(to: "pro").evidence.freshness == .offline)
    // Retried as any failed refresh, within the first backoff of at most 1.25 s.
    harness.runtime.advance(by: .seconds(2))
    #expect(harness.fetcher.waiting.map(\.flow) == [.retry])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a client made without a poster refuses purchaseCompleted before anything happens, rather than drop the purchase",
    arguments: CacheKind.allCases)
  func noPosterRefusesThePurchase(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: false)
    harness.start(answering: Self.notEntitled)
    let fetchesBefore = harness.fetcher.requests.count
    let purchase = harness.run { client in
      do throws(CacheError) {
        _ = try await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
        return nil as CacheError?
      } catch {
        return error
      }
    }
    harness.runtime.runUntilIdle()
    guard case .invalidConfiguration(let field, _)?? = purchase.result else {
      Issue.record("expected invalidConfiguration, got \(String(describing: purchase.result))")
      return
    }
    #expect(field == "poster")
    #expect(harness.fetcher.requests.count == fetchesBefore)
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    #expect(try queue.queuedPurchases(observedBy: ClientFixture.identity("alice").scope).isEmpty)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "observed by A, then logOut and logIn(B), network back: posted as A, never as B; B observing it again changes nothing",
    arguments: CacheKind.allCases)
  func postedAsTheFirstObserver(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    // Offline: the post fails, the refresh after it too.
    let purchase = harness.purchaseWhilePostsFail("tx1", refresh: .failure(.transient(status: nil)))
    #expect(purchase.result??.pending.map(\.transactionID) == ["tx1"])
    _ = harness.run { client in try? await client.logOut(to: "guest") }
    harness.fetcher.answer(user: "guest", .failure(.transient(status: nil)))
    harness.runtime.runUntilIdle()
    _ = harness.run { client in try? await client.logIn("bob") }
    harness.fetcher.answer(user: "bob", json: Self.notEntitled)
    harness.runtime.runUntilIdle()
    // The backoff has run out by now; the network comes back.
    harness.runtime.advance(by: .seconds(10))
    harness.client.networkAvailable()
    harness.runtime.runUntilIdle()
    #expect(harness.poster.waiting.map(\.appUserID) == ["alice"])
    #expect(harness.poster.waiting.map(\.scope) == [ClientFixture.identity("alice").scope])
    harness.poster.answer(.success(.synced(nil)))
    harness.runtime.runUntilIdle()
    #expect(harness.poster.posted == ["alice: tx1 #1", "alice: tx1 #2"])
    // Bob observes the same transaction: it stays Alice's, and nothing is posted.
    let again = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
    }
    harness.fetcher.answer(user: "bob", json: Self.notEntitled)
    harness.runtime.runUntilIdle()
    #expect(again.result??.boundToAnotherUser == ["tx1"])
    #expect(again.result??.synced.isEmpty == true)
    #expect(harness.poster.requests.count == 2)
    #expect(
      harness.purchaseLog == [
        "alice: tx1 pending", "alice: tx1 posting", "alice: tx1 pending", "alice: tx1 posting",
        "alice: tx1 synced",
      ])
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    #expect(try queue.queuedPurchases(observedBy: ClientFixture.identity("bob").scope).isEmpty)
  }

  /// Alice's purchase is posted; bob logs in before the post answers `answer`. Returns her
  /// call's result once every fetch is answered.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  private func purchaseWhileBobLogsIn(
    _ harness: ClientHarness, answer: PurchasePostResult
  ) throws -> PurchaseSyncResult {
    harness.start(answering: Self.notEntitled)
    let purchase = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
    }
    #expect(harness.poster.waiting.map(\.appUserID) == ["alice"])
    _ = harness.run { client in try? await client.logIn("bob") }
    harness.poster.answer(.success(answer))
    harness.runtime.runUntilIdle()
    harness.answerEveryFetch(json: Self.notEntitled)
    #expect(harness.client.identity.appUserID == "bob")
    return try #require(purchase.result ?? nil)
  }

  /// The result was read as the user current at its end: the purchase that synced during the
  /// call was in no list, and the app had no word to finish the store's transaction.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a purchase's result stays its buyer's when another user logs in during the call")
  func resultStaysTheBuyersAcrossALogIn() throws {
    let harness = try ClientHarness(user: "alice", posts: true)
    let result = try purchaseWhileBobLogsIn(harness, answer: .synced(nil))
    #expect(result.synced.map(\.transactionID) == ["tx1"])
    // The state is what the app shows now: bob's, never alice's.
    #expect(result.state.appUserID == "bob")
  }

  /// Bob would have been told to log in with the owning account for a purchase of alice's.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a buyer's conflict is not listed to the user who logged in during the call")
  func conflictIsNotListedToTheNextUser() throws {
    let harness = try ClientHarness(user: "alice", posts: true)
    let result = try purchaseWhileBobLogsIn(harness, answer: .conflict(resolution: .loginRequired))
    #expect(result.state.appUserID == "bob")
    #expect(result.conflicts.isEmpty && result.pending.isEmpty && result.synced.isEmpty)
    #expect(harness.purchaseLog.last == "alice: tx1 conflict")
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a conflict reaches the sync result and the stream, and nothing is reconciled under the current user",
    arguments: CacheKind.allCases)
  func conflict(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    let purchase = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
    }
    harness.poster.answer(.success(.conflict(resolution: .loginRequired)))
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(json: Self.notEntitled)
    harness.runtime.runUntilIdle()
    let result = try #require(purchase.result ?? nil)
    #expect(result.conflicts.map(\.transactionID) == ["tx1"])
    #expect(result.conflicts.map(\.productID) == ["pro_monthly"])
    #expect(result.conflicts.map(\.resolution) == [.loginRequired])
    #expect(result.pending.isEmpty && result.synced.isEmpty && !result.isSettled)
    #expect(harness.purchaseLog.last == "alice: tx1 conflict")
    #expect(result.state.decisions["pro"].map { label($0.state) } == "denied(not_entitled)")
    #expect(result.state.decisions["pro"]?.evidence.pendingPurchase == false)
    // A later sync still lists it: the app keeps offering the login, never "buy again".
    let sync = harness.run { client in await client.syncPurchases() }
    harness.fetcher.answer(json: Self.notEntitled)
    harness.runtime.runUntilIdle()
    #expect(sync.result?.conflicts.map(\.transactionID) == ["tx1"])
    #expect(harness.poster.requests.count == 1)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a denial says pendingPurchase while the entry waits, and not once it synced",
    arguments: CacheKind.allCases)
  func pendingPurchaseWhilePosting(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    #expect(harness.client.access(to: "pro").evidence.pendingPurchase == false)
    let purchase = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
    }
    let waiting = harness.client.access(to: "pro")
    #expect(label(waiting.state) == "denied(not_entitled)")
    #expect(waiting.evidence.pendingPurchase)
    #expect(harness.proDecisions.last?.evidence.pendingPurchase == true)
    let proJSON = ClientFixture.json(
      requestDate: Fixture.requestDate.addingTimeInterval(1))
    harness.poster.answer(.success(.synced(FetchedCustomerInfo(body: Data(proJSON.utf8)))))
    harness.runtime.runUntilIdle()
    // The post's CustomerInfo is stored before the entry is marked synced.
    let granted = harness.client.access(to: "pro")
    #expect(label(granted.state) == "granted" && granted.evidence.pendingPurchase == false)
    harness.fetcher.answer(json: proJSON)
    harness.runtime.runUntilIdle()
    #expect(purchase.result??.synced.map(\.transactionID) == ["tx1"])
    #expect(purchase.result??.state.decisions["pro"]?.isGranted == true)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("restore and sync return only after the queue has drained", arguments: CacheKind.allCases)
  func restoreWaitsForTheQueue(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    _ = try queue.enqueue(
      PurchaseFixture.purchase("tx1"), observedBy: ClientFixture.identity("alice").scope)
    let restore = harness.run { client in await client.restorePurchases() }
    #expect(harness.poster.waiting.map(\.transactionID) == ["tx1"])
    #expect(harness.fetcher.waiting.isEmpty)
    #expect(!restore.isFinished)
    harness.poster.answer(.success(.synced(nil)))
    harness.runtime.runUntilIdle()
    #expect(!restore.isFinished)
    #expect(harness.fetcher.waiting.map(\.flow) == [.restore])
    harness.fetcher.answer(json: Self.notEntitled)
    harness.runtime.runUntilIdle()
    #expect(restore.result?.synced.map(\.transactionID) == ["tx1"])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "one observer's entries go in observation order; a transient failure holds the ones after it",
    arguments: CacheKind.allCases)
  func observationOrder(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    harness.start(answering: Self.notEntitled)
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    let scope = ClientFixture.identity("alice").scope
    for id in ["tx-b", "tx-a", "tx-c"] {
      _ = try queue.enqueue(PurchaseFixture.purchase(id), observedBy: scope)
      harness.runtime.advance(by: .seconds(1))
    }
    let sync = harness.run { client in await client.syncPurchases() }
    harness.poster.answer(.success(.synced(nil)))
    harness.runtime.runUntilIdle()
    harness.poster.answer(.failure(.transient(status: 503)))
    harness.runtime.runUntilIdle()
    // tx-c waits behind tx-a.
    #expect(harness.poster.waiting.isEmpty)
    harness.fetcher.answer(json: Self.notEntitled)
    harness.runtime.runUntilIdle()
    #expect(sync.result?.synced.map(\.transactionID) == ["tx-b"])
    #expect(sync.result?.pending.map(\.transactionID) == ["tx-a", "tx-c"])
    #expect(sync.result?.pending.first?.lastFailure == .transient(status: 503))
    // The backoff's wake-up posts tx-a again, then tx-c.
    harness.runtime.advance(by: .seconds(3))
    harness.poster.answer(.success(.synced(nil)))
    harness.runtime.runUntilIdle()
    harness.poster.answer(.failure(.rejected(status: 400)))
    harness.runtime.runUntilIdle()
    #expect(
      harness.poster.posted == [
        "alice: tx-b #1", "alice: tx-a #1", "alice: tx-a #2", "alice: tx-c #1",
      ])
    #expect(
      try queue.queuedPurchases(observedBy: scope).map(\.state) == [.synced, .synced, .rejected])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "an entry a crash left posting is posted again at the next start", arguments: CacheKind.allCases
  )
  func crashLeftover(kind: CacheKind) throws {
    let harness = try ClientHarness(user: "alice", on: kind, posts: true)
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    let scope = ClientFixture.identity("alice").scope
    _ = try queue.enqueue(PurchaseFixture.purchase("tx1"), observedBy: scope)
    _ = try queue.updatePurchase("tx1", observedBy: scope, to: .posting)
    harness.client.start()
    harness.runtime.runUntilIdle()
    #expect(harness.poster.posted == ["alice: tx1 #2"])
    harness.poster.answer(.success(.synced(nil)))
    harness.runtime.runUntilIdle()
    #expect(try queue.queuedPurchases(observedBy: scope).map(\.state) == [.synced])
  }

  // A poster with a cache that keeps no queue does not compile: the initializer that takes a
  // poster takes `any CustomerInfoCache & PurchaseQueueStore`.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("without a poster nothing is posted")
  func noPosterPostsNothing() throws {
    let harness = try ClientHarness(user: "alice", on: .sqlite, posts: false)
    harness.start(answering: Self.notEntitled)
    let sync = harness.run { client in await client.syncPurchases() }
    harness.fetcher.answer(json: Self.notEntitled)
    harness.runtime.runUntilIdle()
    #expect(sync.result?.pending.isEmpty == true)
    #expect(harness.poster.requests.isEmpty)
  }
}
