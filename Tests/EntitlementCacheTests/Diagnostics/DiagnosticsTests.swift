import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The typed diagnostics of the cache and the client, each reached through the public API from
/// a constructed input, and none carrying a secret. Each scenario returns what it was told, so
/// the privacy test can run them all.
@Suite("Diagnostics: what the cache and the client tell an SDK's log")
struct DiagnosticsTests {
  // MARK: Scenarios of the cache

  /// A file refused at open (a device before its first unlock): told once, however many calls
  /// are refused, then told available once when it opens.
  static func storageUnavailableThenAvailable() throws -> [Diagnostic] {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try StorageUnavailableTests.storedFile(in: directory, clock: clock)
    let vfs = try TestVFS()
    vfs.armFault(.open, at: 1, persistent: true)
    let journal = DiagnosticJournal()
    // The handler reads the cache it hears from: it is called with none of its locks held,
    // or this would never return.
    // Weakly: the cache holds its handler, which must not hold the cache.
    let opened = WeakCache()
    var configuration = CacheConfiguration()
    configuration.vfsName = vfs.name
    configuration.onDiagnostic = { diagnostic in
      journal.handler(diagnostic)
      _ = opened.cache?.access(to: "pro", for: Fixture.scopeA)
    }
    let cache = try SQLiteCustomerInfoCache(
      path: path, configuration: configuration, clock: clock.cacheClock)
    opened.cache = cache
    #expect(journal.events == [.storageUnavailable(.open)])
    #expect(journal.diagnostics.first?.scope == nil)
    #expect(journal.diagnostics.first?.date == clock.now)
    for _ in 0..<3 {
      clock.advance(by: .seconds(3))
      #expect(!cache.access(to: "pro", for: Fixture.scopeA).isGranted)
      #expect(throws: CacheError.self) { try cache.load(Fixture.scopeA) }
      #expect(throws: CacheError.self) { try cache.recordRefreshFailure(for: Fixture.scopeA) }
    }
    #expect(journal.events == [.storageUnavailable(.open)])
    vfs.disarm()
    clock.advance(by: .seconds(3))
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(journal.events == [.storageUnavailable(.open), .storageAvailable])
    #expect(journal.diagnostics.last?.severity == .info)
    return journal.diagnostics
  }

  /// An open file whose reads are refused (the device locked again): told with the scope that
  /// found it, then available again at the first read the file answers.
  static func readsRefusedThenAnswered() throws -> [Diagnostic] {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try StorageUnavailableTests.storedFile(in: directory, clock: clock)
    let vfs = try TestVFS()
    let journal = DiagnosticJournal()
    var configuration = CacheConfiguration()
    configuration.vfsName = vfs.name
    configuration.changeCheckInterval = .zero
    configuration.onDiagnostic = journal.handler
    let cache = try SQLiteCustomerInfoCache(
      path: path, configuration: configuration, clock: clock.cacheClock)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    vfs.armFault(.shm, at: 1, persistent: true)
    cache.dropResidentState(for: Fixture.scopeA)
    #expect(!cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(!cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(journal.events == [.storageUnavailable(.load)])
    #expect(journal.diagnostics.first?.scope == Fixture.scopeA)
    // A write refused too says nothing more, and a flush with nothing to persist, which
    // touches no file, does not say the storage came back.
    #expect(throws: CacheError.self) { try cache.recordRefreshFailure(for: Fixture.scopeA) }
    try cache.flush()
    #expect(journal.events == [.storageUnavailable(.load)])
    vfs.disarm()
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(journal.events == [.storageUnavailable(.load), .storageAvailable])
    return journal.diagnostics
  }

