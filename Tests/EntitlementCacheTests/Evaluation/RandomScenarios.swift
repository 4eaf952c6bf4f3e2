import Foundation
import TestSupport

@testable import EntitlementCache

/// The scenarios' seeded generator (``SplitMix64``), with the draws they make.
struct ScenarioRNG: RandomNumberGenerator {
  private var source: SplitMix64

  init(seed: UInt64) {
    source = SplitMix64(seed: seed)
  }

  mutating func next() -> UInt64 { source.next() }

  mutating func chance(_ probability: Double) -> Bool {
    Double.random(in: 0..<1, using: &self) < probability
  }

  mutating func pick<Element>(_ elements: [Element]) -> Element {
    elements[Int.random(in: elements.indices, using: &self)]
  }

  /// T plus a whole number of seconds in `range`, so SQLite's milliseconds keep it exact.
  mutating func date(_ range: ClosedRange<TimeInterval>) -> Date {
    Fixture.at(
      TimeInterval(Int.random(in: Int(range.lowerBound)...Int(range.upperBound), using: &self)))
  }

  mutating func seconds(_ range: ClosedRange<TimeInterval>) -> TimeInterval {
    TimeInterval(Int.random(in: Int(range.lowerBound)...Int(range.upperBound), using: &self))
  }
}

/// A random snapshot, its bookkeeping and a policy: the input of one property check.
struct Scenario: CustomStringConvertible {

  /// The keys asked about: some in the snapshot, some only in unclaimed purchases, some
  /// nowhere.
  static let keys = ["pro", "plus", "lifetime", "family", "gold"]

  var seed: UInt64
  var info: CustomerInfo
  var storedAt: Date
  var failedAt: Date?
  var policy: OfflinePolicy

  var description: String { "scenario seed \(seed)" }

  /// Bookkeeping as the SQLite cache writes it; `readMark` is a mark raised by earlier reads.
  func bookkeeping(readMark: Date? = nil) -> ScopeBookkeeping {
    var bookkeeping = Fixture.bookkeeping(for: info, storedAt: storedAt, failedAt: failedAt)
    if let readMark {
      bookkeeping.deviceHighWaterMark = max(bookkeeping.deviceHighWaterMark, readMark)
    }
    return bookkeeping
  }

  init(seed: UInt64) {
    self.seed = seed
    var random = ScenarioRNG(seed: seed)
    storedAt = Fixture.t0
    failedAt = random.chance(0.3) ? random.date(0...(3 * .day)) : nil
    policy = Self.policy(&random)
    var entitlements: [String: EntitlementInfo] = [:]
    for key in Self.keys where random.chance(0.7) {
      entitlements[key] = Self.entitlement(&random)
    }
    let unclaimed = (0..<Int.random(in: 0...2, using: &random)).map { index in
      UnclaimedPurchase(
        purchaseId: "tx_\(index)", entitlements: Self.keys.filter { _ in random.chance(0.4) },
        claimHint: random.chance(0.8)
          ? .known(random.pick(ClaimHint.allCases)) : .unknown("call_us"))
    }
    info = CustomerInfo(
      // Usually before the store; sometimes a server clock a little ahead of the device.
      requestDate: random.chance(0.8) ? random.date(-2 * .day...0) : random.date(0...600),
      verification: random.chance(0.85)
        ? .known(random.pick(VerificationStatus.allCases)) : .unknown("signed_twice"),
      entitlements: entitlements, unclaimedPurchases: unclaimed,
      accessContext: random.chance(0.5)
        ? AccessContext(
          token: AccessToken(rawValue: "tok"), expiresAt: random.date(-.hour ... .day))
        : nil,
      deviceAccess: random.chance(0.4) ? Self.device(&random) : nil)
  }

  private static func policy(_ random: inout ScenarioRNG) -> OfflinePolicy {
    var policy: OfflinePolicy = random.chance(0.5) ? .conservative : .serverSnapshot
    if random.chance(0.3) {
      policy.maxSnapshotAge =
        random.chance(0.2) ? nil : random.seconds(.hour...(10 * .day))
    }
    policy.excludeFamilyShared = random.chance(0.3)
    if random.chance(0.2) {
      policy.nonExpiringMaxOfflineAge = random.seconds(.day...(60 * .day))
    }
    if random.chance(0.2) { policy.clockRollbackTolerance = random.seconds(0 ... .hour) }
    if random.chance(0.2) { policy.staleAfter = random.seconds(.minute ... .day) }
    return policy
  }

