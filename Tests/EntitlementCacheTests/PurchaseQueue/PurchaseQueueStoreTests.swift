import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A purchase as the store hands it over, with a token that must never be shown.
enum PurchaseFixture {
  static let secret = "STORE-SIGNED-TRANSACTION-SECRET"

  static func purchase(_ transactionID: String, product: String = "pro_monthly")
    -> ObservedPurchase
  {
    ObservedPurchase(
      transactionID: transactionID, productID: product,
      token: PurchaseToken(Data("\(secret)-\(transactionID)".utf8)))
  }
}

/// Both caches that keep a purchase queue, on one manual clock.
struct QueueCaches {
  let clock = ManualClock(Fixture.requestDate)
  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  func make(_ kind: CacheKind) throws -> any CustomerInfoCache & PurchaseQueueStore {
    switch kind {
    case .inMemory: InMemoryCustomerInfoCache(clock: clock.cacheClock)
    case .sqlite: try Fixture.cache(in: directory, clock: clock)
    }
  }
}

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
      scope: Fixture.scopeA, appUserID: "user-a", transactionID: "tx1", productID: "p",
      token: purchase.token, attempt: 1)
    var dumpedRequest = ""
    dump(request, to: &dumpedRequest)
    let update = PurchaseUpdate(appUserID: "user-a", purchase: entry)
    var dumpedUpdate = ""
    dump(update, to: &dumpedUpdate)
    var dumpedFetch = ""
    dump(
      FetchRequest(scope: Fixture.scopeA, appUserID: "user-a", nonce: [1, 2], flow: .restore),
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
      #expect(!text.contains("user-a"), "\(text)")
    }
    #expect(dumpedRequest.contains("tx1") && dumpedUpdate.contains("tx1"))
  }
}

