import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The library tests' shared values: the sample's request date and scopes in library types.
///
/// With them, the snapshot helpers and a cache on a manual clock; the evaluation suites add
/// their times and decisions in `EvaluationFixtures.swift`.
enum Fixture {
  static func date(_ text: String) -> Date {
    guard let date = ISO8601.parse(text) else {
      preconditionFailure("bad fixture date \(text)")
    }
    return date
  }

  /// 2026-11-30T12:00:00Z, the `requestDate` of `SampleSnapshot.json`.
  static let requestDate = date(SampleSnapshot.requestDate)

  static let scopeA = scope(user: SampleScope.userA)
  static let scopeB = scope(user: SampleScope.userB)

  static func scope(
    sdkKey: String = SampleScope.sdkKey, installation: String = SampleScope.installation,
    environment: StoreEnvironment = .production, user: String = SampleScope.userA
  ) -> CacheScope {
    do {
      return try CacheScope(
        sdkKey: sdkKey, installationID: installation, environment: environment, appUserID: user)
    } catch {
      preconditionFailure("bad fixture scope: \(error)")
    }
  }

  /// `json` decoded: the example snapshot (<doc:SnapshotFormat>) unless given.
  static func snapshot(_ json: String = SampleSnapshot.json) throws -> CustomerInfoSnapshot {
    try CustomerInfoSnapshot(jsonData: Data(json.utf8))
  }

  /// A snapshot at `requestDate` in which nothing is entitled: what a denial reads.
  static func notEntitledJSON(requestDate: Date = requestDate) -> String {
    """
    {"requestDate":"\(ISO8601.format(requestDate))","verification":"verified","entitlements":{}}
    """
  }

  /// A cache in `directory` on a manual clock, with pruning at open off so tests control it.
  static func cache(
    in directory: TemporaryDirectory, name: String = "cache.sqlite", clock: ManualClock,
    configure: (inout CacheConfiguration) -> Void = { _ in }
  ) throws -> SQLiteCustomerInfoCache {
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    configure(&configuration)
    return try SQLiteCustomerInfoCache(
      path: directory.path(name), configuration: configuration, clock: clock.cacheClock)
  }
}

/// A cache that answers every `CustomerInfoCache` call from `base`, for test caches that add or
/// leave out something around the reference cache (a queue, or none).
protocol ForwardingCustomerInfoCache: CustomerInfoCache {
  associatedtype Base: CustomerInfoCache
  var base: Base { get }
}

extension ForwardingCustomerInfoCache {
  var clock: CacheClock { base.clock }
  func load(_ scope: CacheScope) throws(CacheError) -> CachedCustomerInfo? {
    try base.load(scope)
  }
  func store(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope) throws(CacheError) {
    try base.store(snapshot, for: scope)
  }
  func storeAnswer(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope) throws(CacheError)
    -> StoreOutcome
  {
    try base.storeAnswer(snapshot, for: scope)
  }
  func recordRefreshFailure(for scope: CacheScope, reason: String?) throws(CacheError) {
    try base.recordRefreshFailure(for: scope, reason: reason)
  }
  func remove(_ scope: CacheScope) throws(CacheError) { try base.remove(scope) }
  func access(to entitlement: String, for scope: CacheScope, policy: OfflinePolicy?)
    -> AccessDecision
  {
    base.access(to: entitlement, for: scope, policy: policy)
  }
  func activeEntitlementKeys(for scope: CacheScope, policy: OfflinePolicy?) -> Set<String> {
    base.activeEntitlementKeys(for: scope, policy: policy)
  }
  func evaluatedCustomerInfo(for scope: CacheScope, policy: OfflinePolicy?) throws(CacheError)
    -> EvaluatedCustomerInfo?
  {
    try base.evaluatedCustomerInfo(for: scope, policy: policy)
  }
}
