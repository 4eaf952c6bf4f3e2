#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The answer to "may this user use `pro` now?", with the evidence behind it.
///
/// ```swift
/// let decision = cache.access(to: "pro", for: scope)
/// switch decision.state {
/// case .granted: showPro()
/// case .denied: showPaywall(offering: decision.recovery)  // restore, never "buy again"
/// case .deviceBlocked(let reason): showDeviceManagement(reason, decision.device)
/// case .offlineUnavailable: keepLockedAndOfferRetry()     // unknown, not "not entitled"
/// }
/// ```
public struct AccessDecision: Sendable, Hashable {
  /// The entitlement key asked about.
  public var entitlement: String
  /// Granted, denied, unavailable, or blocked on this device.
  public var state: AccessState
  /// What the decision rests on.
  public var evidence: AccessEvidence
  /// When access is denied but an unclaimed purchase lists this entitlement: what to offer.
  public var recovery: ClaimHint?
  /// When the device is blocked: what the app needs to show device management.
  public var device: DeviceBlockDetails?

  /// Whether access is granted.
  public var isGranted: Bool {
    // A pattern match: the synthesized `==` compares payloads an app asking this never needs.
    if case .granted = state { return true }
    return false
  }

  /// Granted on a verified response that was not computed offline: fit for expensive,
  /// server-backed or abuse-prone features.
  public var isHighTrust: Bool {
    guard isGranted, evidence.isComputedOffline == false else { return false }
    return evidence.verification == .known(.verified)
      || evidence.verification == .known(.verifiedOnDevice)
  }
}

/// The outcome of an access decision.
public enum AccessState: Sendable, Hashable {
  /// The user may use the entitlement now.
  case granted
  /// The cached evidence says no.
  case denied(DenialReason)
  /// No bounded decision exists: keep the feature locked and offer a retry. Never a sign that
  /// the user is not entitled.
  case offlineUnavailable(UnavailableReason)
  /// The user is entitled but this installation may not use it. Never "buy again".
  case deviceBlocked(OpenEnum<DeviceBlockReason>?)
}

/// Why cached evidence denies access.
public enum DenialReason: String, Sendable, Hashable, CaseIterable {
  /// The snapshot has no such entitlement.
  case notEntitled = "not_entitled"
  /// It ended (by the server's status, or its `expiresAt` or grace end passed).
  case expired
  /// It was taken back.
  case revoked
  /// Billing is being retried: show billing recovery, not premium.
  case billingRetry = "billing_retry"
  /// Non-expiring access was last verified longer ago than the policy allows offline.
  case offlineWindowElapsed = "offline_window_elapsed"
  /// The server sent a status this build does not know; unknown never grants.
  case unknownStatus = "unknown_status"
  /// It is family-shared and the policy excludes shared access.
  case familySharingExcluded = "family_sharing_excluded"
}

/// Why no bounded decision exists.
public enum UnavailableReason: String, Sendable, Hashable, CaseIterable {
  /// No snapshot is stored for the scope.
  case noSnapshot = "no_snapshot"
  /// The snapshot is older than the policy's `maxSnapshotAge`.
  case snapshotTooOld = "snapshot_too_old"
  /// The server-issued device access expiry has passed.
  case deviceAccessExpired = "device_access_expired"
  /// The stored snapshot could not be read: a damaged file, a body that no longer decodes, a
  /// storage error, or a closed cache.
  case unreadable
  /// The storage exists but cannot be opened or read yet: permissions, or data protection
  /// before the device's first unlock. Never read as "no snapshot": the cache tries again
  /// shortly, and when the app says protected data became available.
  case storageUnavailable = "storage_unavailable"
  /// The file was written by a newer version of the app that changed what this build
  /// reads: it is left untouched, and this build answers nothing from it.
  case newerSchema = "newer_schema"
  /// The policy requires a verified snapshot and this one is not: see
  /// ``AccessEvidence/verificationFailure`` for why.
  case unverified
}

/// How current the cached snapshot is.
public enum Freshness: String, Sendable, Hashable, CaseIterable {
  /// Younger than `staleAfter`, and no refresh has failed since.
  case fresh
  /// Older than `staleAfter`: a refresh is due. Access is unchanged.
  case stale
  /// The latest refresh attempt failed after the last success: served from cache.
  case offline
}

