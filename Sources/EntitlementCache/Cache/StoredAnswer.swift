#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a conditional store compares an answer with: the stored snapshot's claims, read in
/// the same transaction (or under the same lock) as the write they decide.
struct StoredAnswer: Sendable {
  /// The stored snapshot's `requestDate`.
  var requestDate: Date
  /// The stored snapshot's verification status, as the rule book takes it.
  var verification: OpenEnum<VerificationStatus>
  /// Whether the library itself verified the stored snapshot (with trust roots).
  var isVerifiedByTrustRoots: Bool

  /// The claims of a stored snapshot: the one answer, for both caches, a move between files
  /// and ``StoreOutcome/deciding(_:over:at:)``, to "is the stored snapshot verified?".
  ///
  /// An import is never verified, whatever its body claims or a verdict says: any answer may
  /// replace it. Otherwise only the verdict of a writer with trust roots makes it verified by
  /// them; the body's claim is what the rule book compares without trust roots.
  ///
  /// - Parameters:
  ///   - claimed: The verification the stored body claims.
  ///   - writerVerdict: The verdict a writer with trust roots recorded, or a check from disk
  ///     found; nil when none decided.
  ///   - isImported: The snapshot was imported (``SnapshotOrigin/imported(label:importedAt:)``).
  init(
    requestDate: Date, claimed: OpenEnum<VerificationStatus>, writerVerdict: TrustVerdict?,
    isImported: Bool
  ) {
    self.requestDate = requestDate
    verification = isImported ? .known(.notRequested) : claimed
    isVerifiedByTrustRoots = !isImported && writerVerdict == .verified
  }
}
