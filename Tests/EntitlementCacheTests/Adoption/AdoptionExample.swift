// The article on adopting the cache (<doc:AdoptingOnAnInstalledBase>) shows the code between
// the two markers below, byte for byte (AdoptionExampleTests checks it), so the example always
// compiles and does what the article says.

// AdoptingOnAnInstalledBase.md: begin
import EntitlementCache
import Foundation

/// What the SDK's previous version kept: the last CustomerInfo's JSON, and when it saved it.
struct PreviousCache {
  var body: Data?
  var savedAt: Date?
}

/// At the first launch after the upgrade, before the client starts: hands the previous
/// cache's snapshot to the new one as of its save, then forgets it. Safe at every launch.
func adoptPreviousCache(
  _ previous: inout PreviousCache, into cache: some CustomerInfoImporting, for scope: CacheScope
) throws {
  guard let body = previous.body else { return }
  let request = SnapshotImport(
    snapshot: try CustomerInfoSnapshot(jsonData: body), savedAt: previous.savedAt,
    label: "previous-json-cache")
  switch try cache.importSnapshot(request, for: scope) {
  case .imported, .scopeAlreadyFilled:
    previous.body = nil  // The new cache holds it, or something newer.
  case .refused(let reason):
    // A save time ahead of the device's clock: a clock set back since the save would
    // re-grant what lapsed. Nothing is kept; the first refresh brings the truth.
    previous.body = nil
    print("previous cache not imported: \(reason)")
  }
}
// AdoptingOnAnInstalledBase.md: end
