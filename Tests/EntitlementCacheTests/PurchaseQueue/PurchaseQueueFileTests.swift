import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The SQLite cache's purchase queue in its file: durable when enqueue returns, seen by other
/// connections, counted per scope, kept past logOut, and pruned by retention.
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
