import EntitlementCache
import EntitlementCacheTesting
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The contract of `PurchaseQueueStore`
/// (`Sources/EntitlementCache/EntitlementCache.docc/Articles/PurchaseQueue.md`), as a kit that runs it
/// against any cache that keeps a purchase queue, as ``CustomerInfoCacheContract`` does for the
/// cache itself.
///
/// ```swift
/// @Test(arguments: PurchaseQueueContract.Clause.allCases)
/// func myQueueKeepsTheContract(_ clause: PurchaseQueueContract.Clause) throws {
///   try PurchaseQueueContract { clock in MyCache(clock: clock) }.check(clause)
/// }
/// ```
public struct PurchaseQueueContract: Sendable {
  /// Opens an empty cache that reads and writes with the given clock.
  public typealias Factory =
    @Sendable (CacheClock) throws -> any CustomerInfoCache & PurchaseQueueStore

  /// Opens the caches the clauses check. Each call must return a new, empty cache.
  public let makeCache: Factory

  /// A contract for the caches `makeCache` opens.
  public init(makeCache: @escaping Factory) {
    self.makeCache = makeCache
  }

  /// One promise of the queue, checked on its own cache.
  public enum Clause: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Enqueue is idempotent by transaction ID: the same observer gets `alreadyQueued` with the
    /// entry unchanged, another gets `boundToAnotherObserver` and nothing of it; each
    /// observer lists only its own entries, and cannot change another's.
    case firstObserverWins
    /// Entries list in observation order, with their tokens byte for byte.
    case observationOrder
    /// `posting` counts an attempt, `retry` backs off with its failure, and a final entry
    /// (synced, conflict, rejected, expired) never changes again.
    case transitions
    /// A post is never begun on an entry `QueuedPurchase.expiryAge` after its observation:
    /// `posting` makes it `expired` instead, its attempts unchanged.
    case expiry
    /// While a scope has an unsent entry, its decisions say `pendingPurchase` (with a
    /// snapshot or without one), and no other scope's do; once it is final, none do.
    case pendingPurchaseEvidence
    /// An empty or oversized transaction ID, product ID or token throws
    /// `CacheError.invalidPurchase` naming the field and never its value; nothing is kept.
    case rejectedPurchase

    /// What the clause checks, in a line.
    public var summary: String {
      switch self {
      case .firstObserverWins: "idempotent enqueue: the first observer keeps the entry"
      case .observationOrder: "observation order and tokens byte for byte"
      case .transitions: "posting, retry, and final states that never change"
      case .expiry: "no post begun 30 days after observation: expired"
      case .pendingPurchaseEvidence: "pendingPurchase in the evidence while unsent"
      case .rejectedPurchase: "a bad purchase is an error naming its field; nothing kept"
      }
    }

    /// The name and the ``summary``, as Swift Testing shows the argument.
    public var testDescription: String { "\(rawValue): \(summary)" }
  }

  /// Checks one clause, recording each broken promise as an issue of the calling test.
  ///
  /// - Throws: Whatever the factory or the cache throws where the contract expects no error.
  public func check(_ clause: Clause, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let clock = ManualClock(Self.start)
    let run = QueueContractRun(
      clause: clause, clock: clock, cache: try makeCache(clock.cacheClock),
      location: sourceLocation)
    switch clause {
    case .firstObserverWins: try run.firstObserverWins()
    case .observationOrder: try run.observationOrder()
    case .transitions: try run.transitions()
    case .expiry: try run.expiry()
    case .pendingPurchaseEvidence: try run.pendingPurchaseEvidence()
    case .rejectedPurchase: try run.rejectedPurchase()
    }
  }

  /// 2026-11-30T12:00:00Z.
  static let start = Date(timeIntervalSince1970: 1_796_040_000)
}

/// One clause's cache and clock, and the expectations it records.
private struct QueueContractRun {
  let clause: PurchaseQueueContract.Clause
  let clock: ManualClock
  let cache: any CustomerInfoCache & PurchaseQueueStore
  let location: SourceLocation

  let first = ContractScope.primary
  let second = ContractScope.variants[3].scope

  static let secret = "CONTRACT-STORE-TOKEN"

  func purchase(_ id: String, product: String = "pro_monthly") -> ObservedPurchase {
    ObservedPurchase(
      transactionID: id, productID: product, token: PurchaseToken(Data("\(Self.secret)-\(id)".utf8))
    )
  }

  func expect(_ condition: Bool, _ step: @autoclosure () -> String) {
    #expect(condition, Comment(rawValue: "\(clause.rawValue): \(step())"), sourceLocation: location)
  }

