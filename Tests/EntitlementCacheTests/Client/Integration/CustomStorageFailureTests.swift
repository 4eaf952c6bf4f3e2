import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A cache of an SDK's own, not SQLite, whose disk fills up: it reports the failure in the
/// protocol's own terms, and the client passes it on and keeps the access it had.
@Suite("A custom cache's storage failure")
struct CustomStorageFailureTests {
  /// The error a file-based cache of an SDK's own might have.
  struct DiskFull: Error, CustomStringConvertible {
    var description: String { "no space left on device" }
  }

  /// Stores through its base until the disk fills; then every write fails as full.
  final class FillingCache: ForwardingCustomerInfoCache {
    let base: InMemoryCustomerInfoCache
    let isFull = Locked(false)

    init(base: InMemoryCustomerInfoCache) { self.base = base }

    func store(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope) throws(CacheError) {
      try refuseWhenFull(.store)
      try base.store(snapshot, for: scope)
    }

    func storeAnswer(_ snapshot: CustomerInfoSnapshot, for scope: CacheScope) throws(CacheError)
      -> StoreOutcome
    {
      try refuseWhenFull(.store)
      return try base.storeAnswer(snapshot, for: scope)
    }

    func recordRefreshFailure(for scope: CacheScope, reason: String?) throws(CacheError) {
      try refuseWhenFull(.recordRefreshFailure)
      try base.recordRefreshFailure(for: scope, reason: reason)
    }

    private func refuseWhenFull(_ operation: CacheOperation) throws(CacheError) {
      guard isFull.withLock({ $0 }) else { return }
      throw .storage(operation, StorageFailure(.full, underlying: DiskFull()))
    }
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a full disk is reported as the cache's own storage failure, and access stays")
  func fullDiskKeepsAccess() throws {
    let filling = Locked<FillingCache?>(nil)
    let harness = try ClientHarness(cache: { clock, _ in
      let cache = FillingCache(base: InMemoryCustomerInfoCache(clock: clock))
      filling.withLock { $0 = cache }
      return cache
    })
    let cache = try #require(filling.withLock { $0 })
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    cache.isFull.withLock { $0 = true }
    harness.client.start()
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(
      json: ClientFixture.json(
        requestDate: Fixture.requestDate.addingTimeInterval(.minute), status: "expired"))
    harness.runtime.runUntilIdle()

    #expect(harness.outcomes == ["alice: storageFailed"])
    guard case .storageFailed(.storage(.store, let failure))? = harness.reports.last?.outcome
    else {
      Issue.record("expected a storage failure, got \(harness.outcomes)")
      return
    }
    #expect(failure.kind == .full)
    #expect(failure.underlying is DiskFull)
    #expect(
      CacheError.storage(.store, failure).description == "store snapshot: no space left on device")
    #expect(harness.client.access(to: "pro").isGranted)
  }

  @Test("storage failures are equal when their kinds and descriptions are")
  func equality() {
    let full = StorageFailure(.full, underlying: DiskFull())
    #expect(full == StorageFailure(.full, underlying: DiskFull()))
    #expect(full != StorageFailure(.other, underlying: DiskFull()))
    #expect(full != StorageFailure(.full, underlying: CacheError.closed))
  }
}
