#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension ScopeBookkeeping {
  /// `serverTime` is the snapshot's `requestDate` (<doc:Storage#Bookkeeping>), which bounds
  /// lifetime access without `verifiedAt`. Bookkeeping built by hand for a CustomerInfo held in
  /// memory may omit it; without it that access would never end.
  func withServerTime(of info: CustomerInfo) -> ScopeBookkeeping {
    guard serverTime == nil else { return self }
    var filled = self
    filled.serverTime = info.requestDate
    return filled
  }

  /// The verification a decision shows for `snapshot`: the library's verdict or the body's
  /// claim, except for an import, which is never verified whatever either says (the previous
  /// cache's bytes carry no signature this library checked): `not_requested`, or `failed` when
  /// the library found its rows edited.
  func trustedVerification(_ snapshot: SnapshotFacts) -> OpenEnum<VerificationStatus> {
    guard origin.importedAt != nil else { return snapshot.verification }
    return trustedVerificationFailure(snapshot) == nil ? .known(.notRequested) : .known(.failed)
  }

  /// Why the library decided `failed`, as ``trustedVerification(_:)`` shows it: for an import,
  /// only tampering, which is the library's own finding, never a body's claim.
  func trustedVerificationFailure(_ snapshot: SnapshotFacts) -> VerificationFailure? {
    guard origin.importedAt != nil else { return snapshot.verificationFailure }
    return snapshot.verificationFailure == .tampered ? .tampered : nil
  }
}
