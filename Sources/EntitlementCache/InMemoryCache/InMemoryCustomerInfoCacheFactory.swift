/// An empty cache kept in memory: the rules of ``SQLiteCustomerInfoCache`` with memory as its
/// only storage, for an SDK's unit tests and SwiftUI previews. It keeps the purchase queue,
/// imports, and signals its writes, like the SQLite cache.
///
/// - Parameters:
///   - policy: The offline rules its reads decide with, as ``CacheConfiguration/policy``.
///   - snapshotSizeLimit: The largest snapshot it stores, as
///     ``CacheConfiguration/snapshotSizeLimit``.
///   - clock: The clock every read and write uses; a test's manual clock.
///   - trustRoots: The pinned roots that decide verification, as
///     ``CacheConfiguration/trustRoots``.
public func inMemoryCustomerInfoCache(
  policy: OfflinePolicy = .conservative,
  snapshotSizeLimit: Int = CustomerInfoSnapshot.defaultSizeLimit,
  clock: CacheClock = .system,
  trustRoots: TrustRoots? = nil
) -> some CustomerInfoImporting & PurchaseQueueStore & CustomerInfoChangeSignaling {
  InMemoryCustomerInfoCache(
    policy: policy, snapshotSizeLimit: snapshotSizeLimit, clock: clock, trustRoots: trustRoots)
}