  func firstObserverWins() throws {
    let entry = try cache.enqueue(purchase("tx1"), observedBy: first).entry
    expect(entry?.state == .pending && entry?.attempts == 0, "a new entry is pending, 0 attempts")
    expect(entry?.observer == first.key, "a new entry is bound to its observer")
    clock.advance(by: .seconds(60))
    let again = try cache.enqueue(purchase("tx1"), observedBy: first)
    expect(
      again == entry.map(EnqueueOutcome.alreadyQueued), "observed again: alreadyQueued, unchanged")
    let other = try cache.enqueue(purchase("tx1", product: "other"), observedBy: second)
    expect(other == .boundToAnotherObserver, "another observer gets boundToAnotherObserver")
    expect(
      try cache.queuedPurchases(observedBy: second).isEmpty, "the other observer lists nothing")
    expect(
      try cache.updatePurchase("tx1", observedBy: second, to: .synced) == nil,
      "the other observer cannot change it")
    expect(
      try cache.queuedPurchases(observedBy: first).map(\.state) == [.pending],
      "the entry is still the first observer's, pending")
  }

  func observationOrder() throws {
    let ids = ["tx-c", "tx-a", "tx-b"]
    for id in ids {
      _ = try cache.enqueue(purchase(id), observedBy: first)
      clock.advance(by: .seconds(1))
    }
    let entries = try cache.queuedPurchases(observedBy: first)
    expect(entries.map(\.transactionID) == ids, "listed in observation order")
    expect(entries.map(\.token) == ids.map { purchase($0).token }, "tokens byte for byte")
  }

  func transitions() throws {
    _ = try cache.enqueue(purchase("tx1"), observedBy: first)
    let posting = try cache.updatePurchase("tx1", observedBy: first, to: .posting)
    expect(posting?.state == .posting && posting?.attempts == 1, "posting counts an attempt")
    let at = clock.now.addingTimeInterval(4)
    let retried = try cache.updatePurchase(
      "tx1", observedBy: first, to: .retry(.transient(status: 503), at: at))
    expect(
      retried?.state == .pending && retried?.nextAttemptAt == at, "retry: pending until its time")
    expect(retried?.lastFailure == .transient(status: 503), "retry keeps its failure")
    _ = try cache.updatePurchase("tx1", observedBy: first, to: .posting)
    let synced = try cache.updatePurchase("tx1", observedBy: first, to: .synced)
    expect(synced?.state == .synced && synced?.attempts == 2, "synced after two attempts")
    for change: PurchaseStateChange in [.posting, .conflict(.loginRequired), .expired] {
      expect(
        try cache.updatePurchase("tx1", observedBy: first, to: change) == synced,
        "a final entry never changes (\(change))")
    }
  }

  func expiry() throws {
    _ = try cache.enqueue(purchase("tx1"), observedBy: first)
    clock.advance(by: .seconds(QueuedPurchase.expiryAge))
    let expired = try cache.updatePurchase("tx1", observedBy: first, to: .posting)
    expect(expired?.state == .expired && expired?.attempts == 0, "posting at 30 days: expired")
  }

  func pendingPurchaseEvidence() throws {
    let policy = OfflinePolicy.conservative
    _ = try cache.enqueue(purchase("tx1"), observedBy: first)
    expect(
      cache.access(to: "pro", for: first, policy: policy).evidence.pendingPurchase,
      "with no snapshot, the decision says pendingPurchase")
    let json =
      #"{"requestDate":"2026-11-30T12:00:00Z","verification":"verified","entitlements":{}}"#
    let snapshot = try CustomerInfoSnapshot(jsonData: Data(json.utf8))
    try cache.store(snapshot, for: first)
    try cache.store(snapshot, for: second)
    let denied = cache.access(to: "pro", for: first, policy: policy)
    expect(denied.state == .denied(.notEntitled), "the snapshot denies pro")
    expect(denied.evidence.pendingPurchase, "a denial says pendingPurchase while unsent")
    expect(
      !cache.access(to: "pro", for: second, policy: policy).evidence.pendingPurchase,
      "another scope's decisions never say it")
    _ = try cache.updatePurchase("tx1", observedBy: first, to: .posting)
    expect(
      cache.access(to: "pro", for: first, policy: policy).evidence.pendingPurchase,
      "posting is still unsent")
    _ = try cache.updatePurchase("tx1", observedBy: first, to: .conflict(.loginRequired))
    expect(
      !cache.access(to: "pro", for: first, policy: policy).evidence.pendingPurchase,
      "a final entry is not pending")
  }

  func rejectedPurchase() throws {
    let token = PurchaseToken(Data(Self.secret.utf8))
    let cases: [(ObservedPurchase, String)] = [
      (ObservedPurchase(transactionID: "", productID: "p", token: token), "transactionID"),
      (ObservedPurchase(transactionID: "t", productID: "", token: token), "productID"),
      (ObservedPurchase(transactionID: "t", productID: "p", token: PurchaseToken(Data())), "token"),
      (
        ObservedPurchase(
          transactionID: "t", productID: String(repeating: "p", count: 257), token: token),
        "productID"
      ),
    ]
    for (bad, field) in cases {
      do {
        _ = try cache.enqueue(bad, observedBy: first)
        expect(false, "\(field): accepted")
      } catch {
        guard case .invalidPurchase(let named, _) = error else {
          expect(false, "\(field): threw \(error), not invalidPurchase")
          continue
        }
        expect(named == field, "\(field): the error names \(named)")
        expect(!"\(error)".contains(Self.secret), "\(field): the error shows no value")
      }
    }
    expect(try cache.queuedPurchases(observedBy: first).isEmpty, "nothing was kept")
  }
}
