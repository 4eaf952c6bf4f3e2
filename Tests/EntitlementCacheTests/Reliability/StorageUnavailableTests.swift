import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A file that is there but cannot be opened or read yet, as a device before its first unlock
/// makes it: the fault VFS fails each open or read as the platform would (SQLite turns a
/// refused `open(2)` into `SQLITE_CANTOPEN`), since the tests run as root, which `chmod` does
/// not stop.
@Suite("Storage that is not there yet: a file that cannot be opened or read")
struct StorageUnavailableTests {
  /// A cache file holding a snapshot that grants `pro`, closed again.
  static func storedFile(in directory: TemporaryDirectory, clock: ManualClock) throws -> String {
    let cache = try Fixture.cache(in: directory, clock: clock)
    try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    try cache.close()
    return cache.path
  }

  /// A cache over `path` through `vfs` that asks for other connections' writes on every read,
  /// so each read meets the file as it is now; `configure` changes the rest.
  static func cache(
    _ path: String, vfs: TestVFS, clock: ManualClock,
    configure: (inout CacheConfiguration) -> Void = { _ in }
  ) throws -> SQLiteCustomerInfoCache {
    var configuration = CacheConfiguration()
    configuration.vfsName = vfs.name
    configuration.pruneOnOpen = false
    configuration.changeCheckInterval = .zero
    configure(&configuration)
    return try SQLiteCustomerInfoCache(
      path: path, configuration: configuration, clock: clock.cacheClock)
  }

  @Test(
    "a file that cannot be opened answers storage_unavailable, never no_snapshot, and opens later")
  func openRefused() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try Self.storedFile(in: directory, clock: clock)
    let before = try #require(StoreTest.bytes(path))
    let vfs = try TestVFS()
    vfs.armFault(.open, at: 1, persistent: true)

    let cache = try Self.cache(path, vfs: vfs, clock: clock)
    let notified = Locked(0)
    let observation = cache.observeWrites { notified.withLock { $0 += 1 } }
    defer { observation.cancel() }

