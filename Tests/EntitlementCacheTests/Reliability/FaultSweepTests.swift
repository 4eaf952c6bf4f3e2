import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// SQLite's own way of testing I/O errors (src/test_vfs.c, test/malloc_common.tcl): one
/// operation run again and again with the k-th call of one kind failing, k = 1, 2, ... until it
/// runs to the end without meeting the fault. What it shows: <doc:Reliability>.
@Suite("Fault injection: every write, with each I/O call failing in turn")
struct FaultSweepTests {
  /// One injected failure: an I/O call of one kind or an allocation, with which code, and
  /// whether every later one fails too.
  struct Fault: CustomStringConvertible, Sendable {
    /// A VFS call; nil for an allocation.
    let call: TestVFS.Call?
    var code: Int32?
    var persistent = false

    var description: String {
      let site = call.map { "\($0)" } ?? "allocation"
      return
        "\(site)\(code == SQLITE_FULL ? " (disk full)" : "")\(persistent ? ", persistent" : "")"
    }

    /// Arms the fault at the `k`-th call from now.
    func arm(_ vfs: TestVFS, at k: Int) {
      if let call {
        vfs.armFault(call, at: k, code: code, persistent: persistent)
      } else {
        FailingAllocator.arm(at: k, persistent: persistent)
      }
    }

    /// Disarms it and says how many calls it failed.
    func disarm(_ vfs: TestVFS) -> Int {
      let injected = vfs.faultsInjected + FailingAllocator.faultsInjected
      vfs.disarm()
      FailingAllocator.disarm()
      return injected
    }
  }

  /// Every call kind with its own error code; writes also as a full disk, once and for good;
  /// the calls a write
  /// cannot do without also failing for good; running out of memory at each allocation.
  static let faults: [Fault] =
    TestVFS.Call.allCases.map { Fault(call: $0) } + [
      Fault(call: .write, code: SQLITE_FULL),
      Fault(call: .write, code: SQLITE_FULL, persistent: true),
      Fault(call: .write, persistent: true),
      Fault(call: .sync, persistent: true),
      Fault(call: .read, persistent: true),
      Fault(call: nil),
      Fault(call: nil, persistent: true),
    ]

  /// A k no write reaches: the sweep of one fault stops when a run meets no fault.
  static let largestK = 1_000_000

  /// `ENTITLEMENT_CACHE_SWEEP`: `full`, `sampled` or unset.
  static let setting = ProcessInfo.processInfo.environment["ENTITLEMENT_CACHE_SWEEP"]
  /// `ENTITLEMENT_CACHE_SWEEP_ONLY`: sweep only the writes and opens whose name contains it.
  static let only = ProcessInfo.processInfo.environment["ENTITLEMENT_CACHE_SWEEP_ONLY"]

  /// Which k of an allocation fault the sweeps run; every k of every I/O fault always runs.
  ///
  /// `ENTITLEMENT_CACHE_SWEEP=full` runs every k of everything (<doc:Reliability> gives its figures).
  /// By default a write's every third allocation fails, and an open's every 101st (the
  /// migrations make some 20,000); `sampled`, for the sanitizer runs in CI, takes every 17th
  /// and every 499th, and only the warm instance (``sweptModes``). Each k is still a whole
  /// run, checked in full.
  static let allocationStride: (write: Int, open: Int) =
    switch setting {
    case "full": (1, 1)
    case "sampled": (17, 499)
    default: (3, 101)
    }

  /// The sanitizer runs in CI sweep only the warm instance: the sweep is single-threaded, so
  /// Thread Sanitizer has nothing in it to check, and the run without a sanitizer sweeps every
  /// mode.
  static let sweptModes: [FaultSweepRun.Mode] =
    setting == "sampled" ? [.warm] : FaultSweepRun.Mode.allCases

  /// The k of `fault` a sweep runs.
  static func steps(_ fault: Fault, open: Bool) -> StrideTo<Int> {
    let step = fault.call != nil ? 1 : open ? allocationStride.open : allocationStride.write
    return stride(from: 1, to: largestK, by: step)
  }

