import EntitlementCacheTesting
import Foundation
import TestSupport

@testable import EntitlementCache

/// One write of the public API and the state it starts from, for the fault sweep and the
/// power-cut runs: every kind of change the cache makes to its file is one of these.
struct SweptWrite: Sendable, CustomStringConvertible {
  let name: String
  /// Whether the cache pins the test signer's roots (the signed-material writes).
  var trusted = false
  /// Whether a new instance has anything to write: a flush of read marks does not, since
  /// only the instance that read holds them.
  var writesFromNewInstance = true
  /// Brings a new cache to the state the write starts from. Runs with no fault armed.
  var prepare: @Sendable (SQLiteCustomerInfoCache, ManualClock) throws -> Void = { _, _ in }
  /// The write under test.
  let perform: @Sendable (SQLiteCustomerInfoCache, ManualClock) throws -> Void

  var description: String { name }

  /// The scopes whose reads are compared: A, the one every write touches, and B, which none
  /// of them may change.
  static let scopes = [Fixture.scopeA, Fixture.scopeB]

  static let start = Fixture.requestDate.addingTimeInterval(.minute)

  /// The sample snapshot with another request date.
  static func snapshot(requestDate: String) throws -> CustomerInfoSnapshot {
    try Fixture.snapshot(SampleSnapshot.json(requestDate: requestDate))
  }

  static func purchase(_ id: String) -> ObservedPurchase { PurchaseFixture.purchase(id) }

  /// A snapshot of B, a queued purchase of A and a later snapshot of A: most writes start here.
  static func populated(_ cache: SQLiteCustomerInfoCache, _ clock: ManualClock) throws {
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeB)
    _ = try cache.enqueue(purchase("t-1"), observedBy: Fixture.scopeA)
    clock.advance(by: .minute)
  }

  static func posted(_ cache: SQLiteCustomerInfoCache, _ clock: ManualClock) throws {
    try populated(cache, clock)
    _ = try cache.updatePurchase("t-1", observedBy: Fixture.scopeA, to: .posting)
  }

  /// The writes the sweeps run: all of them, or those whose name contains
  /// `ENTITLEMENT_CACHE_SWEEP_ONLY`, to reproduce one.
  static var selected: [SweptWrite] {
    guard let only = FaultSweepTests.only else { return all }
    return all.filter { $0.name.contains(only) }
  }

  /// Every write the cache makes, each from the state that makes it change the most.
  static let all: [SweptWrite] = [
    SweptWrite(name: "store a first snapshot") { cache, _ in
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    },
    SweptWrite(name: "store a newer snapshot over one", prepare: populated) { cache, _ in
      try cache.store(try snapshot(requestDate: "2026-11-30T12:01:00Z"), for: Fixture.scopeA)
    },
    SweptWrite(name: "store signed material", trusted: true) { cache, _ in
      try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
    },
    SweptWrite(
      name: "store a signed snapshot over a verified one", trusted: true,
      prepare: { cache, clock in
        try cache.store(try TrustFixture.signed(), for: Fixture.scopeA)
        try cache.store(try TrustFixture.signed(for: Fixture.scopeB), for: Fixture.scopeB)
        clock.advance(by: .minute)
      }
    ) { cache, _ in
      try cache.store(
        try TrustFixture.signed(TrustFixture.body(requestDate: "2026-11-30T12:01:00Z")),
        for: Fixture.scopeA)
    },
    SweptWrite(name: "record a failed refresh", prepare: populated) { cache, _ in
      try cache.recordRefreshFailure(for: Fixture.scopeA, reason: "timeout")
    },
    SweptWrite(name: "remove a scope", prepare: populated) { cache, _ in
      try cache.remove(Fixture.scopeA)
    },
    SweptWrite(
      name: "prune expired scopes and purchases",
      prepare: { cache, clock in
        try populated(cache, clock)
        _ = try cache.updatePurchase("t-1", observedBy: Fixture.scopeA, to: .synced)
        clock.advance(by: .day * 200)
      }
    ) { cache, _ in
      _ = try cache.prune()
    },
    SweptWrite(
      name: "purge unusable scopes",
      prepare: { cache, clock in
        try populated(cache, clock)
        clock.advance(by: .day * 60)
      }
    ) { cache, _ in
      _ = try cache.purgeUnusable()
    },
    SweptWrite(
      name: "flush read marks", writesFromNewInstance: false,
      prepare: { cache, clock in
        try populated(cache, clock)
        clock.advance(by: .hour)
        _ = cache.access(to: "pro", for: Fixture.scopeA)
      }
    ) { cache, _ in
      try cache.flush()
    },
    SweptWrite(name: "enqueue a purchase", prepare: populated) { cache, _ in
      _ = try cache.enqueue(purchase("t-2"), observedBy: Fixture.scopeA)
    },
    SweptWrite(
      name: "re-observe an expired purchase",
      prepare: { cache, clock in
        try populated(cache, clock)
        _ = try cache.updatePurchase("t-1", observedBy: Fixture.scopeA, to: .expired)
      }
    ) { cache, _ in
      _ = try cache.enqueue(purchase("t-1"), observedBy: Fixture.scopeA)
    },
    SweptWrite(name: "mark a purchase posting", prepare: populated) { cache, _ in
      _ = try cache.updatePurchase("t-1", observedBy: Fixture.scopeA, to: .posting)
    },
    SweptWrite(name: "mark a purchase synced", prepare: posted) { cache, _ in
      _ = try cache.updatePurchase("t-1", observedBy: Fixture.scopeA, to: .synced)
    },
    SweptWrite(name: "schedule a purchase's retry", prepare: posted) { cache, clock in
      _ = try cache.updatePurchase(
        "t-1", observedBy: Fixture.scopeA,
        to: .retry(.transient(status: 503), at: clock.now.addingTimeInterval(30)))
    },
    SweptWrite(name: "mark a purchase conflicted", prepare: posted) { cache, _ in
      _ = try cache.updatePurchase(
        "t-1", observedBy: Fixture.scopeA, to: .conflict(.loginRequired))
    },
    SweptWrite(name: "mark a purchase rejected", prepare: posted) { cache, _ in
      _ = try cache.updatePurchase(
        "t-1", observedBy: Fixture.scopeA, to: .rejected(status: 400))
    },
    SweptWrite(name: "expire a purchase", prepare: populated) { cache, _ in
      _ = try cache.updatePurchase("t-1", observedBy: Fixture.scopeA, to: .expired)
    },
  ]
}