/// What a decision rests on. Fields that do not apply are nil.
public struct AccessEvidence: Sendable, Hashable {
  /// How current the snapshot is.
  public var freshness: Freshness?
  /// How the snapshot is verified. With ``CacheConfiguration/trustRoots`` set this is the
  /// library's decision, `verified` or `failed` (the body's own field is ignored); without
  /// them, the body's claim.
  public var verification: OpenEnum<VerificationStatus>?
  /// Why the library decided `failed`; nil when it did not decide, or decided `verified`.
  public var verificationFailure: VerificationFailure?
  /// Served from cache after a failed refresh.
  public var isComputedOffline: Bool?
  /// The device time of the refresh that stored the snapshot.
  public var storedAt: Date?
  /// When the server last verified this entitlement.
  public var verifiedAt: Date?
  /// The first instant without access, in server time. While granted (or device-blocked,
  /// where it says how long the user stays entitled), when access will end; after a denial by
  /// ``DenialReason/expired`` or ``DenialReason/offlineWindowElapsed``, when it ended, where
  /// that is known. Nil for every other denial and for `offlineUnavailable`: a denial never
  /// shows a `validUntil` still ahead.
  public var validUntil: Date?
  /// Where the entitlement's access comes from.
  public var source: OpenEnum<EntitlementSource>?
  /// The device clock is more than the policy's tolerance behind a device time the cache has
  /// already seen: it was set back. A diagnostic; never because the server's clock is ahead.
  public var clockRollbackSuspected: Bool
  /// How far the server's clock was ahead of the device's at the last refresh, in whole
  /// seconds (negative when the device's was ahead). A diagnostic: boundaries are compared
  /// with the server's time whatever it is.
  public var clockOffset: Int?
  /// The cache's estimate of the server's clock at this decision, which every server-issued
  /// boundary was compared with (<doc:TimeModel>). Nil without a snapshot.
  public var estimatedServerTime: Date?
  /// The scope observed a purchase the queue has not posted yet (<doc:PurchaseQueue>). It never
  /// grants by itself: on a denial or `offlineUnavailable`, say "purchase processing", not "buy".
  public var pendingPurchase: Bool
  /// Whether the snapshot deciding is a refresh's or an import's (``CustomerInfoImporting``);
  /// nil without a snapshot. An imported one reads `verification` ``VerificationStatus/notRequested``
  /// whatever its body says, and never decides with high trust.
  public var origin: SnapshotOrigin?

  /// Creates evidence.
  package init(
    freshness: Freshness? = nil, verification: OpenEnum<VerificationStatus>? = nil,
    isComputedOffline: Bool? = nil, storedAt: Date? = nil, verifiedAt: Date? = nil,
    validUntil: Date? = nil, source: OpenEnum<EntitlementSource>? = nil,
    clockRollbackSuspected: Bool = false, clockOffset: Int? = nil,
    estimatedServerTime: Date? = nil, pendingPurchase: Bool = false,
    verificationFailure: VerificationFailure? = nil, origin: SnapshotOrigin? = nil
  ) {
    self.origin = origin
    self.freshness = freshness
    self.verification = verification
    self.verificationFailure = verificationFailure
    self.isComputedOffline = isComputedOffline
    self.storedAt = storedAt
    self.verifiedAt = verifiedAt
    self.validUntil = validUntil
    self.source = source
    self.clockRollbackSuspected = clockRollbackSuspected
    self.clockOffset = clockOffset
    self.estimatedServerTime = estimatedServerTime
    self.pendingPurchase = pendingPurchase
  }
}

/// What the app needs to show device management for a blocked installation.
public struct DeviceBlockDetails: Sendable, Hashable {
  /// The server's reason code.
  public var reason: OpenEnum<DeviceBlockReason>?
  /// When the next device change is allowed.
  public var nextAllowedAt: Date?
  /// The rolling budget of device changes.
  public var changeBudget: DeviceChangeBudget?
  /// The customer's activations, as redacted by the server.
  public var devices: [DeviceSummary]
}