  @Test(
    "each write fails with a typed error and changes nothing, or completes",
    arguments: SweptWrite.selected, FaultSweepTests.sweptModes)
  func sweep(_ write: SweptWrite, _ mode: FaultSweepRun.Mode) throws {
    try #require(FailingAllocator.isInstalled)
    let vfs = try TestVFS()
    let expected = try FaultSweepRun(write, mode, vfs: vfs).states()
    if mode == .cold, !write.writesFromNewInstance {
      #expect(expected.before.file == expected.after.file, "\(write) wrote with nothing to write")
    } else {
      // A write that changes nothing could not show a partial change.
      #expect(expected.before.file != expected.after.file, "\(write) changes nothing")
    }

    var cases = 0
    var failures = 0
    // Allocations are the same in every mode: swept once, on the warm instance.
    for fault in Self.faults where fault.call != nil || mode == .warm {
      for k in Self.steps(fault, open: false) {
        cases += 1
        let run = try FaultSweepRun(write, mode, vfs: vfs)
        let outcome = try run.perform(failing: fault, at: k)
        let context = "\(write) (\(mode)), fault: \(fault) at call \(k)"
        switch outcome.result {
        case .failure(let error):
          failures += 1
          #expect(outcome.injected > 0, "failed with no fault injected: \(context): \(error)")
          #expect(!error.isDamage, "a fault read as damage: \(context): \(error)")
          if fault.code == SQLITE_FULL, case .storage(_, let failure) = error {
            #expect(failure.kind == .full, "a full disk not said to be full: \(context): \(error)")
          }
          try run.expect(expected.before, context: "\(context), after \(error)")
          // The same instance then makes the write it could not make.
          #expect(throws: Never.self, "retry: \(context)") { try run.perform() }
          try run.expect(expected.after, context: "\(context), retried")
        case .success:
          try run.expect(expected.after, context: context)
        }
        try run.expectFollowingWriteSucceeds(context: context)
        if outcome.injected == 0, case .success = outcome.result { break }
        #expect(k + 1_000 < Self.largestK, "\(context): still meets the fault")
      }
    }
    if mode == .cold, !write.writesFromNewInstance {
      // Nothing to write opens no transaction, so no I/O fault can fail it.
      #expect(failures == 0, "\(write) (\(mode)): wrote with nothing to write")
    } else {
      // A sweep that never saw a write fail would prove nothing.
      #expect(failures > 0, "\(write) (\(mode)): no fault made it fail")
    }
    FaultSweepTally.shared.add("\(write) (\(mode))", cases: cases, failures: failures)
  }
}

extension FaultSweepTests {
  /// The files an open starts from.
  enum OpenStart: CaseIterable, CustomStringConvertible, Sendable {
    /// No file: the open creates it and runs every migration.
    case noFile
    /// A file of schema version 4 holding two snapshots: the open runs migrations 5 and 6 over
    /// them, 6 building the scope and entitlement tables again.
    case version4
    /// A current file: the open only reads and prunes.
    case current

    /// Every start, or those whose sweep name (`open a version 4 file`) contains
    /// `ENTITLEMENT_CACHE_SWEEP_ONLY`, as the writes are chosen (``SweptWrite/selected``).
    static var selected: [OpenStart] {
      guard let only = FaultSweepTests.only else { return allCases }
      return allCases.filter { "open \($0)".contains(only) }
    }

    var description: String {
      switch self {
      case .noFile: "no file"
      case .version4: "a version 4 file"
      case .current: "a current file"
      }
    }
  }

