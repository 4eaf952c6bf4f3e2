import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// ``PurchaseQueueStore`` on both caches (<doc:PurchaseQueue>).
@Suite("Purchase queue store")
struct PurchaseQueueStoreTests {
  @Test(
    "enqueue is idempotent by transaction ID and the first observer keeps the entry",
    arguments: CacheKind.allCases)
  func firstObserverWins(kind: CacheKind) throws {
    let caches = try QueueCaches()
    let cache = try caches.make(kind)
    let first = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    guard case .queued(let entry) = first else {
      Issue.record("expected a new entry, got \(first)")
      return
    }
    #expect(entry.state == .pending && entry.attempts == 0 && entry.observer == Fixture.scopeA.key)
    caches.clock.advance(by: .minute)
    let again = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    #expect(again == .alreadyQueued(entry))
    let other = try cache.enqueue(
      PurchaseFixture.purchase("tx1", product: "other"), observedBy: Fixture.scopeB)
    #expect(other == .boundToAnotherObserver)
    #expect(try cache.queuedPurchases(observedBy: Fixture.scopeA) == [entry])
    #expect(try cache.queuedPurchases(observedBy: Fixture.scopeB).isEmpty)
    // The other observer cannot change it either.
    #expect(try cache.updatePurchase("tx1", observedBy: Fixture.scopeB, to: .synced) == nil)
    #expect(try cache.queuedPurchases(observedBy: Fixture.scopeA).first?.state == .pending)
  }

