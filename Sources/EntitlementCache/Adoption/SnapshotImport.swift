#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A previous cache's snapshot to take over as of the time that cache saved it: what
/// ``CustomerInfoImporting/importSnapshot(_:for:)`` stores.
///
/// Stored as of the save, not as a refresh now, the time since the save counts as time that
/// passed: expiries that passed since are past, the snapshot is stale at once, and lifetime
/// windows count from the save (``bookkeeping(at:bootInstant:over:policy:)`` has the rule).
public struct SnapshotImport: Sendable, Hashable {
  /// The snapshot, in this package's format (an adapter maps another format to it).
  public var snapshot: CustomerInfoSnapshot
  /// The device time at which the previous cache saved it; nil when that cache did not keep
  /// one, which takes the save to be at the snapshot's `requestDate`, or now when that is
  /// ahead of the device's clock.
  public var savedAt: Date?
  /// What the snapshot came from, such as `revenuecat-v1` or `legacy-user-defaults`: shown in
  /// the evidence of every decision until a refresh replaces it. 1 to 64 bytes of UTF-8, no
  /// control or format characters.
  public var label: String

  /// An import of `snapshot`, saved by the previous cache at `savedAt`, labelled `label`.
  public init(snapshot: CustomerInfoSnapshot, savedAt: Date?, label: String) {
    self.snapshot = snapshot
    self.savedAt = savedAt
    self.label = label
  }

  /// The longest label, in bytes of UTF-8.
  package static let labelLimit = 64

  /// The bookkeeping an import writes when the cache's clock reads `now` (and `bootInstant`),
  /// over `existing`, the scope's bookkeeping when it has some without a snapshot (a failed
  /// refresh left it), or why the import is refused (thrown): the one rule every cache
  /// applies, so a cache of your own calls this inside its write, after it checked that the
  /// scope holds no snapshot.
  ///
  /// It is the bookkeeping a refresh at the save would have written (`storedAt` and the last
  /// refresh attempt at the save, the server's offset at it, no boot-clock reading, since the
  /// save was in another boot session as far as anyone knows), with the device high-water
  /// mark at the time a read now decides with: the import is a write, so a clock set back
  /// after it gains nothing, and the mark `existing` holds is raised, never lowered. A save
  /// ahead of that time within the policy's ``OfflinePolicy/clockRollbackTolerance`` is taken
  /// as at that time. It replaces the scope's bookkeeping, keeping only that mark: a failed
  /// refresh's time and reason are gone, and the snapshot reads stale, not offline. Device
  /// times are truncated to the millisecond, as a file keeps them. Pass the policy your reads
  /// use when they are given none.
  ///
  /// - Throws: ``ImportRefusal/savedAfterNow`` when the save is ahead by more than the
  ///   tolerance (a clock set back since the save would re-grant what lapsed), and
  ///   ``ImportRefusal/invalidLabel`` for a label that is empty, over 64 bytes or
  ///   holds a control or format character (such as a bidirectional override).
  public func bookkeeping(
    at now: Date, bootInstant: BootInstant? = nil, over existing: ScopeBookkeeping?,
    policy: OfflinePolicy
  ) throws(ImportRefusal) -> ScopeBookkeeping {
    try bookkeeping(
      at: now, bootInstant: bootInstant, over: existing, policy: policy,
      digest: SHA256.hash(Array(snapshot.jsonData)))
  }

  /// The time the import is stored as, or why it is refused: the checks of
  /// ``bookkeeping(at:bootInstant:over:policy:)`` alone, at the time it is written.
  func savedTime(at now: Date, policy: OfflinePolicy) throws(ImportRefusal) -> Date {
    guard Self.isValidLabel(label) else { throw .invalidLabel }
    let claimed = savedAt ?? min(snapshot.customerInfo.requestDate, now)
    guard claimed.timeIntervalSince(now) <= policy.clockRollbackTolerance else {
      throw .savedAfterNow
    }
    return min(claimed, now)
  }

  /// The bookkeeping of an import written at `now` (the time a read decides with), its body's
  /// SHA-256 `digest`.
  private func bookkeeping(writtenAt now: Date, policy: OfflinePolicy, digest: [UInt8])
    throws(ImportRefusal) -> ScopeBookkeeping
  {
    let saved = try savedTime(at: now, policy: policy)
    var bookkeeping = ScopeBookkeeping(
      storedAt: saved, serverTime: snapshot.customerInfo.requestDate,
      lastRefreshAttemptAt: saved, deviceHighWaterMark: now,
      snapshotSize: snapshot.jsonData.count, snapshotSHA256: digest)
    bookkeeping.origin = .imported(label: label, importedAt: now)
    return bookkeeping
  }

