#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The server's facts about one entitlement key, in the normalized form both the SQLite point
/// read and an in-memory CustomerInfo produce, so the two give the same decision by
/// construction.
struct EntitlementFacts: Sendable, Hashable {
  /// Nil when the snapshot does not entitle the key (the facts then exist for `claimHint`).
  var status: OpenEnum<EntitlementStatus>?
  var expiresAt: Date?
  var gracePeriodExpiresAt: Date?
  var verifiedAt: Date?
  var source: OpenEnum<EntitlementSource>?
  var productId: String?
  var willRenew: Bool?
  /// The hint of the first unclaimed purchase (in server order) that lists the key with a
  /// hint this build knows.
  var claimHint: ClaimHint?

  /// The facts of every key the snapshot mentions: its entitlements, and the keys its
  /// unclaimed purchases list.
  static func table(for info: CustomerInfo) -> [String: EntitlementFacts] {
    var table: [String: EntitlementFacts] = [:]
    table.reserveCapacity(info.entitlements.count)
    for (key, entitlement) in info.entitlements {
      table[key] = EntitlementFacts(
        status: entitlement.status, expiresAt: entitlement.expiresAt,
        gracePeriodExpiresAt: entitlement.gracePeriodExpiresAt,
        verifiedAt: entitlement.verifiedAt, source: entitlement.source,
        productId: entitlement.productId, willRenew: entitlement.willRenew)
    }
    for purchase in info.unclaimedPurchases {
      guard let hint = purchase.claimHint.knownValue else { continue }
      for key in purchase.entitlements where table[key]?.claimHint == nil {
        table[key, default: EntitlementFacts()].claimHint = hint
      }
    }
    return table
  }
}

/// The snapshot-wide facts a decision needs, besides the entitlement's own.
struct SnapshotFacts: Sendable, Hashable {
  var verification: OpenEnum<VerificationStatus>
  /// Why the library decided `failed` (<doc:TrustedSnapshots>); nil otherwise.
  var verificationFailure: VerificationFailure?
  var accessContextExpiresAt: Date?
  var deviceAccess: DeviceAccessInfo?
}

// Initializers in an extension, so the memberwise one stays for
// ``init(normalized:accessContextExpiresAt:deviceAccess:)`` to build through (Architecture,
// "Initializers of values on the read path").
extension SnapshotFacts {
  /// Facts in normalized form, from facts as a snapshot holds them.
  init(
    normalizing verification: OpenEnum<VerificationStatus>, accessContextExpiresAt: Date?,
    deviceAccess: DeviceAccessInfo?
  ) {
    self.verification = verification
    self.accessContextExpiresAt = accessContextExpiresAt
    // Fields the server may add to deviceAccess are not needed to decide and could carry
    // tokens; the normalized form drops them. An active installation needs only its status
    // and expiry: the rest appears in deviceBlocked decisions alone, and the file keeps it
    // only for a blocked one (see DeviceBlockColumn).
    self.deviceAccess = deviceAccess.map { device in
      if device.status == .known(.active) {
        return DeviceAccessInfo(status: device.status, expiresAt: device.expiresAt)
      }
      var trimmed = device
      // Rows read from the file are already trimmed; checking first spares the read-through
      // the copies that the assignments would make.
      if !device.unknownFields.isEmpty { trimmed.unknownFields = [:] }
      if device.changeBudget?.unknownFields.isEmpty == false {
        trimmed.changeBudget?.unknownFields = [:]
      }
      if !device.devices.isEmpty {
        trimmed.devices = device.devices.map {
          DeviceSummary(id: $0.id, label: $0.label, lastSeenAt: $0.lastSeenAt)
        }
      }
      return trimmed
    }
  }

  /// Facts already in normalized form, kept as they are: what a row of the file holds, which
  /// only ever stores normalized facts.
  init(
    normalized verification: OpenEnum<VerificationStatus>, accessContextExpiresAt: Date?,
    deviceAccess: DeviceAccessInfo?
  ) {
    self.init(
      verification: verification, verificationFailure: nil,
      accessContextExpiresAt: accessContextExpiresAt, deviceAccess: deviceAccess)
  }

  init(_ info: CustomerInfo) {
    self.init(
      normalizing: info.verification, accessContextExpiresAt: info.accessContext?.expiresAt,
      deviceAccess: info.deviceAccess)
  }

  /// The facts of `info` with the library's verdict in place of the body's claim; the body's
  /// claim when `verdict` is nil (no trust roots).
  init(_ info: CustomerInfo, verdict: TrustVerdict?) {
    self.init(info)
    if let verdict { apply(verdict) }
  }

  /// The library's verdict these facts hold: meaningful only for facts a cache with trust
  /// roots decided, whose verification is `verified` or `failed` with its reason.
  var verdict: TrustVerdict {
    verification == .known(.verified) ? .verified : .failed(verificationFailure ?? .tampered)
  }

  /// ``verdict``, or nil for an import whose rows hold what its body says: it carries no
  /// signature, so the library decided nothing of it (its facts read `not_requested`).
  var decidedVerdict: TrustVerdict? {
    verification == .known(.notRequested) && verificationFailure == nil ? nil : verdict
  }

  /// Puts the library's verdict in place of whatever verification the facts held.
  mutating func apply(_ verdict: TrustVerdict) {
    verification = verdict.status
    verificationFailure = verdict.failure
  }

}
