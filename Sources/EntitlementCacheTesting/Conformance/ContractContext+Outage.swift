import EntitlementCache
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

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