  private static func isValidLabel(_ label: String) -> Bool {
    // Control and format characters (a bidirectional override among them) would let a label
    // rewrite how a log line or a terminal shows what follows it.
    !label.isEmpty && label.utf8.count <= labelLimit
      && !label.unicodeScalars.contains {
        $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
      }
  }
}

/// What an import did.
public enum ImportOutcome: Sendable, Hashable {
  /// The snapshot was stored as of its save.
  case imported
  /// The scope already holds a snapshot (a refresh's, or an earlier import's): nothing
  /// changed. Importing again at every launch is therefore safe.
  case scopeAlreadyFilled
  /// The import was refused; nothing changed.
  case refused(ImportRefusal)
}

/// Why an import was refused.
public enum ImportRefusal: String, Error, Sendable, Hashable, CaseIterable,
  CustomStringConvertible
{
  /// The save time is ahead of the device's clock by more than the policy's rollback
  /// tolerance: trusting it would let a clock set back since the save re-grant what lapsed.
  case savedAfterNow = "saved_after_now"
  /// The label is empty, over 64 bytes, or holds a control or
  /// format character.
  case invalidLabel = "invalid_label"

  /// The raw value.
  public var description: String { rawValue }
}

/// A cache that can take over a previous cache's snapshot as of the time it was saved: the
/// optional capability an SDK needs to adopt the cache on an installed base. Both caches of
/// this package offer it; a cache of your own does with
/// ``SnapshotImport/bookkeeping(at:bootInstant:over:policy:)``, and the conformance kit checks
/// it when it is offered.
public protocol CustomerInfoImporting: CustomerInfoCache {
  /// Stores `request` for `scope` if, and only if, the scope holds no snapshot, decided in the
  /// same transaction (or under the same lock) as the write.
  ///
  /// The bookkeeping is ``SnapshotImport/bookkeeping(at:bootInstant:over:policy:)``'s at the
  /// clock's now, and the origin ``SnapshotOrigin/imported(label:importedAt:)`` is kept with it
  /// until a refresh replaces the snapshot, which the first successful one does.
  ///
  /// - Returns: What happened; only ``ImportOutcome/imported`` changed anything.
  /// - Throws: ``CacheError/invalidSnapshot(_:)`` for a snapshot over the cache's size limit;
  ///   ``CacheError/storage(_:_:)``.
  func importSnapshot(_ request: SnapshotImport, for scope: CacheScope) throws(CacheError)
    -> ImportOutcome
}

extension SnapshotImport {
  /// ``bookkeeping(at:bootInstant:over:policy:)`` with the body's SHA-256 already computed,
  /// so a cache hashes the body once, outside its lock or transaction. Both caches of this
  /// package call it inside their write.
  func bookkeeping(
    at now: Date, bootInstant: BootInstant?, over existing: ScopeBookkeeping?,
    policy: OfflinePolicy, digest: [UInt8]
  ) throws(ImportRefusal) -> ScopeBookkeeping {
    let writtenAt = EntitlementEvaluator.effectiveDeviceTime(
      now: now, bookkeeping: existing, bootInstant: bootInstant, policy: policy
    ).truncatedToMilliseconds
    return try bookkeeping(writtenAt: writtenAt, policy: policy, digest: digest)
      .truncatedToMilliseconds
  }
}

extension ScopeBookkeeping {
  /// The bookkeeping with its device times to the millisecond, as a file keeps them: an
  /// import's save time comes from outside and may be finer.
  var truncatedToMilliseconds: ScopeBookkeeping {
    var copy = self
    copy.storedAt = storedAt?.truncatedToMilliseconds
    copy.lastRefreshAttemptAt = lastRefreshAttemptAt?.truncatedToMilliseconds
    copy.deviceHighWaterMark = deviceHighWaterMark.truncatedToMilliseconds
    if case .imported(let label, let importedAt) = origin {
      copy.origin = .imported(label: label, importedAt: importedAt.truncatedToMilliseconds)
    }
    return copy
  }
}