  @Test(
    "opening, and each migration step, fail typed and leave a file the next open completes",
    arguments: OpenStart.selected)
  func openSweep(_ start: OpenStart) throws {
    try #require(FailingAllocator.isInstalled)
    let vfs = try TestVFS()
    let references = try Self.fingerprints(start)
    let latest = try #require(references[SQLiteCustomerInfoCache.supportedSchemaVersion])
    var cases = 0
    var failures = 0
    for fault in Self.faults {
      for k in Self.steps(fault, open: true) {
        cases += 1
        let context = "open of \(start), fault: \(fault) at call \(k)"
        let directory = try TemporaryDirectory()
        let path = directory.path("cache.sqlite")
        try Self.make(start, at: path)
        var configuration = CacheConfiguration()
        configuration.vfsName = vfs.name
        let clock = ManualClock(SweptWrite.start, bootSession: "boot-1")
        fault.arm(vfs, at: k)
        // Whether the cache opened waiting for its file (a refused open or read of it).
        let result = Result { () throws(CacheError) -> Bool in
          let cache = try SQLiteCustomerInfoCache(
            path: path, configuration: configuration, clock: clock.cacheClock)
          let waited = cache.isAwaitingStorage
          try cache.close()
          return waited
        }
        let injected = fault.disarm(vfs)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        // A rollback journal may be left hot: the next reader rolls it back (version 4 files
        // of these tests are not in WAL mode until the open switches them).
        let companions = [
          "cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm", "cache.sqlite-journal",
        ]
        #expect(
          names.allSatisfy { companions.contains($0) }, "a file moved aside: \(context): \(names)")
        switch result {
        case .failure(let error):
          failures += 1
          #expect(injected > 0, "failed with no fault injected: \(context): \(error)")
          #expect(!error.isDamage, "a fault read as damage: \(context): \(error)")
          if FileManager.default.fileExists(atPath: path) {
            // Each migration is one transaction: the file is at one version, whole.
            let file = try DatabaseFingerprint.read(path)
            #expect(
              references[Int(file.schemaVersion)] == file,
              "a partly migrated file: \(context): \(error): \(file)")
          }
          #expect(throws: Never.self, "reopen: \(context)") {
            var plain = configuration
            plain.vfsName = nil
            try SQLiteCustomerInfoCache(path: path, configuration: plain, clock: clock.cacheClock)
              .close()
          }
        case .success(true):
          // A file that could not be opened yet is no error: the cache waited for it, and
          // the next open completes it.
          #expect(injected > 0, "waited with no fault injected: \(context)")
          #expect(throws: Never.self, "reopen: \(context)") {
            var plain = configuration
            plain.vfsName = nil
            try SQLiteCustomerInfoCache(path: path, configuration: plain, clock: clock.cacheClock)
              .close()
          }
        case .success:
          break
        }
        #expect(try DatabaseFingerprint.read(path) == latest, "the file opened: \(context)")
        if injected == 0, case .success = result { break }
        #expect(k + 1_000 < Self.largestK, "\(context): still meets the fault")
      }
    }
    #expect(failures > 0, "open of \(start): no fault made it fail")
    FaultSweepTally.shared.add("open \(start)", cases: cases, failures: failures)
  }

  static func make(_ start: OpenStart, at path: String) throws {
    switch start {
    case .noFile: break
    case .version4: try SchemaVersion3UpgradeTests.writeVersion3File(path, version: 4)
    case .current: try FileManager.default.copyItem(atPath: try EmptyDatabase.path(), toPath: path)
    }
  }

  /// The file after each version the open can leave it at, made with no fault.
  static func fingerprints(_ start: OpenStart) throws -> [Int: DatabaseFingerprint] {
    let directory = try TemporaryDirectory()
    var references: [Int: DatabaseFingerprint] = [:]
    let clock = ManualClock(SweptWrite.start, bootSession: "boot-1")
    switch start {
    case .noFile:
      for version in 0..<SQLiteCustomerInfoCache.supportedSchemaVersion {
        let path = directory.path("v\(version).sqlite")
        let connection = try SQLiteConnection(path: path)
        try Migrator(migrations: Array(Migrator.embedded.migrations.prefix(version)))
          .migrate(connection)
        references[version] = try DatabaseFingerprint.read(path)
      }
    case .version4:
      // Each migration is its own transaction, so a fault can leave any version on the way.
      for version in 4..<SQLiteCustomerInfoCache.supportedSchemaVersion {
        let path = directory.path("v\(version).sqlite")
        try make(start, at: path)
        try Migrator(migrations: Array(Migrator.embedded.migrations.prefix(version)))
          .migrate(try SQLiteConnection(path: path))
        references[version] = try DatabaseFingerprint.read(path)
      }
    case .current:
      break
    }
    let path = directory.path("opened.sqlite")
    try make(start, at: path)
    try SQLiteCustomerInfoCache(path: path, clock: clock.cacheClock).close()
    references[SQLiteCustomerInfoCache.supportedSchemaVersion] = try DatabaseFingerprint.read(path)
    return references
  }
}

/// What one run of a swept write observed and left in the file, at one point.
struct SweptState: Equatable {
  var file: DatabaseFingerprint
  var own: ObservedState
  var fresh: ObservedState
}

/// One run of a write through the test VFS, from a new copy of an empty migrated file.
final class FaultSweepRun {
  /// Which instance makes the write, and how it commits.
  enum Mode: CaseIterable, CustomStringConvertible, Sendable {
    /// The instance that made the state, its memory and pages warm.
    case warm
    /// A new instance, so the write reads the file through the VFS.
    case cold
    /// The warm instance with `durability = .full`, so every commit syncs.
    case fullDurability

    var description: String {
      switch self {
      case .warm: "warm"
      case .cold: "cold"
      case .fullDurability: "durability full"
      }
    }
  }

  let write: SweptWrite
  let mode: Mode
  let vfs: TestVFS
  let directory: TemporaryDirectory
  let path: String
  let clock = ManualClock(SweptWrite.start, bootSession: "boot-1")
  let cache: SQLiteCustomerInfoCache

  init(_ write: SweptWrite, _ mode: Mode, vfs: TestVFS) throws {
    self.write = write
    self.mode = mode
    self.vfs = vfs
    directory = try TemporaryDirectory()
    path = directory.path("cache.sqlite")
    try FileManager.default.copyItem(atPath: try EmptyDatabase.path(), toPath: path)
    let configuration = try Self.configuration(write, mode, vfs: vfs)
    let preparing = try SQLiteCustomerInfoCache(
      path: path, configuration: configuration, clock: clock.cacheClock)
    try write.prepare(preparing, clock)
    _ = ObservedState(preparing)
    if mode == .cold {
      try preparing.close()
      cache = try SQLiteCustomerInfoCache(
        path: path, configuration: configuration, clock: clock.cacheClock)
    } else {
      cache = preparing
    }
  }

