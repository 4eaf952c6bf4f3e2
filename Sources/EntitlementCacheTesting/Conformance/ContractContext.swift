import EntitlementCache
import EntitlementCacheTesting
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What one clause runs with: how to open caches, and where its issues point.
struct ContractContext {
  let clause: CustomerInfoCacheContract.Clause
  let makeCache: CustomerInfoCacheContract.Factory
  let snapshotSizeLimit: Int?
  let storageOutage: StorageOutage?
  let location: SourceLocation

  /// A new cache on a new manual clock at `date`; with `bootSession`, the clock has a boot
  /// clock too, starting at zero in that session.
  func open(
    at date: Date = ContractTime.start, bootSession: String? = nil
  ) throws -> ContractRun {
    let clock = ManualClock(date, bootSession: bootSession)
    return ContractRun(context: self, clock: clock, cache: try makeCache(clock.cacheClock))
  }

  /// Records an issue at the location the kit's caller gave unless `condition` holds: the
  /// clause and the promise broken (`step`). The failing line is the caller's, not the kit's,
  /// so the words must say it all: a `step` says what the cache did instead where it can.
  func expect(_ condition: Bool, _ step: @autoclosure () -> String) {
    guard !condition else { return }
    Issue.record(
      Comment(rawValue: "\(clause.rawValue): broken promise: \(step())"),
      sourceLocation: location)
  }

  /// Records an issue unless `actual == expected`: the clause, what was promised, what was
  /// expected and what the cache gave.
  func equal<Value: Equatable>(
    _ actual: Value, _ expected: Value, _ step: @autoclosure () -> String
  ) {
    guard actual != expected else { return }
    Issue.record(
      Comment(
        rawValue: "\(clause.rawValue): \(step()): expected \(expected), the cache gave \(actual)"),
      sourceLocation: location)
  }

  /// `value`, or an issue and a thrown error that ends the clause when it is nil.
  func require<Value>(_ value: Value?, _ step: @autoclosure () -> String) throws -> Value {
    try #require(value, comment(step()), sourceLocation: location)
  }

  func comment(_ step: String) -> Comment {
    Comment(rawValue: "\(clause.rawValue): \(step)")
  }
}

/// One cache on its own clock, with the reads the clauses make, each under an explicit policy.
struct ContractRun {
  let context: ContractContext
  let clock: ManualClock
  let cache: any CustomerInfoCache

  func access(
    _ key: String, _ scope: CacheScope = ContractScope.primary,
    policy: OfflinePolicy = .conservative
  ) -> AccessDecision {
    cache.access(to: key, for: scope, policy: policy)
  }

  func activeKeys(
    _ scope: CacheScope = ContractScope.primary, policy: OfflinePolicy = .conservative
  ) -> Set<String> {
    cache.activeEntitlementKeys(for: scope, policy: policy)
  }

  func view(
    _ scope: CacheScope = ContractScope.primary, policy: OfflinePolicy = .conservative
  ) throws -> EvaluatedCustomerInfo? {
    try cache.evaluatedCustomerInfo(for: scope, policy: policy)
  }

  func load(_ scope: CacheScope = ContractScope.primary) throws -> CachedCustomerInfo? {
    try cache.load(scope)
  }

  func store(
    _ snapshot: CustomerInfoSnapshot, _ scope: CacheScope = ContractScope.primary
  ) throws {
    try cache.store(snapshot, for: scope)
  }

  func fail(_ scope: CacheScope = ContractScope.primary, reason: String? = nil) throws {
    try cache.recordRefreshFailure(for: scope, reason: reason)
  }

  /// The scope's bookkeeping; an issue ending the clause when nothing is stored.
  func bookkeeping(
    _ step: @autoclosure () -> String, of scope: CacheScope = ContractScope.primary
  ) throws -> ScopeBookkeeping {
    try context.require(try load(scope), "\(step()): load returned nil").bookkeeping
  }

  /// Checks that `scope` reads as never stored: no bookkeeping, no view, no keys, and
  /// `offlineUnavailable(.noSnapshot)` with no evidence for `keys`.
  func expectNothingStored(
    _ scope: CacheScope, keys: [String] = ["pro"], _ step: String
  ) throws {
    let loaded = try load(scope)
    context.expect(loaded == nil, "\(step): load shows nothing, not \(String(describing: loaded))")
    context.expect(try view(scope) == nil, "\(step): no evaluated view, yet the cache gave one")
    context.equal(activeKeys(scope), [], "\(step): no active keys")
    for key in keys {
      context.expectUnavailable(access(key, scope), "\(step): \(key)")
    }
  }
}

extension ContractContext {
  /// `offlineUnavailable(.noSnapshot)`, carrying no evidence of a snapshot: never `denied`,
  /// never a `validUntil`.
  func expectUnavailable(_ decision: AccessDecision, _ step: @autoclosure () -> String) {
    let step = step()
    equal(decision.state, .offlineUnavailable(.noSnapshot), "\(step): nothing stored")
    equal(decision.evidence.storedAt, nil, "\(step): no storedAt without a snapshot")
    equal(decision.evidence.validUntil, nil, "\(step): no validUntil without a snapshot")
    equal(decision.evidence.freshness, nil, "\(step): no freshness without a snapshot")
    expect(!decision.isHighTrust, "\(step): never high trust, yet \(decision.state) was")
  }
}
