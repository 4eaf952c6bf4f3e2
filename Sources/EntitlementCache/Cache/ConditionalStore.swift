#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The one rule book of a conditional store: never an older answer over a newer one (unless
/// the stored date is one no server gave, ``implausibleLead``), never a failed verification
/// over a verified snapshot. Every cache of the package decides with it,
/// inside its write.
enum ConditionalStore {
  /// How far ahead of both an answer and the device's clock a stored `requestDate` must be
  /// before it is taken for wrong rather than for newer.
  ///
  /// An answer older than the stored one is normally a late answer to an earlier request, or
  /// an old one replayed, and must not take the scope back, however old it is. A stored date
  /// ahead of the device's clock is normal too, when that clock is slow. Ahead of both by more
  /// than a day, it is no date a server gave: a body dated in the future, a server clock that
  /// jumped. Honouring it would keep every genuine answer out for good.
  static let implausibleLead: TimeInterval = 86_400

  /// Why `answer`, whose verdict with trust roots is `verdict`, must not replace `stored`; nil
  /// when it may. A plain store (`conditional` false) applies only "a failed verification never
  /// replaces a verified snapshot" as the trust roots decide it.
  static func refusal(
    of answer: CustomerInfoSnapshot, verdict: TrustVerdict?, over stored: StoredAnswer?,
    hasTrustRoots: Bool, conditional: Bool, now: Date
  ) -> StoreOutcome? {
    refusal(
      of: AnswerClaims(
        requestDate: answer.customerInfo.requestDate,
        verification: answer.customerInfo.verification, isSigned: answer.signature != nil),
      verdict: verdict, over: stored, hasTrustRoots: hasTrustRoots, conditional: conditional,
      now: now)
  }

  /// What the rule book reads of an answer: a snapshot moved from another file is judged by
  /// its row, without its body.
  struct AnswerClaims {
    var requestDate: Date
    var verification: OpenEnum<VerificationStatus>
    var isSigned: Bool
  }

  /// The rule book of a move (``SQLiteCustomerInfoCache/relocate(from:)``): whether the moving
  /// file's snapshot replaces the one this file stores for the same scope. Unlike an answer,
  /// both are stored snapshots, and they are judged alike:
  ///
  /// - With trust roots, a verified snapshot (checked again from its file) is kept over one
  ///   that is not, whatever their dates: a file's unsigned rows could have been planted.
  /// - Without them, a snapshot whose body claims `failed` never replaces one whose body
  ///   claims verification, as ``refusal(of:verdict:over:hasTrustRoots:conditional:now:)``
  ///   refuses such an answer.
  /// - Otherwise the later `requestDate` wins, and a tie keeps what this file holds; a date
  ///   more than ``implausibleLead`` ahead of both the other and `now` is no date a server
  ///   gave, and loses.
  static func moveReplaces(
    _ stored: StoredAnswer, with moving: StoredAnswer, hasTrustRoots: Bool, now: Date
  ) -> Bool {
    if hasTrustRoots, moving.isVerifiedByTrustRoots != stored.isVerifiedByTrustRoots {
      return moving.isVerifiedByTrustRoots
    }
    func claimsVerified(_ answer: StoredAnswer) -> Bool {
      answer.verification == .known(.verified) || answer.verification == .known(.verifiedOnDevice)
    }
    if !hasTrustRoots, moving.verification == .known(.failed), claimsVerified(stored) {
      return false
    }
    let (earlier, later) = (
      min(moving.requestDate, stored.requestDate), max(moving.requestDate, stored.requestDate)
    )
    let laterIsPlausible = later.timeIntervalSince(max(earlier, now)) <= implausibleLead
    guard moving.requestDate != stored.requestDate else { return false }
    return (moving.requestDate == later) == laterIsPlausible
  }

  /// The rule book over an answer's claims.
  static func refusal(
    of answer: AnswerClaims, verdict: TrustVerdict?, over stored: StoredAnswer?,
    hasTrustRoots: Bool, conditional: Bool, now: Date
  ) -> StoreOutcome? {
    guard let stored else { return nil }
    if let failure = verdict?.failure, stored.isVerifiedByTrustRoots {
      return .refusedUnverified(failure)
    }
    // With trust roots only a verified snapshot holds a later answer back, so a failed one (a
    // forged answer dated in the future, say) cannot keep every genuine answer out.
    guard conditional, !hasTrustRoots || stored.isVerifiedByTrustRoots else { return nil }
    let answered = answer.requestDate
    if answered < stored.requestDate,
      stored.requestDate.timeIntervalSince(max(answered, now)) <= implausibleLead
    {
      return .discardedOlder
    }
    // Without trust roots only the bodies' claims can be compared, and only for an answer
    // that came unsigned: a signed one is the trust roots' to judge.
    let storedIsVerified =
      stored.verification == .known(.verified) || stored.verification == .known(.verifiedOnDevice)
    if verdict == nil, !answer.isSigned, answer.verification == .known(.failed), storedIsVerified {
      return .refusedUnverified(nil)
    }
    return nil
  }
}