  static func configuration(
    _ write: SweptWrite, _ mode: Mode, vfs: TestVFS?
  ) throws -> CacheConfiguration {
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    configuration.vfsName = vfs?.name
    if mode == .fullDurability { configuration.durability = .full }
    if write.trusted { configuration.trustRoots = try TestSigner.roots() }
    return configuration
  }

  struct Outcome {
    var result: Result<Void, CacheError>
    var injected: Int
  }

  /// Runs the write with `fault` armed at its `k`-th call.
  func perform(failing fault: FaultSweepTests.Fault, at k: Int) throws -> Outcome {
    fault.arm(vfs, at: k)
    let result: Result<Void, CacheError>
    do {
      try write.perform(cache, clock)
      result = .success(())
    } catch let error as CacheError {
      result = .failure(error)
    }
    let injected = fault.disarm(vfs)
    return Outcome(result: result, injected: injected)
  }

  func perform() throws { try write.perform(cache, clock) }

  /// The file as another process reads it, this instance's reads, and a new instance's.
  func states() throws -> (before: SweptState, after: SweptState) {
    let before = try state()
    try perform()
    return (before, try state())
  }

  func state() throws -> SweptState {
    let fresh = try SQLiteCustomerInfoCache(
      path: path, configuration: Self.freshConfiguration(write, mode), clock: clock.cacheClock)
    return SweptState(
      file: try DatabaseFingerprint.read(path), own: ObservedState(cache),
      fresh: ObservedState(fresh))
  }

  /// A second instance through the default VFS that writes nothing of its own.
  static func freshConfiguration(_ write: SweptWrite, _ mode: Mode) throws -> CacheConfiguration {
    var configuration = try configuration(write, mode, vfs: nil)
    configuration.persistsReadTimeBookkeeping = false
    return configuration
  }

  func expect(_ expected: SweptState, context: String) throws {
    let actual = try state()
    #expect(
      actual.file == expected.file,
      "file: \(context): \(actual.file.difference(from: expected.file))")
    #expect(
      actual.own == expected.own,
      "this instance's reads: \(context): \(actual.own.difference(from: expected.own))")
    #expect(
      actual.fresh == expected.fresh,
      "a new instance's reads: \(context): \(actual.fresh.difference(from: expected.fresh))")
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    let unexpected = names.filter {
      !["cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"].contains($0)
    }
    #expect(unexpected.isEmpty, "files moved aside or left behind: \(context): \(unexpected)")
  }

  func expectFollowingWriteSucceeds(context: String) throws {
    let requestDate = "2026-11-30T12:05:00Z"
    // Signed under trust roots: an unsigned snapshot may not replace B's verified one.
    let next =
      write.trusted
      ? try TrustFixture.signed(TrustFixture.body(requestDate: requestDate), for: Fixture.scopeB)
      : try SweptWrite.snapshot(requestDate: requestDate)
    #expect(throws: Never.self, "the next write: \(context)") {
      try self.cache.store(next, for: Fixture.scopeB)
    }
    _ = try DatabaseFingerprint.read(path)
  }
}

extension CacheError {
  /// Whether the error says the file is damaged: never the right answer to an I/O error.
  var isDamage: Bool {
    guard case .storage(_, let failure) = self else { return false }
    return failure.kind == .damaged
  }
}

/// An empty database with every migration applied, made once per test process and copied for
/// each run, so a run does not migrate.
enum EmptyDatabase {
  private static let made = Result { () throws -> String in
    let directory = FileManager.default.temporaryDirectory
      .appending(path: "entitlement-cache-empty-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appending(path: "empty.sqlite").path
    var configuration = CacheConfiguration()
    configuration.pruneOnOpen = false
    try SQLiteCustomerInfoCache(path: path, configuration: configuration).close()
    return path
  }

  static func path() throws -> String { try made.get() }
}

/// The sweep's case counts, printed once per write for the figures of <doc:Reliability>.
final class FaultSweepTally: Sendable {
  static let shared = FaultSweepTally()
  private let counts = Locked<[String: (cases: Int, failures: Int)]>([:])

  func add(_ write: String, cases: Int, failures: Int) {
    let total = counts.withLock { counts in
      counts[write] = (cases, failures)
      return counts.values.reduce((0, 0)) { ($0.0 + $1.cases, $0.1 + $1.failures) }
    }
    print(
      "fault sweep: \(write): \(cases) (operation, fault, k) cases, \(failures) failed typed; "
        + "so far \(total.0) cases, \(total.1) failures")
  }
}