  /// A file refused at open that turns out, once it opens, to be a newer build's this one
  /// does not read: told as such, not left as unavailable.
  static func newerSchemaFoundOnceOpened() throws -> [Diagnostic] {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let supported = NewerSchemaTests.supported
    let path = try NewerSchemaTests.newerFile(
      in: directory, clock: clock, readFloor: supported + 1)
    let before = try #require(StoreTest.bytes(path))
    let vfs = try TestVFS()
    vfs.armFault(.open, at: 1, persistent: true)
    let journal = DiagnosticJournal()
    let cache = try Fixture.cache(in: directory, clock: clock) { configuration in
      configuration.vfsName = vfs.name
      configuration.onDiagnostic = journal.handler
    }
    vfs.disarm()
    #expect(!cache.protectedDataDidBecomeAvailable())
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.newerSchema))
    #expect(
      journal.events == [
        .storageUnavailable(.open),
        .newerSchema(fileVersion: supported + 1, buildVersion: supported, readable: false),
      ])
    #expect(StoreTest.bytes(path) == before)
    return journal.diagnostics
  }

  /// A data page damaged after the file opened: the read that finds it is told, then the write
  /// that moves the file aside.
  static func damageFoundByReadsThenMovedAside() throws -> [Diagnostic] {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    _ = try DatabaseFileTests.damageDataPage(
      at: directory.path("cache.sqlite"), clock: clock, in: directory)
    let journal = DiagnosticJournal()
    let cache = try Fixture.cache(in: directory, clock: clock) { configuration in
      configuration.onDiagnostic = journal.handler
    }
    #expect(!cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(!cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(journal.events == [.storageDamaged(.load, movedAside: false)])
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(cache.damageReport != nil)
    #expect(journal.events.last == .storageDamaged(.store, movedAside: true))
    #expect(journal.events.count == 2)
    return journal.diagnostics
  }

  /// A client refreshing into a newer build's file it can read but not write: the refresh is
  /// told failed in storage, with the operation and kind and never the file's path.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func refreshRefusedByStorage() throws -> [Diagnostic] {
    let journal = DiagnosticJournal()
    let harness = try ClientHarness(
      configure: { $0.onDiagnostic = journal.handler },
      cache: { clock, directory in
        _ = try NewerSchemaTests.newerFile(
          in: directory, clock: ManualClock(Fixture.requestDate),
          readFloor: NewerSchemaTests.supported)
        var configuration = CacheConfiguration()
        configuration.onDiagnostic = journal.handler
        return try SQLiteCustomerInfoCache(
          path: directory.path("cache.sqlite"), configuration: configuration, clock: clock)
      })
    harness.start(answering: ClientFixture.json())
    let line = try #require(journal.diagnostics.first { $0.event.name == "refresh_failed" })
    guard case .refreshFailed(.start, .storageFailed) = line.event else {
      Issue.record("expected a refresh refused by storage, told \(journal.names)")
      return journal.diagnostics
    }
    #expect(line.description.contains(#"error="store snapshot: newer schema""#), "\(line)")
    return journal.diagnostics
  }

  /// A full disk: every refused write is told, typed, and the snapshot before it still reads.
  static func fullDisk() throws -> [Diagnostic] {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let vfs = try TestVFS()
    let journal = DiagnosticJournal()
    let cache = try Fixture.cache(in: directory, clock: clock) { configuration in
      configuration.vfsName = vfs.name
      configuration.onDiagnostic = journal.handler
    }
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    vfs.armFault(.write, at: 1, code: SQLITE_FULL, persistent: true)
    #expect(throws: CacheError.self) {
      try cache.store(try StoreTest.snapshot(status: "expired"), for: Fixture.scopeA)
    }
    #expect(throws: CacheError.self) { try cache.recordRefreshFailure(for: Fixture.scopeA) }
    #expect(
      journal.events == [
        .storageFailed(.store, .full), .storageFailed(.recordRefreshFailure, .full),
      ])
    #expect(journal.diagnostics.map(\.scope) == [Fixture.scopeA, Fixture.scopeA])
    vfs.disarm()
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    return journal.diagnostics
  }

  /// A newer build's file: told once at open, readable or not; its refused writes say nothing
  /// more.
  static func newerSchema() throws -> [Diagnostic] {
    let supported = NewerSchemaTests.supported
    var told: [Diagnostic] = []
    for readable in [true, false] {
      let directory = try TemporaryDirectory()
      let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
      _ = try NewerSchemaTests.newerFile(
        in: directory, clock: clock, readFloor: readable ? supported : supported + 1)
      let journal = DiagnosticJournal()
      let cache = try Fixture.cache(in: directory, clock: clock) { configuration in
        configuration.onDiagnostic = journal.handler
      }
      #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted == readable)
      #expect(throws: CacheError.self) {
        try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
      }
      #expect(
        journal.events == [
          .newerSchema(fileVersion: supported + 1, buildVersion: supported, readable: readable)
        ])
      told += journal.diagnostics
    }
    return told
  }

  /// A file that is not a database: moved aside at open, and told so.
  static func damagedFile() throws -> [Diagnostic] {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    try Data(repeating: 0x5A, count: 8192).write(
      to: URL(fileURLWithPath: directory.path("cache.sqlite")))
    let journal = DiagnosticJournal()
    let cache = try Fixture.cache(in: directory, clock: clock) { configuration in
      configuration.onDiagnostic = journal.handler
    }
    #expect(cache.damageReport != nil)
    #expect(journal.events == [.storageDamaged(.open, movedAside: true)])
    return journal.diagnostics
  }

  /// With trust roots: an unsigned answer told as stored unverified, one that would replace a
  /// verified snapshot told as refused, and rows edited on disk told as tampered at the read
  /// that found them, once.
  static func verification() throws -> [Diagnostic] {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let journal = DiagnosticJournal()
    let roots = try TestSigner.roots()
    func cache() throws -> SQLiteCustomerInfoCache {
      try Fixture.cache(in: directory, clock: clock) { configuration in
        configuration.trustRoots = roots
        configuration.changeCheckInterval = .zero
        configuration.onDiagnostic = journal.handler
      }
    }
    let writer = try cache()
    try writer.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(journal.events == [.snapshotUnverified(.missingSignature, stored: true)])
    try writer.store(try TrustFixture.signed(), for: Fixture.scopeA)
    #expect(
      try writer.storeAnswer(try Fixture.snapshot(), for: Fixture.scopeA)
        == .refusedUnverified(.missingSignature))
    #expect(journal.events.last == .snapshotUnverified(.missingSignature, stored: false))
    try writer.close()

    let raw = try StoreTest.connection(writer.path)
    try raw.execute("UPDATE entitlement SET expires_at = expires_at + 1 WHERE key = 'pro'")
    let reader = try cache()
    let before = journal.events.count
    _ = reader.access(to: "pro", for: Fixture.scopeA)
    _ = reader.access(to: "pro", for: Fixture.scopeA)
    #expect(Array(journal.events.dropFirst(before)) == [.snapshotTampered])
    #expect(journal.diagnostics.last?.scope == Fixture.scopeA)
    // Read from the file again, the same revision is not told again.
    reader.dropResidentState(for: Fixture.scopeA)
    _ = reader.access(to: "pro", for: Fixture.scopeA)
    #expect(journal.events.count == before + 1)
    // A support tool's check tells it before it returns.
    let checker = try cache()
    #expect(try checker.verifySnapshot(for: Fixture.scopeA) == .failed(.tampered))
    #expect(journal.events.count == before + 2 && journal.events.last == .snapshotTampered)
    return journal.diagnostics
  }

  /// A stored body that no longer decodes: a failed read, told once while it stays the same.
  static func unreadableSnapshot() throws -> [Diagnostic] {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    let writer = try Fixture.cache(in: directory, clock: clock)
    try writer.store(try Fixture.snapshot(), for: Fixture.scopeA)
    let raw = try StoreTest.connection(writer.path)
    try raw.execute("UPDATE scope SET device_status = 'blocked', device_block = 'not json'")
    let journal = DiagnosticJournal()
    let reader = try Fixture.cache(in: directory, clock: clock) { configuration in
      configuration.onDiagnostic = journal.handler
    }
    for _ in 0..<3 { _ = reader.access(to: "pro", for: Fixture.scopeA) }
    #expect(journal.names == ["read_failed"])
    // Mended by a refresh, then broken the same way again: told again.
    try reader.store(try Fixture.snapshot(), for: Fixture.scopeA)
    #expect(reader.access(to: "pro", for: Fixture.scopeA).isGranted)
    try raw.execute("UPDATE scope SET device_status = 'blocked', device_block = 'not json'")
    reader.dropResidentState(for: Fixture.scopeA)
    _ = reader.access(to: "pro", for: Fixture.scopeA)
    #expect(journal.names == ["read_failed", "read_failed"])
    return journal.diagnostics
  }

  // MARK: Tests

  @Test("storage unavailable at open is told once, and available once when the file opens")
  func unavailableAtOpen() throws { _ = try Self.storageUnavailableThenAvailable() }

  @Test("reads refused on an open file are told once, with the scope, then available again")
  func unavailableReads() throws { _ = try Self.readsRefusedThenAnswered() }

  @Test("a full disk is told at every refused write, typed, and the snapshot still reads")
  func fullDiskIsTold() throws { _ = try Self.fullDisk() }

  @Test("a newer build's file is told at open, readable or not")
  func newerSchemaIsTold() throws { _ = try Self.newerSchema() }

  @Test("a damaged file moved aside is told")
  func damageIsTold() throws { _ = try Self.damagedFile() }

  @Test("damage found by a read is told, then the write that moves the file aside")
  func laterDamageIsTold() throws { _ = try Self.damageFoundByReadsThenMovedAside() }

  @Test("a refused file found, once it opens, to be a newer build's is told as newer")
  func newerFoundOnceOpened() throws { _ = try Self.newerSchemaFoundOnceOpened() }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a refresh refused by storage is told with the operation and kind, never the path")
  func refreshRefusedIsTold() throws { _ = try Self.refreshRefusedByStorage() }

  @Test("unverified answers and a snapshot tampered at rest are told")
  func verificationIsTold() throws { _ = try Self.verification() }

  @Test("a stored body that no longer decodes is told once while it stays so")
  func unreadableIsTold() throws { _ = try Self.unreadableSnapshot() }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a failed refresh is told with its flow, and the retry it scheduled with its delay")
  func refreshFailuresAreTold() throws { _ = try Self.refreshFailures() }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a clock set back is told once")
  func rollbackIsTold() throws { _ = try Self.clockRollback() }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a purchase held in memory is told once")
  func heldIsTold() throws { _ = try Self.purchaseHeld() }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a purchase post's retry and conflict are told")
  func postsAreTold() throws { _ = try Self.purchasePosts() }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("every kind of diagnostic is reached, and none carries a token, signature, user ID or key")
  func nothingSecret() throws {
    let scenarios = [
      try Self.storageUnavailableThenAvailable(), try Self.readsRefusedThenAnswered(),
      try Self.fullDisk(), try Self.newerSchema(), try Self.damagedFile(),
      try Self.verification(), try Self.unreadableSnapshot(), try Self.refreshFailures(),
      try Self.clockRollback(), try Self.purchaseHeld(), try Self.purchasePosts(),
      try Self.newerSchemaFoundOnceOpened(), try Self.damageFoundByReadsThenMovedAside(),
      try Self.refreshRefusedByStorage(),
    ]
    let told = scenarios.flatMap { $0 }
    let everyName: Set = [
      "refresh_failed", "retry_scheduled", "clock_rollback_suspected", "purchase_held",
      "purchase_conflict", "snapshot_tampered", "snapshot_unverified", "storage_unavailable",
      "storage_available", "storage_damaged", "newer_schema", "storage_failed", "read_failed",
    ]
    #expect(Set(told.map(\.event.name)) == everyName)
    let signature = try TrustFixture.signed().signature
    let identities =
      [
        "sdk_live", "alice", SampleScope.userA, SampleScope.userB, PurchaseFixture.secret,
        SampleScope.installation,
      ]
      + [signature?.signature, signature?.intermediate].compactMap { $0 }.flatMap { bytes in
        [Data(bytes).base64EncodedString(), bytes.map { String(format: "%02x", $0) }.joined()]
      }
    // Every scenario's file is named so: a path in a line would name a container or a home
    // folder.
    let paths = ["cache.sqlite", FileManager.default.temporaryDirectory.path]
    for diagnostic in told {
      let line = [
        diagnostic.description,
        diagnostic.event.details.map { "\($0.field)=\($0.value)" }.joined(separator: " "),
      ].joined(separator: "\n")
      for secret in identities + paths where line.localizedCaseInsensitiveContains(secret) {
        Issue.record("\(diagnostic.event.name) says \(secret): \(line)")
      }
      // Everything it holds, as a debugger or a careless `dump` would print it: the storage's
      // own error, kept for code, may name the file, but nothing names a person or a key.
      var dumped = ""
      dump(diagnostic, to: &dumped)
      for secret in identities where dumped.localizedCaseInsensitiveContains(secret) {
        Issue.record("\(diagnostic.event.name) holds \(secret): \(dumped)")
      }
    }
  }
}
