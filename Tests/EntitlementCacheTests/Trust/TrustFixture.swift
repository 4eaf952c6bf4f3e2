import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Signed snapshots and caches with trust roots, for the trusted-snapshot tests.
enum TrustFixture {
  static let body = Data(SampleSnapshot.json.utf8)
  /// The sample with its installation blocked, so the device block column is stored.
  static let blockedBody = Data(
    SampleSnapshot.json.replacingOccurrences(
      of: #""status": "active",\#n    "reason": null"#,
      with: #""status": "blocked",\#n    "reason": "DEVICE_REPLACED""#
    ).utf8)

  /// The sample with another `requestDate`.
  static func body(requestDate: String) -> Data {
    Data(SampleSnapshot.json(requestDate: requestDate).utf8)
  }

  /// `body` signed for `scope` with the test signer's nonce, as a request that sent
  /// `requestNonce` receives it.
  static func signed(
    _ body: Data = body, for scope: CacheScope = Fixture.scopeA,
    requestNonce: [UInt8]? = TestSigner.nonce, certificate: [UInt8]? = nil
  ) throws -> CustomerInfoSnapshot {
    let unsigned = try CustomerInfoSnapshot(jsonData: body)
    return try CustomerInfoSnapshot(
      jsonData: body,
      signature: TestSigner.sign(
        body, requestDate: unsigned.customerInfo.requestDate, scope: scope,
        certificate: certificate),
      requestNonce: requestNonce)
  }

  static func cache(
    in directory: TemporaryDirectory, clock: ManualClock, requireVerified: Bool = false,
    checkInterval: TimeInterval = 0.05
  ) throws -> SQLiteCustomerInfoCache {
    let roots = try TestSigner.roots()
    return try Fixture.cache(in: directory, clock: clock) { configuration in
      configuration.trustRoots = roots
      configuration.policy.requireVerified = requireVerified
      configuration.changeCheckInterval = .seconds(checkInterval)
    }
  }

  /// The verdict a decision's evidence shows; nil when it shows none of the library's.
  static func verdict(_ decision: AccessDecision) -> TrustVerdict? {
    switch decision.evidence.verification {
    case .known(.verified)?: .verified
    case .known(.failed)?: .failed(decision.evidence.verificationFailure ?? .tampered)
    default: nil
    }
  }
}
