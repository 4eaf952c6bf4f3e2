#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The in-memory cache's purchase queue: entries in observation order, by transaction ID.
struct PurchaseBook: Sendable {
  private(set) var entries: [QueuedPurchase] = []
  private var indexByTransaction: [String: Int] = [:]

  func entry(_ transactionID: String) -> QueuedPurchase? {
    indexByTransaction[transactionID].map { entries[$0] }
  }

  mutating func append(_ entry: QueuedPurchase) {
    indexByTransaction[entry.transactionID] = entries.count
    entries.append(entry)
  }

  mutating func replace(_ entry: QueuedPurchase) {
    guard let index = indexByTransaction[entry.transactionID] else { return }
    entries[index] = entry
  }

  func hasUnsentEntry(_ observer: ScopeKey) -> Bool {
    entries.contains { $0.observer == observer && $0.state.isUnsent }
  }
}

extension InMemoryCustomerInfoCache: PurchaseQueueStore {
  /// Enqueues `purchase` as observed by `scope`; a transaction already queued, under any
  /// scope, is left as it is.
  ///
  /// - Throws: ``CacheError/invalidPurchase(field:problem:)``; nothing is kept then.
  public func enqueue(
    _ purchase: ObservedPurchase, observedBy scope: CacheScope
  ) throws(CacheError) -> EnqueueOutcome {
    try purchase.validate()
    let now = Date(unixMilliseconds: clock.now().unixMilliseconds)
    return purchases.withLock { book in
      if let existing = book.entry(purchase.transactionID) {
        guard existing.observer == scope.key else { return .boundToAnotherObserver }
        guard let reopened = existing.reobserved(as: purchase, at: now) else {
          return .alreadyQueued(existing)
        }
        book.replace(reopened)
        return .queued(reopened)
      }
      let entry = QueuedPurchase(purchase, observedBy: scope, at: now)
      book.append(entry)
      return .queued(entry)
    }
  }

  /// Every entry `scope` observed, in observation order.
  public func queuedPurchases(observedBy scope: CacheScope) throws(CacheError) -> [QueuedPurchase] {
    purchases.withLock { book in book.entries.filter { $0.observer == scope.key } }
  }

  /// Applies `change` to the entry `scope` observed, by the rules of
  /// ``QueuedPurchase/applying(_:at:)``.
  public func updatePurchase(
    _ transactionID: String, observedBy scope: CacheScope, to change: PurchaseStateChange
  ) throws(CacheError) -> QueuedPurchase? {
    let now = Date(unixMilliseconds: clock.now().unixMilliseconds)
    return purchases.withLock { book in
      guard let entry = book.entry(transactionID), entry.observer == scope.key else { return nil }
      let next = entry.applying(change, at: now)
      book.replace(next)
      return next
    }
  }

  func hasPendingPurchase(_ scope: CacheScope) -> Bool {
    purchases.withLock { $0.hasUnsentEntry(scope.key) }
  }
}
