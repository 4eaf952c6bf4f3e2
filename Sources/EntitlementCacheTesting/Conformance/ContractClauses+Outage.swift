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

extension ContractContext {
  /// Storage that is there but refused answers `storageUnavailable`, never `noSnapshot`;
  /// writes throw a storage failure of kind `unavailable`; and once it is back, what was
  /// stored answers as before. Checks nothing for a contract given no ``StorageOutage``.
  func storageUnavailable() throws {
    guard let outage = storageOutage else { return }
    let run = try open()
    let granting = try ContractSnapshot.granting(
      "pro", requestDate: T.start, until: T.at(30 * T.day))
    try run.store(granting)
    let unknown = ContractScope.variants[0].scope

    outage.begin(run.cache)
    run.clock.advance(by: .seconds(T.minute))
    equal(
      run.access("pro", unknown).state, .offlineUnavailable(.storageUnavailable),
      "a scope the refused storage cannot be asked about reads storageUnavailable, never noSnapshot"
    )
    let stored = run.access("pro")
    expect(
      stored.isGranted || stored.state == .offlineUnavailable(.storageUnavailable),
      "a stored grant reads granted from memory or storageUnavailable, never \(stored.state)")
    let replacement = try ContractSnapshot.granting(
      "gold", requestDate: T.at(T.minute), until: T.at(30 * T.day))
    do {
      try run.cache.store(replacement, for: ContractScope.primary)
      expect(false, "a store while the storage is refused throws")
    } catch .storage(_, let failure) {
      equal(
        failure.kind, .unavailable, "a refused store throws a storage failure of kind unavailable")
    } catch {
      expect(false, "a refused store throws CacheError.storage, not \(error)")
    }

    outage.end(run.cache)
    // Past any back-off a cache keeps before it asks its storage again.
    run.clock.advance(by: .seconds(T.minute))
    equal(run.access("pro").state, .granted, "once the storage is back, the stored grant reads")
    equal(run.access("gold").state, .denied(.notEntitled), "and the refused store left nothing")
    equal(
      try run.load()?.snapshot?.jsonData, granting.jsonData,
      "once the storage is back, load gives the stored bytes")
    equal(
      run.access("pro", unknown).state, .offlineUnavailable(.noSnapshot),
      "once the storage is back, a scope with nothing stored reads noSnapshot")
  }
}
