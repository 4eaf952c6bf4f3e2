import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Times, snapshots and decisions the evaluation suites share: the same `Fixture` namespace
/// as the rest of the tests.
///
/// Every time is a whole number of seconds away from ``t0``, so it survives SQLite's
/// millisecond storage exactly and a decision read back from the file can be compared with
/// `==` against one computed in memory.
extension Fixture {
  /// T, when most scenarios store their snapshot: the example snapshot's `requestDate`
  /// (<doc:SnapshotFormat>).
  static let t0 = Fixture.requestDate

  /// T plus `offset` seconds.
  static func at(_ offset: TimeInterval) -> Date {
    t0.addingTimeInterval(offset)
  }

  static func entitlement(
    _ status: OpenEnum<EntitlementStatus>, expiresAt: Date? = nil, graceEnd: Date? = nil,
    verifiedAt: Date? = t0, source: OpenEnum<EntitlementSource>? = .known(.purchase)
  ) -> EntitlementInfo {
    EntitlementInfo(
      status: status, expiresAt: expiresAt, gracePeriodExpiresAt: graceEnd,
      verifiedAt: verifiedAt, productId: "product", source: source, willRenew: true)
  }

  static func entitlement(
    _ status: EntitlementStatus, expiresAt: Date? = nil, graceEnd: Date? = nil,
    verifiedAt: Date? = t0, source: OpenEnum<EntitlementSource>? = .known(.purchase)
  ) -> EntitlementInfo {
    entitlement(
      .known(status), expiresAt: expiresAt, graceEnd: graceEnd, verifiedAt: verifiedAt,
      source: source)
  }

  /// A monthly subscription that runs for 30 more days: usable through every boundary below
  /// it, so a case isolates the one boundary it is about.
  static let monthly = entitlement(.active, expiresAt: at(30 * .day))

  static func info(
    _ entitlements: [String: EntitlementInfo], requestDate: Date = t0,
    verification: OpenEnum<VerificationStatus> = .known(.verified),
    unclaimed: [UnclaimedPurchase] = [], accessContext: AccessContext? = nil,
    deviceAccess: DeviceAccessInfo? = nil
  ) -> CustomerInfo {
    CustomerInfo(
      requestDate: requestDate, verification: verification, entitlements: entitlements,
      unclaimedPurchases: unclaimed, accessContext: accessContext, deviceAccess: deviceAccess)
  }

  static func unclaimed(
    _ keys: [String], hint: OpenEnum<ClaimHint>, id: String = "tx_9"
  ) -> UnclaimedPurchase {
    UnclaimedPurchase(purchaseId: id, productId: "pro_yearly", entitlements: keys, claimHint: hint)
  }

  /// Bookkeeping exactly as the SQLite cache writes it for a snapshot stored at `storedAt`
  /// (and a refresh that failed at `failedAt`, when given).
  static func bookkeeping(
    for info: CustomerInfo, storedAt: Date = t0, failedAt: Date? = nil,
    highWaterMark: Date? = nil
  ) -> ScopeBookkeeping {
    ScopeBookkeeping(
      storedAt: storedAt, serverTime: info.requestDate,
      lastRefreshAttemptAt: failedAt ?? storedAt, lastRefreshFailedAt: failedAt,
      deviceHighWaterMark: highWaterMark)
  }

  /// The pure evaluator's decision for a snapshot stored at `storedAt`.
  static func decide(
    _ key: String, in info: CustomerInfo, storedAt: Date = t0, failedAt: Date? = nil,
    now: Date, policy: OfflinePolicy = .conservative
  ) -> AccessDecision {
    EntitlementEvaluator.decision(
      for: key, in: info,
      bookkeeping: bookkeeping(for: info, storedAt: storedAt, failedAt: failedAt),
      now: now, policy: policy)
  }

  /// The pure evaluator's view of a whole snapshot stored at `storedAt`.
  static func evaluate(
    _ info: CustomerInfo, storedAt: Date = t0, failedAt: Date? = nil, now: Date,
    policy: OfflinePolicy = .conservative
  ) -> EvaluatedCustomerInfo {
    EntitlementEvaluator.evaluate(
      info, bookkeeping: bookkeeping(for: info, storedAt: storedAt, failedAt: failedAt), now: now,
      policy: policy)
  }
}

/// The two named policies, as test arguments with readable names.
enum Preset: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case conservative
  case serverSnapshot

  var policy: OfflinePolicy {
    switch self {
    case .conservative: .conservative
    case .serverSnapshot: .serverSnapshot
    }
  }

  var testDescription: String { rawValue }
}

/// A SQLite cache on a throw-away file and a manual clock.
struct CacheHarness {
  let directory: TemporaryDirectory
  let clock: ManualClock
  let cache: SQLiteCustomerInfoCache

  init(
    at date: Date = Fixture.t0, configure: (inout CacheConfiguration) -> Void = { _ in }
  ) throws {
    directory = try TemporaryDirectory()
    clock = ManualClock(date)
    cache = try Fixture.cache(in: directory, clock: clock, configure: configure)
  }

  /// Stores `info` as a successful refresh at `date`; the clock stays there.
  func store(
    _ info: CustomerInfo, for scope: CacheScope = Fixture.scopeA, at date: Date = Fixture.t0
  ) throws {
    clock.set(date)
    try cache.store(try CustomerInfoSnapshot(info), for: scope)
  }

  /// Another cache instance on the same file and clock. Nothing of it is resident yet, so its
  /// first reads go through SQLite rather than the memory the writing instance filled.
  func secondInstance(
    configure: (inout CacheConfiguration) -> Void = { _ in }
  ) throws -> SQLiteCustomerInfoCache {
    try Fixture.cache(in: directory, clock: clock, configure: configure)
  }
}