    let decision = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .offlineUnavailable(.storageUnavailable))
    #expect(decision.evidence.freshness == nil)
    #expect(cache.activeEntitlementKeys(for: Fixture.scopeA).isEmpty)
    #expect(cache.lastReadFailure?.error.storageFailureKind == .unavailable)
    let loadError = try #require(throws: CacheError.self) { try cache.load(Fixture.scopeA) }
    #expect(loadError.storageFailureKind == .unavailable, "\(loadError)")
    let viewError = try #require(throws: CacheError.self) {
      try cache.evaluatedCustomerInfo(for: Fixture.scopeA)
    }
    #expect(viewError.storageFailureKind == .unavailable, "\(viewError)")
    // A write is refused, typed, and changes nothing; observers hear nothing of a write that
    // never touched the file.
    let refused = try #require(throws: CacheError.self) {
      try cache.store(try StoreTest.snapshot(status: "expired"), for: Fixture.scopeA)
    }
    guard case .storage(.store, let failure) = refused else {
      Issue.record("expected a storage failure, got \(refused)")
      return
    }
    #expect(failure.kind == .unavailable)
    #expect(refused.description.hasPrefix("store snapshot: "))
    // Nothing was created beside or over the file, and nothing was moved aside.
    #expect(StoreTest.bytes(path) == before)
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["cache.sqlite"])
    #expect(cache.damageReport == nil)
    let notifiedBefore = notified.withLock { $0 }
    #expect(notifiedBefore == 0)

    // Unlocked: the next read within two seconds of the last attempt still waits...
    vfs.disarm()
    clock.advance(by: .seconds(1))
    #expect(
      cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.storageUnavailable)
    )
    #expect(notified.withLock { $0 } == notifiedBefore)
    // ...and a read after them opens the file and answers from it.
    clock.advance(by: .seconds(1))
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(notified.withLock { $0 } == notifiedBefore + 1)
    #expect(try cache.load(Fixture.scopeA)?.snapshot != nil)
  }

  @Test("protectedDataDidBecomeAvailable() opens the file at once, and a write then lands")
  func openedWhenTheAppSaysSo() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try Self.storedFile(in: directory, clock: clock)
    let vfs = try TestVFS()
    vfs.armFault(.open, at: 1, persistent: true)
    let cache = try Self.cache(path, vfs: vfs, clock: clock)
    #expect(!cache.protectedDataDidBecomeAvailable())  // still locked
    vfs.disarm()
    #expect(cache.protectedDataDidBecomeAvailable())
    #expect(cache.protectedDataDidBecomeAvailable())  // already open
    clock.advance(by: .minute)
    try cache.store(try StoreTest.snapshot(status: "expired"), for: Fixture.scopeA)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .denied(.expired))
    try cache.close()
    #expect(!cache.protectedDataDidBecomeAvailable())
  }

  @Test("a cache closed while it waits for its file is closed, and never opens it")
  func closedWhileWaiting() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try Self.storedFile(in: directory, clock: clock)
    let vfs = try TestVFS()
    vfs.armFault(.open, at: 1, persistent: true)
    let cache = try Self.cache(path, vfs: vfs, clock: clock)
    #expect(
      cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.storageUnavailable)
    )
    try cache.flush()  // nothing read, nothing to persist: no error
    try cache.close()
    vfs.disarm()
    clock.advance(by: .minute)
    #expect(!cache.protectedDataDidBecomeAvailable())
    #expect(cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.unreadable))
    #expect(throws: CacheError.closed) { try cache.load(Fixture.scopeA) }
    #expect(throws: CacheError.closed) {
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
    }
  }

  @Test("a file that cannot be read answers storage_unavailable, and the next read after it does")
  func readRefused() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate, bootSession: "boot-1")
    let path = try Self.storedFile(in: directory, clock: clock)
    let vfs = try TestVFS()
    let cache = try Self.cache(path, vfs: vfs, clock: clock)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)

    // SQLite's page cache answers without reading while nothing changed; the shared-memory
    // lock each read transaction takes is what a locked device refuses first.
    vfs.armFault(.shm, at: 1, persistent: true)
    // What memory holds still answers, though each read's check for other connections'
    // writes is refused too: nothing says the file changed.
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
    // A read that must go to the file finds it unreadable, not empty.
    cache.dropResidentState(for: Fixture.scopeA)
    let locked = cache.access(to: "pro", for: Fixture.scopeA)
    #expect(locked.state == .offlineUnavailable(.storageUnavailable))
    vfs.disarm()
    #expect(cache.access(to: "pro", for: Fixture.scopeA).isGranted)
  }
}

extension CacheError {
  /// The kind of a storage failure, if this is one.
  var storageFailureKind: StorageFailure.Kind? {
    if case .storage(_, let failure) = self { failure.kind } else { nil }
  }
}

/// The refresh client over a file that opens only after the app started.
@Suite("Storage that is not there yet, seen from the refresh client")
struct StorageUnavailableClientTests {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("the client publishes storage_unavailable, then the real state once the file opens")
  func publishesTheRealStateOnceTheFileOpens() throws {
    let vfs = try TestVFS()
    let opened = Locked<SQLiteCustomerInfoCache?>(nil)
    let harness = try ClientHarness(cache: { clock, directory in
      let path = directory.path("cache.sqlite")
      // The snapshot a previous launch stored.
      let earlier = try SQLiteCustomerInfoCache(path: path, clock: clock)
      try earlier.store(
        CustomerInfoSnapshot(jsonData: Data(ClientFixture.json().utf8)),
        for: ClientFixture.identity("alice").scope)
      try earlier.close()
      vfs.armFault(.open, at: 1, persistent: true)
      var configuration = CacheConfiguration()
      configuration.vfsName = vfs.name
      configuration.changeCheckInterval = .zero
      let cache = try SQLiteCustomerInfoCache(
        path: path, configuration: configuration, clock: clock)
      opened.withLock { $0 = cache }
      return cache
    })
    let cache = try #require(opened.withLock { $0 })
    harness.client.start()
    harness.runtime.runUntilIdle()
    #expect(harness.client.access(to: "pro").state == .offlineUnavailable(.storageUnavailable))
    #expect(harness.proDecisions.last?.state == .offlineUnavailable(.storageUnavailable))
    #expect(!harness.proDecisions.contains { $0.state == .offlineUnavailable(.noSnapshot) })

    vfs.disarm()
    #expect(cache.protectedDataDidBecomeAvailable())
    harness.runtime.runUntilIdle()
    #expect(harness.proDecisions.last?.isGranted == true)
    harness.fetcher.failEveryWaiting()
    harness.runtime.runUntilIdle()
  }
}

