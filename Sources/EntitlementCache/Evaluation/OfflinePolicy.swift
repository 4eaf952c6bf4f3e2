#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How long cached access may be trusted, and against which clock.
///
/// Every knob has a documented default; the two presets cover the two product models.
///
/// ```swift
/// var policy = OfflinePolicy.conservative
/// policy.nonExpiringMaxOfflineAge = 7 * 86_400  // lifetime access: one week offline
/// ```
public struct OfflinePolicy: Sendable, Hashable {
  /// What `expiresAt` is compared with.
  public enum ExpiryReference: Sendable, Hashable {
    /// Access ends at `expiresAt`, even offline. `expiresAt` is compared with the cache's
    /// estimate of the server's clock now: the device's clock corrected by the offset the last
    /// refresh measured, never earlier than the latest time already seen (so a clock set back
    /// cannot re-grant), and measured by the boot clock within the refresh's boot session. See
    /// <doc:OfflineRules>.
    case deviceClock
    /// The server's status holds until the snapshot is replaced or exceeds
    /// ``OfflinePolicy/maxSnapshotAge``; `expiresAt` is not compared with any clock.
    case serverSnapshot
  }

  /// A snapshot older than this is `stale`: a refresh is due. Access is unchanged. Default 5 min.
  public var staleAfter: TimeInterval
  /// How long after `verifiedAt` an entitlement without `expiresAt` (lifetime access) stays
  /// usable. Default 30 days, so a device that never reconnects cannot keep it forever.
  public var nonExpiringMaxOfflineAge: TimeInterval
  /// A snapshot older than this grants nothing: every decision is `offlineUnavailable`.
  /// Default none.
  public var maxSnapshotAge: TimeInterval?
  /// What `expiresAt` is compared with. Default ``ExpiryReference/deviceClock``.
  public var expiryReference: ExpiryReference
  /// How far the clock may fall behind the latest trusted time before the evidence says
  /// `clockRollbackSuspected`. Default 5 min, above ordinary NTP corrections.
  public var clockRollbackTolerance: TimeInterval
  /// Whether `family_shared` entitlements are denied. Default false.
  public var excludeFamilyShared: Bool
  /// Whether only a `verified` snapshot may decide (<doc:TrustedSnapshots>): any other answers
  /// ``UnavailableReason/unverified``. Default false: verification is informational, shown in
  /// the evidence. With ``CacheConfiguration/trustRoots`` set, `verified` is the library's own
  /// check of the server's signature, made again on every read from disk; without them it is
  /// only the body's claim, which is why ``OfflinePolicy/validate(trustRoots:)`` refuses this
  /// without trust roots.
  public var requireVerified: Bool
  /// With ``requireVerified``, how long after an import (``CustomerInfoImporting``) an
  /// imported snapshot, which is never verified, may still decide, in device time; nil (the
  /// default): not at all, so an import answers ``UnavailableReason/unverified`` until a
  /// refresh brings a verified answer. A bounded window keeps an upgrade that launches offline
  /// from locking paying users out, and no longer. An import carries no signature: anyone who
  /// can write the cache's file could plant one that reads as imported, so keep the window as
  /// short as an offline first launch needs (days, not months). An import whose rows were
  /// edited apart from its body reads `failed(tampered)`, which no window accepts.
  public var acceptsImportedSnapshotsFor: TimeInterval? = nil

  /// Creates a policy; every omitted knob takes its default.
  package init(
    staleAfter: TimeInterval = 5 * 60,
    nonExpiringMaxOfflineAge: TimeInterval = 30 * 86_400,
    maxSnapshotAge: TimeInterval? = nil,
    expiryReference: ExpiryReference = .deviceClock,
    clockRollbackTolerance: TimeInterval = 5 * 60,
    excludeFamilyShared: Bool = false,
    requireVerified: Bool = false
  ) {
    self.staleAfter = staleAfter
    self.nonExpiringMaxOfflineAge = nonExpiringMaxOfflineAge
    self.maxSnapshotAge = maxSnapshotAge
    self.expiryReference = expiryReference
    self.clockRollbackTolerance = clockRollbackTolerance
    self.excludeFamilyShared = excludeFamilyShared
    self.requireVerified = requireVerified
  }

  /// The default: expiring access ends at `expiresAt`, offline too, compared with the estimated
  /// server time (<doc:TimeModel>); lifetime access is usable 30 days after `verifiedAt`; stale
  /// after 5 minutes.
  public static let conservative = OfflinePolicy()

  /// The perk model: the server's status holds until the snapshot is replaced, stale after
  /// 5 minutes, unusable after 2 days; `expiresAt` is not compared with any clock
  /// (<doc:OfflineRules>).
  public static let serverSnapshot = OfflinePolicy(
    maxSnapshotAge: 2 * 86_400, expiryReference: .serverSnapshot)
}
