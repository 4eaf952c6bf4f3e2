// The article on adopting the cache (AdoptingOnAnInstalledBase.md) shows the code between the
// two markers below, byte for byte (RevenueCatAdoptionExampleTests checks it), so the example
// always compiles and does what the article says.

// AdoptingOnAnInstalledBase.md, RevenueCat: begin
import EntitlementCache
import EntitlementCacheImport
import Foundation

/// Imports the subscriber response a RevenueCat-based SDK cached, as of when it cached it.
func importRevenueCatCache(
  _ body: Data, savedAt: Date?, into cache: some CustomerInfoImporting, for scope: CacheScope
) throws -> ImportOutcome {
  let snapshot = try RevenueCatV1.snapshot(
    fromSubscriberResponse: body, environment: scope.environment)
  return try cache.importSnapshot(
    SnapshotImport(snapshot: snapshot, savedAt: savedAt, label: RevenueCatV1.label), for: scope)
}
// AdoptingOnAnInstalledBase.md, RevenueCat: end
