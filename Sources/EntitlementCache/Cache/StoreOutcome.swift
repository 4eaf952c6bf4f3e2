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
  /// backwards, so nothing changed. (A stored date more than a day ahead of both the answer
  /// and the device's clock holds nothing back: see ``deciding(_:over:at:)``.)
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
  /// store.
  ///
  /// - An answer whose `requestDate` is older than the stored snapshot's is discarded, unless
  ///   the stored date is more than a day ahead of both the answer and `now`: no server gave
  ///   that date (a body dated in the future, a server clock that jumped), and holding every
  ///   later answer back against it would freeze the scope for good.
  /// - An unsigned answer whose body claims `failed` is refused over a verified snapshot. A
  ///   signed one is for trust roots to judge: a cache of your own that has them verifies the
  ///   answer itself before it stores.
  /// - When the stored snapshot has a verdict (the cache has trust roots), only a verified one
  ///   holds an answer back.
  ///
  /// - Parameters:
  ///   - answer: The server's answer.
  ///   - stored: What the scope holds, read in the transaction that will store.
  ///   - now: The device's time now, by the cache's clock.
  public static func deciding(
    _ answer: CustomerInfoSnapshot, over stored: CachedCustomerInfo?, at now: Date
  ) -> StoreOutcome {
    let claims = stored.flatMap { stored -> StoredAnswer? in
      guard let info = stored.snapshot?.customerInfo else { return nil }
      return StoredAnswer(
        requestDate: info.requestDate, claimed: info.verification, writerVerdict: stored.verdict,
        isImported: stored.bookkeeping.origin.importedAt != nil)
    }
    // A cache reports a verdict only when it has trust roots.
    return ConditionalStore.refusal(
      of: answer, verdict: nil, over: claims, hasTrustRoots: stored?.verdict != nil,
      conditional: true, now: now) ?? .stored
  }
}
