import EntitlementCache
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension ContractContext {
  /// An import stores a previous cache's snapshot as of its save, only into an empty scope,
  /// never verified, never lowering the mark a failed refresh left; the first answer replaces
  /// it. Checks nothing for a cache that does not
  /// adopt `CustomerInfoImporting`.
  func importAsOfTheSave() throws {
    // The device launches 10 days after the previous cache saved its snapshot.
    let launch = T.at(10 * T.day)
    let run = try open(at: launch)
    guard let cache = run.cache as? any CustomerInfoImporting else { return }
    let previous = try ContractSnapshot.make(
      requestDate: T.start,
      entitlements: [
        ContractEntitlement(
          key: "pro", status: "active", expiresAt: T.at(7 * T.day), verifiedAt: T.start),
        ContractEntitlement(
          key: "gold", status: "active", expiresAt: T.at(30 * T.day), verifiedAt: T.start),
      ])
    let request = SnapshotImport(snapshot: previous, savedAt: T.start, label: "contract-blob")
    equal(
      try cache.importSnapshot(request, for: ContractScope.primary), .imported,
      "an import into an empty scope is imported")
    equal(
      run.access("pro").state, .denied(.expired),
      "access that lapsed between the save and now is denied: the time since counts")
    let gold = run.access("gold")
    equal(gold.state, .granted, "access still valid at the import grants")
    expect(!gold.isHighTrust, "an import never decides with high trust, whatever its body says")
    equal(
      gold.evidence.verification, .known(.notRequested),
      "an import reads not_requested, whatever its body says")
    equal(
      gold.evidence.origin, .imported(label: "contract-blob", importedAt: launch),
      "the evidence says it was imported, with the label and the time of the import")
    let loaded = try require(try run.load(), "load gives the imported snapshot")
    equal(loaded.snapshot?.jsonData, previous.jsonData, "the import keeps the bytes")
    equal(loaded.bookkeeping.storedAt, T.start, "stored as of the save")
    equal(
      loaded.bookkeeping.deviceHighWaterMark, launch, "the import is a write now: the mark is now")

    let again = try ContractSnapshot.granting("pro", requestDate: T.start, until: T.at(T.day * 60))
    equal(
      try cache.importSnapshot(
        SnapshotImport(snapshot: again, savedAt: T.start, label: "other"),
        for: ContractScope.primary),
      .scopeAlreadyFilled, "a second import into a filled scope is refused as filled")
    equal(try run.load(), loaded, "and changes nothing")

    let other = ContractScope.variants[0].scope
    equal(
      try cache.importSnapshot(
        SnapshotImport(snapshot: again, savedAt: launch.addingTimeInterval(T.day), label: "x"),
        for: other),
      .refused(.savedAfterNow), "a save a day ahead of the device's clock is refused")
    equal(try run.load(other), nil, "and stores nothing")

    // A failed refresh a day after the launch left the scope a mark and no snapshot; then the
    // device's clock is set back to the launch. The import is a write: it keeps that mark.
    let failed = ContractScope.variants[1].scope
    run.clock.set(launch.addingTimeInterval(T.day))
    try run.fail(failed)
    run.clock.set(launch)
    equal(
      try cache.importSnapshot(
        SnapshotImport(snapshot: previous, savedAt: T.start, label: "contract-blob"), for: failed),
      .imported, "an import into a scope that holds only a failed refresh is imported")
    equal(
      try run.load(failed)?.bookkeeping.deviceHighWaterMark, launch.addingTimeInterval(T.day),
      "an import over a failed refresh keeps the mark it left: a clock set back gains nothing")
    run.clock.set(launch)

    let answer = try ContractSnapshot.make(
      requestDate: launch, verification: "failed",
      entitlements: [
        ContractEntitlement(
          key: "gold", status: "active", expiresAt: T.at(40 * T.day), verifiedAt: launch)
      ])
    equal(
      try cache.storeAnswer(answer, for: ContractScope.primary), .stored,
      "the first answer replaces an import, even one whose body says failed: it was never verified")
    equal(run.access("gold").evidence.origin, .refresh, "after which the origin is a refresh")
  }
}