/// What the public API reads of the swept scopes, so a state is compared as an app sees it.
struct ObservedState: Equatable, CustomStringConvertible {
  var loads: [CachedCustomerInfo?] = []
  var decisions: [AccessDecision] = []
  var queues: [[QueuedPurchase]] = []
  var failure: String?

  init(_ cache: SQLiteCustomerInfoCache) {
    do {
      for scope in SweptWrite.scopes {
        loads.append(try cache.load(scope))
        decisions.append(cache.access(to: "pro", for: scope))
        queues.append(try cache.queuedPurchases(observedBy: scope))
      }
    } catch {
      failure = "\(error)"
    }
  }

  /// The parts that differ, for a failure message.
  func difference(from expected: ObservedState) -> String {
    var lines: [String] = []
    for (index, scope) in SweptWrite.scopes.enumerated() {
      let name = scope == Fixture.scopeA ? "A" : "B"
      func part<T: Equatable>(_ what: String, _ parts: KeyPath<ObservedState, [T]>) {
        let actual = self[keyPath: parts].dropFirst(index).first
        let wanted = expected[keyPath: parts].dropFirst(index).first
        if actual != wanted {
          lines.append(
            "\(what) of \(name): \(actual.map { "\($0)" } ?? "-")\n  expected \(wanted.map { "\($0)" } ?? "-")"
          )
        }
      }
      part("load", \.loads)
      part("decision", \.decisions)
      part("queue", \.queues)
    }
    if failure != expected.failure { lines.append("failure \(failure ?? "none")") }
    return lines.joined(separator: "\n")
  }

  var description: String {
    let loaded = loads.map { $0.map { "\($0.bookkeeping)" } ?? "none" }
    return "loads \(loaded), decisions \(decisions), queues \(queues), failure \(failure ?? "none")"
  }
}
