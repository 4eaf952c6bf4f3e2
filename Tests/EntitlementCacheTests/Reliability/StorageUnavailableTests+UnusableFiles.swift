import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Files that are there but that the cache cannot use as they are: one it may read but not
/// write, one that turns out a newer build's or another program's once it opens, and what is
/// not a file at all.
extension StorageUnavailableTests {
  /// A file whose permissions let this process read it but not write it (SQLite then opens it
  /// read-only) is storage not there yet too: before, retention at open threw `other`, so the
  /// app had no cache at all, and the read that found the file left a `-wal` and `-shm` with
  /// its read-only mode, which kept it refused after its permissions were mended.
  @Test(
    "a file that cannot be written answers storage_unavailable, creates nothing, and opens later")
  func notWritable() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try Self.storedFile(in: directory, clock: clock)
    let before = try #require(StoreTest.bytes(path))
    let vfs = try TestVFS()
    vfs.setReadOnlyOpens(true)
    let told = Locked<[String]>([])
    // Retention at open on, as an app has it: it was what threw.
    let cache = try Self.cache(path, vfs: vfs, clock: clock) { configuration in
      configuration.pruneOnOpen = true
      configuration.onDiagnostic = { diagnostic in
        told.withLock { $0.append(diagnostic.event.name) }
      }
    }

    #expect(
      cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.storageUnavailable)
    )
    let refused = try #require(throws: CacheError.self) {
      try cache.store(try StoreTest.snapshot(status: "expired"), for: Fixture.scopeA)
    }
    #expect(refused.storageFailureKind == .unavailable, "\(refused)")
    #expect(StoreTest.bytes(path) == before)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["cache.sqlite"])
    #expect(told.withLock { $0 } == ["storage_unavailable"])

    vfs.setReadOnlyOpens(false)
    clock.advance(by: .seconds(2))
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(told.withLock { $0 } == ["storage_unavailable", "storage_available"])
    try cache.store(try StoreTest.snapshot(status: "expired"), for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
  }

  /// The support tool writes only what its command says (no retention at open, no read marks),
  /// so it reads a file it cannot write, as a support engineer's read-only copy, and each
  /// write is refused as storage not writable now.
  @Test("a cache that writes only when asked reads a file it cannot write, and refuses writes")
  func notWritableReadByTheTool() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try Self.storedFile(in: directory, clock: clock)
    let vfs = try TestVFS()
    vfs.setReadOnlyOpens(true)
    let cache = try Self.cache(path, vfs: vfs, clock: clock) {
      $0.persistsReadTimeBookkeeping = false
    }
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    let refused = try #require(throws: CacheError.self) {
      try cache.store(try StoreTest.snapshot(status: "expired"), for: Fixture.scopeA)
    }
    #expect(refused.storageFailureKind == .unavailable, "\(refused)")
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
  }

  /// A file the cache waited for can turn out, once it opens, to be a newer build's beyond its
  /// read floor, or another program's database. The read that finds this answers with it
  /// (`newerSchema`, `unreadable`), not with the refusal it met first; before, that read said
  /// `storageUnavailable`, and for another program's file every later read did too.
  @Test(
    "a read that opens an awaited file answers with what the file turned out to be",
    arguments: [false, true])
  func awaitedFileTurnsOutUnusable(newer: Bool) throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path: String
    if newer {
      path = try NewerSchemaTests.newerFile(
        in: directory, clock: clock, readFloor: SQLiteCustomerInfoCache.supportedSchemaVersion + 1)
    } else {
      path = directory.path("cache.sqlite")
      let other = try SQLiteConnection(path: path)
      try other.execute("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')")
    }
    let before = try #require(StoreTest.bytes(path))
    let vfs = try TestVFS()
    vfs.armFault(.open, at: 1, persistent: true)
    let cache = try Self.cache(path, vfs: vfs, clock: clock)
    #expect(
      cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.storageUnavailable)
    )
    vfs.disarm()
    clock.advance(by: .seconds(2))
    let expected: UnavailableReason = newer ? .newerSchema : .unreadable
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(expected))
    clock.advance(by: .seconds(2))
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(expected))
    let loadError = try #require(throws: CacheError.self) { try cache.load(Fixture.scopeA) }
    #expect(loadError.storageFailureKind == (newer ? .newerSchema : .damaged), "\(loadError)")
    try cache.close()
    #expect(StoreTest.bytes(path) == before)
  }

  /// What is at the path where the database file goes, other than a file.
  enum NotAFile: CaseIterable, Sendable {
    case directory, device, pipe
  }

  /// A directory, a device (a link to `/dev/null`, which SQLite opens as an empty database
  /// and which migrating would give a `-journal` beside it) or a pipe is refused at open by
  /// name: a mistake, not storage to wait for, and nothing is created beside it.
  @Test(
    "a path that is not a file is an error at open, not storage to wait for",
    arguments: NotAFile.allCases)
  func notAFileIsAnError(_ kind: NotAFile) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.sqlite")
    switch kind {
    case .directory:
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    case .device:
      try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/null")
    case .pipe:
      #expect(mkfifo(path, 0o600) == 0)
    }
    let error = try #require(throws: CacheError.self) {
      _ = try SQLiteCustomerInfoCache(
        path: path, clock: ManualClock(Fixture.requestDate).cacheClock)
    }
    #expect(error.storageFailureKind != .unavailable, "\(error)")
    #expect(error.description.contains("not a regular file"), "\(error)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["cache.sqlite"])
  }
}

extension StorageUnavailableTests {
  /// A path the system will not resolve (links that loop: `ELOOP`, which root meets too; a
  /// folder without search permission gives `EACCES` to anyone else, tried in the tool's
  /// tests as an unprivileged user) may hide a file: never called missing, never created
  /// over. Before, the cache took it for no file and threw creating one.
  @Test("a path whose links loop answers storage_unavailable, creates nothing, and opens later")
  func linksThatLoop() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let stored = try Self.storedFile(in: directory, clock: clock)
    let path = directory.path("linked.sqlite")
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "loop.sqlite")
    try FileManager.default.createSymbolicLink(
      atPath: directory.path("loop.sqlite"), withDestinationPath: "linked.sqlite")
    let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()

    let cache = try SQLiteCustomerInfoCache(path: path, clock: clock.cacheClock)
    #expect(
      cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.storageUnavailable)
    )
    let refused = try #require(throws: CacheError.self) {
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    }
    #expect(refused.storageFailureKind == .unavailable, "\(refused)")
    #expect(refused.description.contains("symbolic links loop"), "\(refused)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)

    // Mended: the link now leads to the stored file, and the next attempt opens it.
    try FileManager.default.removeItem(atPath: directory.path("loop.sqlite"))
    try FileManager.default.createSymbolicLink(
      atPath: directory.path("loop.sqlite"), withDestinationPath: stored)
    cache.protectedDataDidBecomeAvailable()
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .granted)
  }
}