  @Test(
    "entries keep observation order and their token byte for byte", arguments: CacheKind.allCases)
  func observationOrder(kind: CacheKind) throws {
    let caches = try QueueCaches()
    let cache = try caches.make(kind)
    for id in ["tx-c", "tx-a", "tx-b"] {
      _ = try cache.enqueue(PurchaseFixture.purchase(id), observedBy: Fixture.scopeA)
      caches.clock.advance(by: .seconds(1))
    }
    let entries = try cache.queuedPurchases(observedBy: Fixture.scopeA)
    #expect(entries.map(\.transactionID) == ["tx-c", "tx-a", "tx-b"])
    _ = try cache.updatePurchase("tx-a", observedBy: Fixture.scopeA, to: .posting)
    _ = try cache.updatePurchase("tx-a", observedBy: Fixture.scopeA, to: .synced)
    _ = try cache.updatePurchase("tx-b", observedBy: Fixture.scopeA, to: .posting)
    // What a drain reads: the unsent ones only, still in observation order.
    #expect(
      try cache.unsentPurchases(observedBy: Fixture.scopeA).map(\.transactionID) == [
        "tx-c", "tx-b",
      ])
    #expect(try cache.unsentPurchases(observedBy: Fixture.scopeB).isEmpty)
    #expect(
      entries.map(\.token) == ["tx-c", "tx-a", "tx-b"].map { PurchaseFixture.purchase($0).token })
  }

  @Test(
    "the transitions: posting counts the attempt, a retry backs off, a final entry never changes",
    arguments: CacheKind.allCases)
  func transitions(kind: CacheKind) throws {
    let caches = try QueueCaches()
    let cache = try caches.make(kind)
    _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    let posting = try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .posting)
    #expect(posting?.state == .posting && posting?.attempts == 1)
    let retryAt = caches.clock.now.addingTimeInterval(4)
    let retried = try cache.updatePurchase(
      "tx1", observedBy: Fixture.scopeA, to: .retry(.transient(status: 503), at: retryAt))
    #expect(retried?.state == .pending)
    #expect(retried?.nextAttemptAt == retryAt)
    #expect(retried?.lastFailure == .transient(status: 503))
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .posting)
    let conflict = try cache.updatePurchase(
      "tx1", observedBy: Fixture.scopeA, to: .conflict(.loginRequired))
    #expect(conflict?.state == .conflict && conflict?.resolution == .loginRequired)
    #expect(conflict?.attempts == 2)
    for change: PurchaseStateChange in [.posting, .synced, .rejected(status: 400), .expired] {
      #expect(try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: change) == conflict)
    }
  }

  @Test(
    "a post is never begun on an entry 30 days old: it expires instead",
    arguments: CacheKind.allCases)
  func expiryAtPosting(kind: CacheKind) throws {
    let caches = try QueueCaches()
    let cache = try caches.make(kind)
    _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    caches.clock.advance(by: .seconds(QueuedPurchase.expiryAge - 1))
    #expect(
      try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .posting)?.state == .posting)
    _ = try cache.updatePurchase(
      "tx1", observedBy: Fixture.scopeA,
      to: .retry(.transient(status: nil), at: caches.clock.now))
    caches.clock.advance(by: .seconds(1))
    let expired = try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .posting)
    #expect(expired?.state == .expired)
    #expect(expired?.attempts == 1)
  }

  @Test(
    "a denial says pendingPurchase while an entry is unsent, and not after",
    arguments: CacheKind.allCases)
  func pendingPurchaseEvidence(kind: CacheKind) throws {
    let caches = try QueueCaches()
    let cache = try caches.make(kind)
    // No snapshot yet: the purchase came before the first refresh.
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase == false)
    _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    let unavailable = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(unavailable.state == .offlineUnavailable(.noSnapshot))
    #expect(unavailable.evidence.pendingPurchase)
    try cache.store(Fixture.snapshot(Fixture.notEntitledJSON()), for: Fixture.scopeA)
    let denied = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(denied.state == .denied(.notEntitled))
    #expect(denied.evidence.pendingPurchase)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.hasPendingPurchase == true)
    // Another scope's decisions never say it.
    try cache.store(Fixture.snapshot(Fixture.notEntitledJSON()), for: Fixture.scopeB)
    #expect(cache.access(to: "pro", for: Fixture.scopeB).evidence.pendingPurchase == false)
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .posting)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase)
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .synced)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase == false)
    #expect(
      try cache.evaluatedCustomerInfo(for: Fixture.scopeA)?.bookkeeping.hasPendingPurchase == false)
  }

  /// Found by the stateful fuzz target: the in-memory cache answered `pendingPurchase: false`
  /// for a scope that had only a failed refresh, while its `load` said the purchase was pending
  /// and the SQLite cache said so in both.
  @Test(
    "a scope with only a failed refresh says pendingPurchase while an entry is unsent",
    arguments: CacheKind.allCases)
  func pendingPurchaseEvidenceWithoutSnapshot(kind: CacheKind) throws {
    let caches = try QueueCaches()
    let cache = try caches.make(kind)
    try cache.recordRefreshFailure(for: Fixture.scopeA, reason: "timeout")
    _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    let unavailable = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(unavailable.state == .offlineUnavailable(.noSnapshot))
    #expect(unavailable.evidence.pendingPurchase)
    #expect(try cache.load(Fixture.scopeA)?.bookkeeping.hasPendingPurchase == true)
    _ = try cache.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .synced)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase == false)
  }

  @Test(
    "a bad purchase is an error naming the field, never its value, and nothing is kept",
    arguments: CacheKind.allCases)
  func invalidPurchase(kind: CacheKind) throws {
    let caches = try QueueCaches()
    let cache = try caches.make(kind)
    let token = PurchaseToken(Data(PurchaseFixture.secret.utf8))
    let cases: [(ObservedPurchase, String)] = [
      (ObservedPurchase(transactionID: "", productID: "p", token: token), "transactionID"),
      (ObservedPurchase(transactionID: "t", productID: "", token: token), "productID"),
      (ObservedPurchase(transactionID: "t", productID: "p", token: PurchaseToken(Data())), "token"),
      (
        ObservedPurchase(
          transactionID: String(repeating: "x", count: 257), productID: "p", token: token),
        "transactionID"
      ),
      (
        ObservedPurchase(
          transactionID: "t", productID: "p",
          token: PurchaseToken(Data(count: ObservedPurchase.tokenSizeLimit + 1))),
        "token"
      ),
    ]
    for (purchase, field) in cases {
      #expect {
        _ = try cache.enqueue(purchase, observedBy: Fixture.scopeA)
      } throws: { error in
        guard case .invalidPurchase(let named, _) = error as? CacheError else { return false }
        return named == field && !"\(error)".contains(PurchaseFixture.secret)
      }
    }
    #expect(try cache.queuedPurchases(observedBy: Fixture.scopeA).isEmpty)
  }

  @Test("no description, debug description or dump shows the token")
  func tokenRedaction() throws {
    let purchase = PurchaseFixture.purchase("tx1")
    let caches = try QueueCaches()
    let cache = try caches.make(.sqlite)
    let entry = try #require(try cache.enqueue(purchase, observedBy: Fixture.scopeA).entry)
    var dumped = ""
    dump(entry, to: &dumped)
    var dumpedPurchase = ""
    dump(purchase, to: &dumpedPurchase)
    let request = PurchasePostRequest(
      scope: Fixture.scopeA, appUserID: SampleScope.userA, transactionID: "tx1", productID: "p",
      token: purchase.token, attempt: 1)
    var dumpedRequest = ""
    dump(request, to: &dumpedRequest)
    let update = PurchaseUpdate(appUserID: SampleScope.userA, purchase: entry)
    var dumpedUpdate = ""
    dump(update, to: &dumpedUpdate)
    var dumpedFetch = ""
    dump(
      FetchRequest(
        scope: Fixture.scopeA, appUserID: SampleScope.userA, nonce: [1, 2], flow: .restore),
      to: &dumpedFetch)
    let texts = [
      "\(entry)", String(reflecting: entry), dumped, "\(purchase)", dumpedPurchase,
      String(reflecting: purchase.token), "\(request)", String(reflecting: request),
      dumpedRequest, "\(update)", dumpedUpdate,
    ]
    for text in texts {
      #expect(!text.contains(PurchaseFixture.secret), "\(text)")
    }
    for text in ["\(request)", dumpedRequest, "\(update)", dumpedUpdate, dumpedFetch] {
      #expect(!text.contains(SampleScope.userA), "\(text)")
    }
    #expect(dumpedRequest.contains("tx1") && dumpedUpdate.contains("tx1"))
  }
}
