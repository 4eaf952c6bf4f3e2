import EntitlementCache
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// How the kit takes a cache's storage away and gives it back, for
/// ``CustomerInfoCacheContract/Clause/storageUnavailable``: a cache of your own whose storage
/// can be refused (a file protected until the device's first unlock, a keychain item, a
/// database another process holds) gives the kit the switch its own tests use.
public struct StorageOutage: Sendable {
  /// Makes the storage of the cache given refuse every open, read and write from now on, as
  /// a protected file does while the device is locked. What the cache holds in memory may
  /// still answer, but a scope it has not read since it opened must not read as empty: a cache
  /// that loads all of its storage into memory when it opens cannot meet an outage after
  /// that, so make `begin` drop what memory holds too, or give the kit no outage.
  public var begin: @Sendable (any CustomerInfoCache) -> Void
  /// Gives the storage back: what was stored is there again, untouched. The kit reads again
  /// at once (a minute later by the cache's clock): call here whatever your cache needs to
  /// try its storage again, as an app calls
  /// `SQLiteCustomerInfoCache.protectedDataDidBecomeAvailable()` when the device unlocks.
  public var end: @Sendable (any CustomerInfoCache) -> Void

  /// A switch that calls `begin` to refuse the storage and `end` to give it back.
  public init(
    begin: @escaping @Sendable (any CustomerInfoCache) -> Void,
    end: @escaping @Sendable (any CustomerInfoCache) -> Void
  ) {
    self.begin = begin
    self.end = end
  }
}
