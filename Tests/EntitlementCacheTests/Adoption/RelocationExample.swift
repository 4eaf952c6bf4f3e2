// The article on adopting the cache (<doc:AdoptingOnAnInstalledBase>) shows the code between
// the two markers below, byte for byte (RelocationExampleTests checks it), so the example
// always compiles and does what the article says.

// AdoptingOnAnInstalledBase.md, moving the file: begin
import EntitlementCache
import Foundation

/// Opens the cache in the App Group container the app shares with its widget, moving the
/// app's own file there first. Run at every launch, before anything opens the old path: once
/// the old file is gone, the move costs one `stat`.
func openSharedCache(
  in container: URL, movingFrom previousFile: URL,
  configuration: CacheConfiguration = CacheConfiguration(), clock: CacheClock = .system
) throws -> SQLiteCustomerInfoCache {
  let cache = try SQLiteCustomerInfoCache(
    path: container.appendingPathComponent("entitlements.sqlite").path,
    configuration: configuration, clock: clock)
  do {
    switch try cache.relocate(from: previousFile.path) {
    case .nothingToMove, .moved:
      break
    case .mergedNotRemoved:
      // Something still has the old file open: its content is merged, and the next launch
      // removes it.
      break
    }
  } catch {
    // The old file stays where it is (damaged, from a newer version of the app, or not
    // readable before the first unlock), and the shared file answers meanwhile. The next
    // launch tries again.
    print("cache not moved yet: \(error)")
  }
  return cache
}
// AdoptingOnAnInstalledBase.md, moving the file: end