  private static func entitlement(_ random: inout ScenarioRNG) -> EntitlementInfo {
    let statuses: [OpenEnum<EntitlementStatus>] =
      [.known(.active), .known(.active), .known(.active), .known(.grace), .known(.grace)]
      + EntitlementStatus.allCases.map { .known($0) } + [.unknown("not_a_status_yet")]
    let status = random.pick(statuses)
    let expiresAt = random.chance(0.65) ? random.date(-5 * .day...(40 * .day)) : nil
    let graceChance = status == .known(.grace) ? 0.6 : 0.15
    let sources: [OpenEnum<EntitlementSource>?] =
      EntitlementSource.allCases.map { .known($0) } + [
        .known(.familyShared), .unknown("gift"), nil,
      ]
    // Now and then after the requestDate (which is at most 10 minutes past T): a server cannot
    // have verified access after it answered, so the offline window counts from its answer.
    let verifiedAt =
      random.chance(0.75)
      ? random.chance(0.2)
        ? random.date(.hour...(3 * .day)) : random.date(-40 * .day...0)
      : nil
    return EntitlementInfo(
      status: status, expiresAt: expiresAt,
      gracePeriodExpiresAt: random.chance(graceChance)
        ? random.date(-2 * .day...(20 * .day)) : nil,
      verifiedAt: verifiedAt,
      productId: "product", source: random.pick(sources), willRenew: random.chance(0.5))
  }

  private static func device(_ random: inout ScenarioRNG) -> DeviceAccessInfo {
    let statuses: [OpenEnum<DeviceAccessStatus>] = [
      .known(.active), .known(.active), .known(.active), .known(.blocked), .known(.blocked),
      .unknown("suspended"),
    ]
    let reasons: [OpenEnum<DeviceBlockReason>?] =
      DeviceBlockReason.allCases.map { .known($0) } + [.unknown("DEVICE_ON_FIRE"), nil, nil]
    return DeviceAccessInfo(
      status: random.pick(statuses), reason: random.pick(reasons),
      expiresAt: random.chance(0.7) ? random.date(-.day...(20 * .day)) : nil,
      nextAllowedAt: random.chance(0.5) ? random.date(0...(3 * .day)) : nil,
      changeBudget: random.chance(0.5)
        ? DeviceChangeBudget(
          remaining: Int.random(in: 0...3, using: &random), limit: 3, windowDays: 30,
          unknownFields: random.chance(0.5) ? ["resetsAt": .string("later")] : [:])
        : nil,
      devices: (0..<Int.random(in: 0...2, using: &random)).map { index in
        DeviceSummary(
          id: "d_\(index)", label: random.chance(0.5) ? "iPhone" : nil,
          lastSeenAt: random.chance(0.5) ? random.date(-3 * .day...0) : nil,
          unknownFields: random.chance(0.3) ? ["pushToken": .string("SECRET")] : [:])
      })
  }

  /// The end date a status that grants until a boundary is bounded by: for `grace` its grace
  /// end, else its `expiresAt`; for `active` its `expiresAt` (a grace end on an active
  /// entitlement is not its end). Nil: non-expiring access, bounded by the offline window.
  static func endDate(of entitlement: EntitlementInfo) -> Date? {
    entitlement.status == .known(.grace)
      ? entitlement.gracePeriodExpiresAt ?? entitlement.expiresAt : entitlement.expiresAt
  }

  /// When non-expiring access lapses offline, in server time: the offline window after the
  /// server last verified it, or after the `requestDate` when that is earlier (since
  /// 2026-12-04: a server cannot have verified access after it answered), or when there is no
  /// `verifiedAt`.
  func offlineWindowEnd(of entitlement: EntitlementInfo) -> Date {
    let verified = min(entitlement.verifiedAt ?? info.requestDate, info.requestDate)
    return verified.addingTimeInterval(policy.nonExpiringMaxOfflineAge)
  }

  /// Instants worth asking about: every boundary the scenario has, a second either side and
  /// on it, or anywhere in the next weeks. Instants are the device clock's; the server's
  /// boundaries are met when the time elapsed since the store takes `requestDate` to them.
  func instant(_ random: inout ScenarioRNG) -> Date {
    var boundaries: [Date] = [storedAt.addingTimeInterval(policy.staleAfter)]
    boundaries.append(
      bookkeeping().deviceHighWaterMark.addingTimeInterval(-policy.clockRollbackTolerance))
    if let age = policy.maxSnapshotAge { boundaries.append(storedAt.addingTimeInterval(age)) }
    var serverBoundaries: [Date] = []
    if let device = info.deviceAccess?.expiresAt { serverBoundaries.append(device) }
    if let context = info.accessContext?.expiresAt { serverBoundaries.append(context) }
    for entitlement in info.entitlements.values {
      serverBoundaries += [entitlement.expiresAt, entitlement.gracePeriodExpiresAt].compactMap {
        $0
      }
      serverBoundaries.append(offlineWindowEnd(of: entitlement))
    }
    boundaries += serverBoundaries.map {
      storedAt.addingTimeInterval($0.timeIntervalSince(info.requestDate))
    }
    guard random.chance(0.6) else { return random.date(-3 * .day...(45 * .day)) }
    return random.pick(boundaries).addingTimeInterval(random.pick([-1, 0, 1]))
  }
}
