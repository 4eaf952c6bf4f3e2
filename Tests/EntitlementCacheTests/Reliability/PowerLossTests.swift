import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// SQLite's crash tests, for every write: the power is cut at each sync the write and the
/// following close make, in turn, and the writes not yet synced are dropped, kept, or torn.
/// The file then reopens intact holding the state before the write or after it, and with
/// `durability = .full` never loses a write that returned (<doc:Reliability>).
@Suite("Power loss: every write, cut at each sync point")
struct PowerLossTests {
  /// What a cut does to the unsynced writes; tears with three seeds.
  static let cuts: [(TestVFS.PowerCut, UInt32)] = [
    (.dropAll, 0), (.keepAll, 0), (.tear, 1), (.tear, 2), (.tear, 3),
  ]

  /// The writes that change the file from a new instance (a flush of read marks has nothing
  /// to write there, and only ever holds hints).
  static let writes = SweptWrite.selected.filter(\.writesFromNewInstance)

  @Test(
    "the file reopens intact with the old or the new state, and a full-durability commit that returned survives",
    arguments: writes, [CacheConfiguration.Durability.normal, .full])
  func cutAtEachSync(_ write: SweptWrite, _ durability: CacheConfiguration.Durability) throws {
    let reference = try PowerLossReference(write, durability: durability)
    #expect(reference.before != reference.after, "\(write) changes nothing")
    var cases = 0
    var kept = (old: 0, new: 0)
    for (cut, seed) in Self.cuts {
      // n = 0 cuts the power right after the write returns; n ≥ 1 just before the n-th sync
      // of the write and the close after it. The last n is the one no sync reached.
      for n in 0... {
        cases += 1
        let context = "\(write), durability \(durability), \(cut) (seed \(seed)), sync \(n)"
        let run = try PowerLossRun(reference)
        let outcome = try run.perform(cuttingAtSync: n, cut, seed: seed)
        let reopened = try run.reopen(context: context)
        switch reopened {
        case .old: kept.old += 1
        case .new: kept.new += 1
        }
        if durability == .full, outcome.writeReturned {
          #expect(reopened == .new, "a commit that returned was lost: \(context)")
        }
        if !outcome.powerWasCut { break }
        #expect(n < 200, "\(context): syncs never end")
      }
    }
    #expect(kept.new > 0, "\(write), \(durability): no run kept the new state")
    print(
      "power loss: \(write), durability \(durability): \(cases) cuts, "
        + "\(kept.old) reopened old, \(kept.new) new")
  }
}

/// The states one write may leave after a power cut, made with no cut: the file before and
/// after, and what a new instance reads of each.
struct PowerLossReference {
  let write: SweptWrite
  let durability: CacheConfiguration.Durability
  let directory: TemporaryDirectory
  /// The file as the prepared state left it, synced.
  let preparedPath: String
  let before: DatabaseFingerprint
  let after: DatabaseFingerprint
  let beforeReads: ObservedState
  let afterReads: ObservedState
  /// How far the prepare moved the clock.
  let elapsedInPrepare: TimeInterval

  init(_ write: SweptWrite, durability: CacheConfiguration.Durability) throws {
    self.write = write
    self.durability = durability
    directory = try TemporaryDirectory()
    preparedPath = directory.path("prepared.sqlite")
    try FileManager.default.copyItem(atPath: try EmptyDatabase.path(), toPath: preparedPath)
    let clock = ManualClock(SweptWrite.start, bootSession: "boot-1")
    let configuration = try Self.configuration(write, durability, vfs: nil)
    let preparing = try SQLiteCustomerInfoCache(
      path: preparedPath, configuration: configuration, clock: clock.cacheClock)
    try write.prepare(preparing, clock)
    elapsedInPrepare = clock.now.timeIntervalSince(SweptWrite.start)
    // The last close checkpoints and syncs: what the write starts from is on the disk.
    try preparing.close()
    before = try DatabaseFingerprint.read(preparedPath)
    beforeReads = try Self.reads(preparedPath, write, durability)

    let afterPath = directory.path("after.sqlite")
    try FileManager.default.copyItem(atPath: preparedPath, toPath: afterPath)
    let writeClock = ManualClock(SweptWrite.start, bootSession: "boot-1")
    writeClock.advance(by: .seconds(elapsedInPrepare))
    let writing = try SQLiteCustomerInfoCache(
      path: afterPath, configuration: configuration, clock: writeClock.cacheClock)
    try write.perform(writing, writeClock)
    try writing.close()
    after = try DatabaseFingerprint.read(afterPath)
    afterReads = try Self.reads(afterPath, write, durability)
  }

