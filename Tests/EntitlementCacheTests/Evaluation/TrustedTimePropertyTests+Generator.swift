import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

extension TrustedTimePropertyTests {
  /// A device clock's skew: 20 days behind most often (issue 9), 20 days ahead, minutes slow
  /// or fast, anything within 20 days either way, or right.
  static func skew(_ random: inout ScenarioRNG) -> TimeInterval {
    switch Int.random(in: 0..<10, using: &random) {
    case 0, 1, 2: -20 * .day
    case 3: 20 * .day
    case 4, 5: random.seconds((-15 * .minute)...(15 * .minute))
    case 6: random.seconds((-20 * .day)...(20 * .day))
    default: 0
    }
  }

  /// What the server answers at true time `requestDate`: its boundaries around it, so reads
  /// over the next weeks cross each of them.
  static func snapshot(at requestDate: Date, _ random: inout ScenarioRNG) -> CustomerInfo {
    func around(_ range: ClosedRange<TimeInterval>) -> Date {
      requestDate.addingTimeInterval(random.seconds(range))
    }
    var entitlements: [String: EntitlementInfo] = [:]
    if random.chance(0.9) {
      entitlements["pro"] = EntitlementInfo(
        status: .known(.active), expiresAt: around(-.hour...(25 * .day)),
        verifiedAt: requestDate, productId: "pro_monthly", source: .known(.purchase))
    }
    if random.chance(0.7) {
      entitlements["grace"] = EntitlementInfo(
        status: .known(.grace), expiresAt: around((-2 * .day)...(5 * .day)),
        gracePeriodExpiresAt: random.chance(0.7) ? around(-.hour...(16 * .day)) : nil,
        verifiedAt: requestDate, productId: "pro_yearly", source: .known(.purchase))
    }
    if random.chance(0.8) {
      entitlements["lifetime"] = EntitlementInfo(
        status: .known(.active),
        verifiedAt: random.chance(0.7) ? around((-35 * .day)...0) : nil,
        productId: "lifetime", source: .known(.purchase))
    }
    if random.chance(0.4) {
      // Every status that denies by itself, however many there are.
      let status = random.pick(EntitlementStatus.allCases.filter { !$0.grantsUntilItsBoundary })
      entitlements["ended"] = EntitlementInfo(
        status: .known(status), expiresAt: around((-5 * .day)...(5 * .day)),
        verifiedAt: requestDate, productId: "pro_monthly", source: .known(.purchase))
    }
    var deviceAccess: DeviceAccessInfo?
    if random.chance(0.6) {
      let blocked = random.chance(0.15)
      deviceAccess = DeviceAccessInfo(
        status: .known(blocked ? .blocked : .active),
        reason: blocked ? .known(.deviceReplaced) : nil,
        expiresAt: random.chance(0.8) ? around(-.hour...(20 * .day)) : nil)
    }
    return CustomerInfo(
      requestDate: requestDate, verification: .known(.verified), entitlements: entitlements,
      accessContext: random.chance(0.6)
        ? AccessContext(token: AccessToken(rawValue: "tok"), expiresAt: around(0 ... .day))
        : nil,
      deviceAccess: deviceAccess)
  }
}
