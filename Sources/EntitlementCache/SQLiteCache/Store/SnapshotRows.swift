#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What one write of a snapshot puts in the file: the scope row and the entitlement rows. A
/// refresh and an import write the same rows and differ only in the times and the origin.
struct SnapshotRows {
  var snapshot: CustomerInfoSnapshot
  var digest: [UInt8]
  var entitlements: [String: EntitlementFacts]
  var facts: SnapshotFacts
  var trust: StoredTrust
  var deviceBlock: String?
  /// The write's device time: the reset high-water mark and a use; a refresh's is also the
  /// time it is stored at.
  var writtenAt: Date
  var boot: BootInstant?
  /// An import's save time and origin; nil for a refresh.
  var imported: (savedAt: Date, origin: SnapshotOrigin)? = nil
}
