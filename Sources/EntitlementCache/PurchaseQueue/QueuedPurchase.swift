#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Where a queued purchase is on its way to the server (<doc:PurchaseQueue>).
public enum PurchaseState: String, Sendable, Hashable, CaseIterable {
  /// Waiting to be posted: never posted, or posted and failed transiently (see
  /// ``QueuedPurchase/nextAttemptAt``).
  case pending
  /// A post has begun. An entry found in this state by a new process was cut off by a crash
  /// and is posted again; the server de-duplicates by transaction ID.
  case posting
  /// The server attributed it to the observer. Final.
  case synced
  /// The server says it belongs to another app user; nothing was transferred. Final.
  case conflict
  /// The server refused it (a 4xx). Final.
  case rejected
  /// It could not be posted within 30 days of its observation; kept for
  /// diagnostics. Final.
  case expired

  /// Still to be posted: `pending` or `posting`. Only these make a decision's evidence say
  /// ``AccessEvidence/pendingPurchase``.
  package var isUnsent: Bool { self == .pending || self == .posting }
}

/// One entry of the purchase queue: a store transaction, bound for good to the scope that
/// first observed it.
///
/// Its description shows the transaction, product, state and attempts; never the token.
public struct QueuedPurchase: Sendable, Hashable, CustomStringConvertible {
  /// The store's transaction ID.
  public var transactionID: String
  /// The store's product ID.
  public var productID: String
  /// The scope that first observed it, by its hash: the one it is posted as.
  package var observer: ScopeKey
  /// The observer's store environment.
  public var environment: StoreEnvironment
  /// The store's proof of purchase.
  public var token: PurchaseToken
  /// Where it is on its way to the server.
  public var state: PurchaseState
  /// Posts begun, counted before each network call.
  public var attempts: Int
  /// When a pending entry may be posted again after a transient failure (device time); nil
  /// when it may be posted at once.
  public var nextAttemptAt: Date?
  /// The device time it was first observed, or observed again after it expired: what its
  /// 30 days count from.
  public var firstObservedAt: Date
  /// The device time it reached its state.
  public var stateChangedAt: Date
  /// How the last failed post failed.
  public var lastFailure: FetchFailure?
  /// For a ``PurchaseState/conflict``: what the app should offer (log in with the account
  /// that owns it, restore, or support). Never "buy again".
  public var resolution: ClaimHint?

  /// After this long unsent since its observation, an entry is ``PurchaseState/expired``.
  package static let expiryAge: TimeInterval = 30 * 86_400
  /// This long after a final entry reached its state, retention deletes it when it synced,
  /// and otherwise drops its token and keeps the rest, so the transaction stays bound to its
  /// observer. The SQLite cache prunes when it opens.
  package static let retentionAge: TimeInterval = 30 * 86_400

  /// An entry as a cache of an SDK's own stores and returns it: `scope` is the one that
  /// observed it, which a store keys its entries by (``CacheScope/id``).
  public init(
    transactionID: String, productID: String, observedBy scope: CacheScope,
    token: PurchaseToken, state: PurchaseState, attempts: Int, nextAttemptAt: Date?,
    firstObservedAt: Date, stateChangedAt: Date, lastFailure: FetchFailure?,
    resolution: ClaimHint?
  ) {
    self.init(
      transactionID: transactionID, productID: productID, observer: scope.key,
      environment: scope.environment, token: token, state: state, attempts: attempts,
      nextAttemptAt: nextAttemptAt, firstObservedAt: firstObservedAt,
      stateChangedAt: stateChangedAt, lastFailure: lastFailure, resolution: resolution)
  }

  /// An entry as the SQLite cache reads it back, by the key of the scope that observed it.
  package init(
    transactionID: String, productID: String, observer: ScopeKey, environment: StoreEnvironment,
    token: PurchaseToken, state: PurchaseState, attempts: Int, nextAttemptAt: Date?,
    firstObservedAt: Date, stateChangedAt: Date, lastFailure: FetchFailure?,
    resolution: ClaimHint?
  ) {
    self.transactionID = transactionID
    self.productID = productID
    self.observer = observer
    self.environment = environment
    self.token = token
    self.state = state
    self.attempts = attempts
    self.nextAttemptAt = nextAttemptAt
    self.firstObservedAt = firstObservedAt
    self.stateChangedAt = stateChangedAt
    self.lastFailure = lastFailure
    self.resolution = resolution
  }

