#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the library decided about a snapshot's signature (<doc:TrustedSnapshots>), when the cache
/// has ``TrustRoots``.
public enum TrustVerdict: Sendable, Hashable, CustomStringConvertible {
  /// A pinned root certified the key that signed the snapshot for its scope, and what is
  /// stored is what was signed.
  case verified
  /// It is not verified, and why.
  case failed(VerificationFailure)

  /// Why it failed; nil when verified.
  package var failure: VerificationFailure? {
    if case .failed(let reason) = self { return reason }
    return nil
  }

  /// `verified`, or `failed (signature_mismatch)`.
  public var description: String {
    switch self {
    case .verified: "verified"
    case .failed(let reason): "failed (\(reason.rawValue))"
    }
  }

  /// The verification a decision's evidence shows for this verdict.
  var status: OpenEnum<VerificationStatus> {
    self == .verified ? .known(.verified) : .known(.failed)
  }

  init(_ failure: VerificationFailure?) {
    self = failure.map(TrustVerdict.failed) ?? .verified
  }

  /// The verdict a writer with trust roots records as the pair of `verification` and
  /// `verification_failure` columns, with the time it checked at (`trust_checked_at`); nil
  /// without that time (no writer with trust roots decided) and for any other pair, which no
  /// writer records: the row was edited, and matches no check.
  init?(recordedAs verification: String?, failure: String?, checkedAt: Date?) {
    guard checkedAt != nil else { return nil }
    self.init(recordedAs: verification, failure: failure)
  }

  /// The verdict the pair of `verification` and `verification_failure` columns records, for
  /// a row a writer with trust roots checked; nil for any pair no writer records.
  init?(recordedAs verification: String?, failure: String?) {
    switch (verification, failure.map(VerificationFailure.init(rawValue:))) {
    case ("verified"?, nil): self = .verified
    case ("failed"?, let reason??): self = .failed(reason)
    default: return nil
    }
  }
}

/// The signed material a store keeps beside a snapshot, and what the writer decided from it.
struct StoredTrust: Sendable, Hashable {
  var signature: ResponseSignature?
  var requestNonce: [UInt8]?
  /// The trusted server time (<doc:TimeModel>) the writer checked the intermediate's expiry
  /// against; nil when the writer had no trust roots and decided nothing.
  var checkedAt: Date?
  /// The writer's verdict, when it had trust roots: nil either when it had none or when the
  /// stored verdict is not one a writer produces (an edit).
  var writerVerdict: TrustVerdict?

  /// The material of a snapshot arriving, decided by a writer with trust roots at `checkedAt`
  /// (or by none, when `verdict` is nil).
  init(_ snapshot: CustomerInfoSnapshot, verdict: TrustVerdict?, checkedAt: Date?) {
    signature = snapshot.signature
    requestNonce = snapshot.requestNonce
    self.checkedAt = checkedAt
    writerVerdict = verdict
  }

  init(
    signature: ResponseSignature?, requestNonce: [UInt8]?, checkedAt: Date?,
    writerVerdict: TrustVerdict?
  ) {
    self.signature = signature
    self.requestNonce = requestNonce
    self.checkedAt = checkedAt
    self.writerVerdict = writerVerdict
  }
}

/// The checks of trusted snapshots (<doc:TrustedSnapshots>) as the caches apply them: once when a
/// snapshot arrives, and again from what the file holds whenever a scope is read from disk.
enum SnapshotTrust {
  /// The verdict on a snapshot arriving for `scope`, with the intermediate's expiry checked
  /// against `serverNow`, the trusted server time (<doc:TimeModel>).
  static func arrivalVerdict(
    _ snapshot: CustomerInfoSnapshot, bodyDigest: [UInt8], for scope: CacheScope,
    roots: TrustRoots, serverNow: Date
  ) -> TrustVerdict {
    TrustVerdict(
      ResponseVerifier.failure(
        bodyDigest: bodyDigest, requestDate: snapshot.customerInfo.requestDate,
        signature: snapshot.signature, expectedNonce: snapshot.requestNonce, scope: scope,
        serverNow: serverNow, roots: roots))
  }

  /// The trusted server time a snapshot arriving is checked against (<doc:TrustedSnapshots>): the
  /// latest of the response's own signed `requestDate`; the scope's last *verified* `requestDate`
  /// plus the time the boot clock measured since, in that refresh's boot session; and the
  /// device's wall clock now, moved by that refresh's clock offset.
  ///
  /// A clock set back lowers only the last of these, so it revives no expired key: the boot
  /// clock and the signed times hold. Neither the device high-water mark nor an unverified
  /// snapshot takes part: a mark a clock once set forward raised, or a forged answer dated in
  /// the future, would otherwise judge every genuine answer after it expired, and a refused
  /// answer resets nothing, so the scope would never recover. A clock set forward makes the
  /// check stricter only while it reads ahead.
  ///
  /// - Parameters:
  ///   - requestDate: The arriving response's `requestDate`.
  ///   - now: The device's wall clock.
  ///   - verified: The bookkeeping of the scope's stored snapshot when it is verified.
  ///   - boot: The boot clock now, where there is one.
  static func arrivalServerTime(
    requestDate: Date, now: Date, verified: ScopeBookkeeping?, boot: BootInstant?
  ) -> Date {
    var instant = max(requestDate, now)
    if let verified, let serverTime = verified.serverTime, let storedAt = verified.storedAt {
      instant = max(instant, now.addingTimeInterval(serverTime.timeIntervalSince(storedAt)))
      if let boot, let elapsed = verified.refreshBootInstant?.elapsed(until: boot),
        elapsed.isFinite, elapsed > 0
      {
        instant = max(instant, serverTime.addingTimeInterval(elapsed))
      }
      instant = max(instant, serverTime)
    }
    // Kept to the millisecond, as the file keeps it, so a read decides at the same instant.
    return instant.truncatedToMilliseconds
  }

  /// The verdict on what the file holds for `scope`: the signature checked again over the
  /// stored body, with the nonce and the expiry instant the writer checked; when the writer
  /// had trust roots, its recorded verdict must be the same, or the row was edited.
  static func recheck(
    bodyDigest: [UInt8], requestDate: Date, stored: StoredTrust, scope: CacheScope,
    roots: TrustRoots
  ) -> TrustVerdict {
    let again = TrustVerdict(
      ResponseVerifier.failure(
        bodyDigest: bodyDigest, requestDate: requestDate, signature: stored.signature,
        expectedNonce: stored.requestNonce, scope: scope, serverNow: stored.checkedAt,
        roots: roots))
    if stored.checkedAt != nil, stored.writerVerdict != again { return .failed(.tampered) }
    return again
  }
}