/// A purchase completed while the device is still locked.
@Suite("A purchase observed while the storage is unavailable")
struct HeldPurchaseTests {
  /// A client that posts purchases, started over a cache file that cannot be opened yet.
  ///
  /// - Parameter onDiagnostic: Given to both the cache's and the client's configuration.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func lockedClient(
    _ vfs: TestVFS, onDiagnostic: DiagnosticHandler? = nil
  ) throws -> (ClientHarness, SQLiteCustomerInfoCache) {
    let opened = Locked<SQLiteCustomerInfoCache?>(nil)
    let harness = try ClientHarness(
      configure: { $0.onDiagnostic = onDiagnostic }, posts: true,
      cache: { clock, directory in
        let path = directory.path("cache.sqlite")
        try SQLiteCustomerInfoCache(path: path, clock: clock).close()
        vfs.armFault(.open, at: 1, persistent: true)
        var configuration = CacheConfiguration()
        configuration.vfsName = vfs.name
        configuration.onDiagnostic = onDiagnostic
        let cache = try SQLiteCustomerInfoCache(
          path: path, configuration: configuration, clock: clock)
        opened.withLock { $0 = cache }
        return cache
      })
    let cache = try #require(opened.withLock { $0 })
    harness.client.start()
    harness.runtime.runUntilIdle()
    harness.fetcher.failEveryWaiting()
    harness.runtime.runUntilIdle()
    return (harness, cache)
  }

  /// Completes `transactionID` and fails the refresh after it; the result.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func complete(_ transactionID: String, on harness: ClientHarness) -> PurchaseSyncResult? {
    let purchase = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase(transactionID))
    }
    harness.runtime.runUntilIdle()
    harness.fetcher.failEveryWaiting()
    harness.runtime.runUntilIdle()
    return purchase.result ?? nil
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "it is held in memory and said so, then queued and posted as its observer once the file opens")
  func heldThenQueued() throws {
    let vfs = try TestVFS()
    let (harness, cache) = try Self.lockedClient(vfs)
    let result = try #require(Self.complete("tx1", on: harness))
    #expect(result.heldInMemory == ["tx1"])
    #expect(!result.isSettled)
    #expect(harness.poster.requests.isEmpty)
    // The store delivers the unfinished transaction again: it is held once.
    #expect(Self.complete("tx1", on: harness)?.heldInMemory == ["tx1"])
    // Bob logs in before the device unlocks: alice's purchase stays hers.
    _ = harness.run { client in try? await client.logIn("bob") }
    harness.runtime.runUntilIdle()
    harness.fetcher.failEveryWaiting()
    harness.runtime.runUntilIdle()

    // Unlocked: the file opens, the held purchase is queued as alice and posted.
    vfs.disarm()
    #expect(cache.protectedDataDidBecomeAvailable())
    harness.runtime.runUntilIdle()
    #expect(harness.poster.waiting.map(\.transactionID) == ["tx1"])
    #expect(harness.poster.waiting.map(\.appUserID) == ["alice"])
    let queued = try cache.queuedPurchases(observedBy: ClientFixture.identity("alice").scope)
    #expect(queued.map(\.transactionID) == ["tx1"])
    harness.poster.failEveryWaiting()
    harness.fetcher.failEveryWaiting()
    harness.runtime.runUntilIdle()
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a refresh's own write that opens the file queues what was held")
  func openedByTheClientsOwnWrite() throws {
    let vfs = try TestVFS()
    let (harness, _) = try Self.lockedClient(vfs)
    #expect(Self.complete("tx1", on: harness)?.heldInMemory == ["tx1"])

    // Unlocked; no one tells the cache. The next refresh's store opens the file.
    vfs.disarm()
    harness.runtime.advance(by: .seconds(3))
    _ = harness.run { client in await client.refresh() }
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes.last == "alice: stored")
    #expect(harness.poster.waiting.map(\.transactionID) == ["tx1"])
    harness.poster.failEveryWaiting()
    harness.fetcher.failEveryWaiting()
    harness.runtime.runUntilIdle()
  }
}
