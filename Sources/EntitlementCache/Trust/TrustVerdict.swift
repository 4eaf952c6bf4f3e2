#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the library decided about a snapshot's signature (DESIGN §12), when the cache has
/// ``TrustRoots``.
public enum TrustVerdict: Sendable, Hashable, CustomStringConvertible {
  /// A pinned root certified the key that signed the snapshot for its scope, and what is
  /// stored is what was signed.
  case verified
  /// It is not verified, and why.
  case failed(VerificationFailure)

  /// Why it failed; nil when verified.
  public var failure: VerificationFailure? {
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
}

/// The signed material a store keeps beside a snapshot, and what the writer decided from it.
struct StoredTrust: Sendable, Hashable {
  var signature: ResponseSignature?
  var requestNonce: [UInt8]?
  /// The trusted server time (§5.1) the writer checked the intermediate's expiry against; nil
  /// when the writer had no trust roots and decided nothing.
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

/// The checks of DESIGN §12 as the caches apply them: once when a snapshot arrives, and again
/// from what the file holds whenever a scope is read from disk.
enum SnapshotTrust {
  /// The verdict on a snapshot arriving for `scope`, with the intermediate's expiry checked
  /// against `serverNow`, the trusted server time (§5.1).
  static func arrivalVerdict(
    _ snapshot: CustomerInfoSnapshot, for scope: CacheScope, roots: TrustRoots, serverNow: Date
  ) -> TrustVerdict {
    TrustVerdict(
      ResponseVerifier.failure(
        body: snapshot.jsonData, requestDate: snapshot.customerInfo.requestDate,
        signature: snapshot.signature, expectedNonce: snapshot.requestNonce, scope: scope,
        serverNow: serverNow, roots: roots))
  }

  /// The trusted server time a snapshot arriving is checked against: the scope's estimate
  /// from its last refresh (the server's time then plus the device time measured since, never
  /// the raw device clock, so a clock set back does not revive an expired key), or the new
  /// response's own signed `requestDate` when that is later or nothing is stored.
  static func arrivalServerTime(estimate: Date?, requestDate: Date) -> Date {
    // Kept to the millisecond, as the file keeps it, so a read decides at the same instant.
    let instant = max(estimate ?? requestDate, requestDate)
    return Date(unixMilliseconds: instant.unixMilliseconds)
  }

  /// The verdict on what the file holds for `scope`: the signature checked again over the
  /// stored body, with the nonce and the expiry instant the writer checked; when the writer
  /// had trust roots, its recorded verdict must be the same, or the row was edited.
  static func recheck(
    body: Data, requestDate: Date, stored: StoredTrust, scope: CacheScope, roots: TrustRoots
  ) -> TrustVerdict {
    let again = TrustVerdict(
      ResponseVerifier.failure(
        body: body, requestDate: requestDate, signature: stored.signature,
        expectedNonce: stored.requestNonce, scope: scope, serverNow: stored.checkedAt,
        roots: roots))
    if stored.checkedAt != nil, stored.writerVerdict != again { return .failed(.tampered) }
    return again
  }
}
