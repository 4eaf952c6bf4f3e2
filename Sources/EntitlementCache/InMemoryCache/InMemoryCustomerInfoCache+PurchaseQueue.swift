#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The in-memory cache's purchase queue: entries in observation order, by transaction ID,
/// and how many each observer has still to post, which every read asks.
struct PurchaseBook: Sendable {
  private(set) var entries: [QueuedPurchase] = []
  private var indexByTransaction: [String: Int] = [:]
  private var unsentCounts: [ScopeKey: Int] = [:]

  func entry(_ transactionID: String) -> QueuedPurchase? {
    indexByTransaction[transactionID].map { entries[$0] }
  }

  mutating func append(_ entry: QueuedPurchase) {
    indexByTransaction[entry.transactionID] = entries.count
    entries.append(entry)
    if entry.state.isUnsent { unsentCounts[entry.observer, default: 0] += 1 }
  }

  mutating func replace(_ entry: QueuedPurchase) {
    guard let index = indexByTransaction[entry.transactionID] else { return }
    let unsentChange = (entry.state.isUnsent ? 1 : 0) - (entries[index].state.isUnsent ? 1 : 0)
    entries[index] = entry
    unsentCounts[entry.observer, default: 0] += unsentChange
  }

  func hasUnsentEntry(_ observer: ScopeKey) -> Bool {
    (unsentCounts[observer] ?? 0) > 0
  }
}

extension InMemoryCustomerInfoCache: PurchaseQueueStore {
  /// Enqueues `purchase` as observed by `scope`; a transaction already queued, under any
  /// scope, is left as it is.
  ///
  /// - Throws: ``CacheError/invalidPurchase(field:problem:)``; nothing is kept then.
  package func enqueue(
    _ purchase: ObservedPurchase, observedBy scope: CacheScope
  ) throws(CacheError) -> EnqueueOutcome {
    try purchase.validate()
    let now = clock.now().truncatedToMilliseconds
    defer { writeObservers.notify() }
    return scopes.withLock { state in
      if let existing = state.purchases.entry(purchase.transactionID) {
        guard existing.observer == scope.key else { return .boundToAnotherObserver }
        guard let reopened = existing.reobserved(as: purchase, at: now) else {
          return .alreadyQueued(existing)
        }
        state.purchases.replace(reopened)
        state.writes &+= 1
        return .queued(reopened)
      }
      let entry = QueuedPurchase(purchase, observedBy: scope, at: now)
      state.purchases.append(entry)
      state.writes &+= 1
      return .queued(entry)
    }
  }

  /// Every entry `scope` observed, in observation order.
  package func queuedPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase]
  {
    scopes.withLock { state in state.purchases.entries.filter { $0.observer == scope.key } }
  }

  /// Applies `change` to the entry `scope` observed, by the rules of
  /// ``QueuedPurchase/applying(_:at:)``.
  package func updatePurchase(
    _ transactionID: String, observedBy scope: CacheScope, to change: PurchaseStateChange
  ) throws(CacheError) -> QueuedPurchase? {
    let now = clock.now().truncatedToMilliseconds
    defer { writeObservers.notify() }
    return scopes.withLock { state in
      guard let entry = state.purchases.entry(transactionID), entry.observer == scope.key else {
        return nil
      }
      let next = entry.applying(change, at: now)
      state.purchases.replace(next)
      state.writes &+= 1
      return next
    }
  }
}
