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

extension StoreOutcome {
  /// The rule book of ``CustomerInfoCache/storeAnswer(_:for:)``: what storing `answer` over
  /// `stored` does. ``stored`` means it may be stored; anything else changes nothing.
  ///
  /// A cache of your own that several processes write calls this inside its own transaction,
  /// with what it read there, so that no other write lands between the decision and the
  /// store. An answer is discarded as older when the stored `requestDate` is later by at most
  /// an hour, the most a late answer to an earlier request can trail; a stored date later
  /// than that is itself wrong (dated in the future), and the answer replaces it. An answer
  /// whose body claims `failed` is refused over a verified snapshot. When the stored snapshot
  /// has a verdict (the cache has trust roots), only a verified one holds an answer back.
  public static func deciding(_ answer: CustomerInfoSnapshot, over stored: CachedCustomerInfo?)
    -> StoreOutcome
  {
    let claims = stored.flatMap { stored -> StoredAnswer? in
      guard let info = stored.snapshot?.customerInfo else { return nil }
      return StoredAnswer(
        requestDate: info.requestDate, verification: info.verification,
        isVerifiedByTrustRoots: stored.verdict == .verified)
    }
    // A cache reports a verdict only when it has trust roots.
    return ConditionalStore.refusal(
      of: answer, verdict: nil, over: claims, hasTrustRoots: stored?.verdict != nil,
      conditional: true) ?? .stored
  }
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

/// The one rule book of a conditional store: never an older answer over a newer one (unless
/// the stored date is beyond any late answer, ``lateAnswerWindow``), never a failed
/// verification over a verified snapshot. Every cache of the package decides with it,
/// inside its write.
enum ConditionalStore {
  /// How much older than the stored snapshot an answer can be and still be a late answer to
  /// an earlier request, which the stored one rightly holds back.
  ///
  /// A server produces an answer when it gets the request, and the answer is stored when it
  /// arrives: two answers reach the cache out of order only by the time one spent in flight,
  /// which the refresh client bounds with its fetch timeout (a minute by default). An answer
  /// older by more than an hour is no late answer: the stored date is what is wrong (a body
  /// dated in the future, a server clock that jumped), and holding every later answer back
  /// against it would freeze the scope for good.
  static let lateAnswerWindow: TimeInterval = 3600

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
    let lead = stored.requestDate.timeIntervalSince(answer.customerInfo.requestDate)
    if lead > 0, lead <= lateAnswerWindow { return .discardedOlder }
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