  /// A clock where the prepared state left it: every run of the write starts at one instant.
  func writeClock() -> ManualClock {
    let clock = ManualClock(SweptWrite.start, bootSession: "boot-1")
    clock.advance(by: .seconds(elapsedInPrepare))
    return clock
  }

  static func configuration(
    _ write: SweptWrite, _ durability: CacheConfiguration.Durability, vfs: TestVFS?
  ) throws -> CacheConfiguration {
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    configuration.durability = durability
    configuration.vfsName = vfs?.name
    if write.trusted { configuration.trustRoots = try TestSigner.roots() }
    return configuration
  }

  /// What a new instance that writes nothing reads of the file at `path`.
  static func reads(
    _ path: String, _ write: SweptWrite, _ durability: CacheConfiguration.Durability
  ) throws -> ObservedState {
    var configuration = try configuration(write, durability, vfs: nil)
    configuration.persistsReadTimeBookkeeping = false
    let clock = ManualClock(SweptWrite.start, bootSession: "boot-1")
    return ObservedState(
      try SQLiteCustomerInfoCache(path: path, configuration: configuration, clock: clock.cacheClock)
    )
  }
}

/// One write on a copy of the prepared file through a VFS whose power is cut.
struct PowerLossRun {
  let reference: PowerLossReference
  let directory: TemporaryDirectory
  let path: String

  enum Reopened: Equatable { case old, new }

  struct Outcome {
    /// Whether the write returned (without error) before the power went.
    var writeReturned: Bool
    /// Whether the cut happened: false when the write and its close made fewer syncs.
    var powerWasCut: Bool
  }

  init(_ reference: PowerLossReference) throws {
    self.reference = reference
    directory = try TemporaryDirectory()
    path = directory.path("cache.sqlite")
    try FileManager.default.copyItem(atPath: reference.preparedPath, toPath: path)
  }

  func perform(cuttingAtSync n: Int, _ cut: TestVFS.PowerCut, seed: UInt32) throws -> Outcome {
    let vfs = try TestVFS()
    let write = reference.write
    let clock = reference.writeClock()
    let cache = try SQLiteCustomerInfoCache(
      path: path,
      configuration: PowerLossReference.configuration(write, reference.durability, vfs: vfs),
      clock: clock.cacheClock)
    if n > 0 { vfs.armPowerCut(atSync: n, cut, seed: seed) }
    let returned = (try? write.perform(cache, clock)) != nil
    if n == 0 { try vfs.cutPower(cut, seed: seed) }
    // The close checkpoints, with its syncs; after a cut it fails, and closes all the same.
    try? cache.close()
    return Outcome(writeReturned: returned, powerWasCut: vfs.isDead)
  }

  /// Reopens the file through the default VFS, as the app does after the power comes back,
  /// and says which state it holds.
  func reopen(context: String) throws -> Reopened {
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    let companions = ["cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"]
    #expect(names.allSatisfy { companions.contains($0) }, "left behind: \(context): \(names)")
    var configuration = try PowerLossReference.configuration(
      reference.write, reference.durability, vfs: nil)
    configuration.persistsReadTimeBookkeeping = false
    let clock = ManualClock(SweptWrite.start, bootSession: "boot-1")
    let reopened = try SQLiteCustomerInfoCache(
      path: path, configuration: configuration, clock: clock.cacheClock)
    #expect(reopened.damageReport == nil, "reopened as damaged: \(context)")
    let reads = ObservedState(reopened)
    let file = try DatabaseFingerprint.read(path)
    if file == reference.after {
      #expect(reads == reference.afterReads, "the new state reads otherwise: \(context)")
      return .new
    }
    #expect(
      file == reference.before,
      "neither the old nor the new state: \(context): \(file.difference(from: reference.before))")
    #expect(reads == reference.beforeReads, "the old state reads otherwise: \(context)")
    return .old
  }
}
