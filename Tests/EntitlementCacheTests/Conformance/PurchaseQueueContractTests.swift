import EntitlementCache
import EntitlementCacheConformance
import Foundation
import TestSupport
import Testing

/// The PurchaseQueueStore contract run against both caches, and against a broken queue that
/// must fail it.
@Suite("Conformance: the PurchaseQueueStore contract")
struct PurchaseQueueContractTests {
  typealias Clause = PurchaseQueueContract.Clause

  @Test("SQLiteCustomerInfoCache keeps the queue contract", arguments: Clause.allCases)
  func sqlite(_ clause: Clause) throws {
    let directory = try TemporaryDirectory()
    try PurchaseQueueContract { clock in
      try SQLiteCustomerInfoCache(
        path: directory.path("cache-\(UUID().uuidString).sqlite"), clock: clock)
    }.check(clause)
  }

  @Test("InMemoryCustomerInfoCache keeps the queue contract", arguments: Clause.allCases)
  func inMemory(_ clause: Clause) throws {
    try PurchaseQueueContract { clock in InMemoryCustomerInfoCache(clock: clock) }.check(clause)
  }

  @Test("a queue kept apart from the decisions, listing newest first, fails the kit")
  func brokenQueueFails() throws {
    let contract = PurchaseQueueContract { clock in DetachedQueueCache(clock: clock) }
    try contract.check(.firstObserverWins)
    withKnownIssue("lists newest first") { try contract.check(.observationOrder) }
    withKnownIssue("decisions never see the queue") {
      try contract.check(.pendingPurchaseEvidence)
    }
  }
}

/// Decisions from one in-memory cache and the queue kept in another, listed newest first:
/// what a cache that bolts a queue on beside its storage would do.
private struct DetachedQueueCache: ForwardingCustomerInfoCache, PurchaseQueueStore {
  /// Where decisions come from.
  let base: InMemoryCustomerInfoCache
  let queue: InMemoryCustomerInfoCache

  init(clock: CacheClock) {
    base = InMemoryCustomerInfoCache(clock: clock)
    queue = InMemoryCustomerInfoCache(clock: clock)
  }

  func enqueue(_ purchase: ObservedPurchase, observedBy scope: CacheScope) throws(CacheError)
    -> EnqueueOutcome
  {
    try queue.enqueue(purchase, observedBy: scope)
  }
  func queuedPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase] {
    try queue.queuedPurchases(observedBy: scope).reversed()
  }
  func updatePurchase(
    _ transactionID: String, observedBy scope: CacheScope, to change: PurchaseStateChange
  ) throws(CacheError) -> QueuedPurchase? {
    try queue.updatePurchase(transactionID, observedBy: scope, to: change)
  }
}