@Suite("Purchase queue in the file")
struct PurchaseQueueFileTests {
  @Test("an entry is in the file when enqueue returns: a new instance reads it, pending and all")
  func durableAcrossInstances() throws {
    let caches = try QueueCaches()
    do {
      let cache = try caches.make(.sqlite)
      _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
      try cache.store(Fixture.snapshot(Fixture.notEntitledJSON()), for: Fixture.scopeA)
      // The other instance below must see it without this one's help.
      #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase)
    }
    let reopened = try caches.make(.sqlite)
    #expect(
      try reopened.queuedPurchases(observedBy: Fixture.scopeA).map(\.transactionID) == ["tx1"])
    #expect(reopened.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase)
  }

  @Test("another connection's enqueue and sync are seen by a resident scope")
  func otherConnectionsQueueChanges() throws {
    let caches = try QueueCaches()
    let reader = try Fixture.cache(in: caches.directory, clock: caches.clock) {
      $0.changeCheckInterval = .zero
    }
    let writer = try caches.make(.sqlite)
    try writer.store(Fixture.snapshot(Fixture.notEntitledJSON()), for: Fixture.scopeA)
    #expect(reader.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase == false)
    _ = try writer.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    #expect(reader.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase)
    _ = try writer.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .posting)
    _ = try writer.updatePurchase("tx1", observedBy: Fixture.scopeA, to: .synced)
    #expect(reader.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase == false)
  }

  @Test(
    "every scope row's unsent count is the queue's, through 600 random writes, and every read agrees"
  )
  func unsentCountsStayExact() throws {
    let caches = try QueueCaches()
    let cache = try caches.make(.sqlite)
    let scopes = [Fixture.scopeA, Fixture.scopeB, Fixture.scope(user: "user-c")]
    let snapshot = try Fixture.snapshot(Fixture.notEntitledJSON())
    let changes: [PurchaseStateChange] = [
      .posting, .synced, .conflict(.loginRequired), .rejected(status: 400), .expired,
      .retry(.transient(status: nil), at: Fixture.requestDate),
    ]
    var generator = SplitMix64(seed: 12)
    for step in 0..<600 {
      let scope = scopes[Int(generator.next() % 3)]
      let id = "tx\(generator.next() % 40)"
      caches.clock.advance(by: .seconds(1))
      switch generator.next() % 10 {
      case 0...3: _ = try cache.enqueue(PurchaseFixture.purchase(id), observedBy: scope)
      case 4...6:
        _ = try cache.updatePurchase(id, observedBy: scope, to: changes[Int(generator.next() % 6)])
      case 7, 8: try cache.store(snapshot, for: scope)
      default: try cache.remove(scope)
      }
      // Every read (resident or not, with a row or without) says what the queue holds.
      for scope in scopes {
        #expect(
          cache.access(to: "pro", for: scope).evidence.pendingPurchase
            == (try cache.queuedPurchases(observedBy: scope).contains { $0.state.isUnsent }),
          "step \(step)")
      }
    }
    let raw = try StoreTest.connection(caches.directory.path("cache.sqlite"), readOnly: true)
    let drift = try raw.scalarInt(
      """
      SELECT count(*) FROM scope s WHERE s.unsent_purchases != (SELECT count(*) FROM purchase_queue q
        WHERE q.observer_key = s.scope_key AND q.state IN ('pending', 'posting'))
      """)
    #expect(drift == 0)
    #expect(try raw.scalarInt("SELECT count(*) FROM scope") > 0)
  }

  @Test("removing a scope (logOut) keeps its purchases bound to it")
  func removeKeepsPurchases() throws {
    let caches = try QueueCaches()
    let cache = try caches.make(.sqlite)
    try cache.store(Fixture.snapshot(Fixture.notEntitledJSON()), for: Fixture.scopeA)
    _ = try cache.enqueue(PurchaseFixture.purchase("tx1"), observedBy: Fixture.scopeA)
    try cache.remove(Fixture.scopeA)
    #expect(try cache.queuedPurchases(observedBy: Fixture.scopeA).map(\.state) == [.pending])
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase)
  }

  @Test(
    "retention: unsent entries expire after 30 days, final ones go 30 days later, and a cap bounds the rest"
  )
  func retention() throws {
    let caches = try QueueCaches()
    let cache = try Fixture.cache(in: caches.directory, clock: caches.clock) {
      $0.maxFinalPurchases = 2
    }
    _ = try cache.enqueue(PurchaseFixture.purchase("old"), observedBy: Fixture.scopeA)
    for id in ["s1", "s2", "s3"] {
      _ = try cache.enqueue(PurchaseFixture.purchase(id), observedBy: Fixture.scopeB)
      _ = try cache.updatePurchase(id, observedBy: Fixture.scopeB, to: .posting)
      _ = try cache.updatePurchase(id, observedBy: Fixture.scopeB, to: .synced)
      caches.clock.advance(by: .seconds(1))
    }
    // Over the cap of two final entries: the oldest goes; the unsent one is never counted.
    var report = try cache.prune()
    #expect(report.deletedPurchases == 1 && report.expiredPurchases == 0)
    let listed = try CacheInspector(cache).purchaseQueue().entries.map(\.transactionID)
    #expect(listed == ["old", "s2", "s3"])
    caches.clock.advance(by: .seconds(QueuedPurchase.expiryAge))
    report = try cache.prune()
    #expect(report.expiredPurchases == 1)
    #expect(try cache.queuedPurchases(observedBy: Fixture.scopeA).map(\.state) == [.expired])
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase == false)
    // s2 and s3 reached `synced` 30 days ago now; the expired entry only just expired.
    #expect(report.deletedPurchases == 2)
    caches.clock.advance(by: .seconds(QueuedPurchase.retentionAge))
    report = try cache.prune()
    // Never synced, so never finished: the store may deliver it again. The row stays, without
    // its token, and keeps the transaction bound to its first observer.
    #expect(report.deletedPurchases == 0)
    let kept = try cache.queuedPurchases(observedBy: Fixture.scopeA)
    #expect(kept.map(\.transactionID) == ["old"])
    #expect(kept.first?.token.bytes.isEmpty == true)
    #expect(
      try cache.enqueue(PurchaseFixture.purchase("old"), observedBy: Fixture.scopeB)
        == .boundToAnotherObserver)
    // Its own observer seeing it again queues it again, with the store's new token.
    let reopened = try cache.enqueue(PurchaseFixture.purchase("old"), observedBy: Fixture.scopeA)
    #expect(reopened.entry?.state == .pending)
    #expect(reopened.entry?.token == PurchaseFixture.purchase("old").token)
    #expect(try cache.unsentPurchases(observedBy: Fixture.scopeA).map(\.transactionID) == ["old"])
    #expect(cache.access(to: "pro", for: Fixture.scopeA).evidence.pendingPurchase)
  }
}
