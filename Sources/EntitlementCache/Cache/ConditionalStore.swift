#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What ``CustomerInfoCache/storeAnswer(_:for:)`` did with a server's answer.
public enum StoreOutcome: Sendable, Hashable {
  /// The answer is now the scope's snapshot.
  case stored
  /// The stored snapshot's `requestDate` is later: storing the answer would take the scope
  /// backwards, so nothing changed.
  case discardedOlder
  /// The answer failed verification and the stored snapshot is verified: nothing changed.
  /// The reason is the library's when the cache has trust roots; nil when the answer's body
  /// claims `failed` itself.
  case refusedUnverified(VerificationFailure?)
}

/// What a conditional store compares an answer with: the stored snapshot's claims, read in
/// the same transaction (or under the same lock) as the write they decide.
struct StoredAnswer: Sendable {
  /// The stored snapshot's `requestDate`.
  var requestDate: Date
  /// The stored snapshot's verification status, as the cache records it.
  var verification: OpenEnum<VerificationStatus>
  /// Whether the library itself verified the stored snapshot (with trust roots).
  var isVerifiedByTrustRoots: Bool
}

/// The one rule book of a conditional store: never an older answer over a newer one, never a
/// failed verification over a verified snapshot. Every cache of the package decides with it,
/// inside its write.
enum ConditionalStore {
  /// Why `answer`, whose verdict with trust roots is `verdict`, must not replace `stored`; nil
  /// when it may. A plain store (`conditional` false) applies only "a failed verification never
  /// replaces a verified snapshot" as the trust roots decide it.
  static func refusal(
    of answer: CustomerInfoSnapshot, verdict: TrustVerdict?, over stored: StoredAnswer?,
    hasTrustRoots: Bool, conditional: Bool
  ) -> StoreOutcome? {
    guard let stored else { return nil }
    if let failure = verdict?.failure, stored.isVerifiedByTrustRoots {
      return .refusedUnverified(failure)
    }
    // With trust roots only a verified snapshot holds a later answer back, so a failed one (a
    // forged answer dated in the future, say) cannot keep every genuine answer out.
    guard conditional, !hasTrustRoots || stored.isVerifiedByTrustRoots else { return nil }
    if answer.customerInfo.requestDate < stored.requestDate { return .discardedOlder }
    // Without trust roots only the bodies' claims can be compared, and only for an answer
    // that came unsigned: a signed one is the trust roots' to judge.
    let storedIsVerified =
      stored.verification == .known(.verified) || stored.verification == .known(.verifiedOnDevice)
    if verdict == nil, answer.signature == nil,
      answer.customerInfo.verification == .known(.failed), storedIsVerified
    {
      return .refusedUnverified(nil)
    }
    return nil
  }
}