  /// A new `pending` entry of `purchase` observed by `scope` at `now`: what
  /// ``PurchaseQueueStore/enqueue(_:observedBy:)`` queues.
  public init(_ purchase: ObservedPurchase, observedBy scope: CacheScope, at now: Date) {
    self.init(
      transactionID: purchase.transactionID, productID: purchase.productID, observer: scope.key,
      environment: scope.environment, token: purchase.token, state: .pending, attempts: 0,
      nextAttemptAt: nil, firstObservedAt: now, stateChangedAt: now, lastFailure: nil,
      resolution: nil)
  }

  /// Transaction, product, state and attempts; never the token or the observer.
  public var description: String {
    "QueuedPurchase(\(transactionID), product: \(productID), \(state.rawValue), attempts: \(attempts))"
  }

  /// The entry after its own observer observed it again at `now`, as `purchase`; nil when that
  /// changes nothing.
  ///
  /// Only an expired entry changes: it is queued again, `pending`, with the new token and its
  /// 30 days counted from now; its attempts and last failure carry on. The store delivers a transaction until the app finishes it, so
  /// a purchase that expired unsent (a long outage, a clock set forward) comes back this way
  /// rather than being lost. Another observer never reopens it.
  public func reobserved(as purchase: ObservedPurchase, at now: Date) -> QueuedPurchase? {
    guard state == .expired else { return nil }
    var next = self
    next.state = .pending
    next.token = purchase.token
    next.firstObservedAt = now
    next.stateChangedAt = now
    next.nextAttemptAt = nil
    return next
  }

  /// The entry after `change` at `now`: the one set of transition rules both caches apply.
  ///
  /// A final entry is unchanged by anything, so two processes racing on one entry cannot undo
  /// a result. A post is not begun on an entry 30 days after its observation: it becomes `expired`.
  public func applying(_ change: PurchaseStateChange, at now: Date) -> QueuedPurchase {
    guard state.isUnsent else { return self }
    var next = self
    next.stateChangedAt = now
    next.nextAttemptAt = nil
    switch change {
    case .posting:
      if now.timeIntervalSince(firstObservedAt) >= Self.expiryAge {
        next.state = .expired
      } else {
        next.state = .posting
        next.attempts += 1
      }
    case .synced:
      next.state = .synced
    case .conflict(let resolution):
      next.state = .conflict
      next.resolution = resolution
    case .rejected(let status):
      next.state = .rejected
      next.lastFailure = .rejected(status: status)
    case .retry(let failure, let at):
      next.state = .pending
      next.lastFailure = failure
      next.nextAttemptAt = at
    case .expired:
      next.state = .expired
    }
    return next
  }
}

/// A change to a queued purchase (``PurchaseQueueStore/updatePurchase(_:observedBy:to:)``).
public enum PurchaseStateChange: Sendable, Hashable {
  /// A post begins: `posting`, one more attempt. Written before the network call, so a crash
  /// during the post leaves the entry `posting` and the attempt counted.
  case posting
  /// The server attributed it to the observer.
  case synced
  /// The server says another app user owns it.
  case conflict(ClaimHint)
  /// The server refused it with a 4xx.
  case rejected(status: Int)
  /// The post failed transiently: back to `pending`, not to be posted before `at`.
  case retry(FetchFailure, at: Date)
  /// Give up: kept for diagnostics.
  case expired
}

/// What ``PurchaseQueueStore/enqueue(_:observedBy:)`` did.
public enum EnqueueOutcome: Sendable, Hashable {
  /// A new entry, `pending`, bound to the observer.
  case queued(QueuedPurchase)
  /// This observer had already enqueued the transaction; the entry is unchanged.
  case alreadyQueued(QueuedPurchase)
  /// Another scope observed the transaction first and keeps it; nothing changed, and nothing
  /// of the other scope's entry is shown.
  case boundToAnotherObserver

  /// The entry bound to the observer that enqueued, when it is this one.
  package var entry: QueuedPurchase? {
    switch self {
    case .queued(let entry), .alreadyQueued(let entry): entry
    case .boundToAnotherObserver: nil
    }
  }
}
