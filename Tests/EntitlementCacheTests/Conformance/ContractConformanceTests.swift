import EntitlementCache
import EntitlementCacheConformance
import Foundation
import TestSupport
import Testing

/// The CustomerInfoCache contract run against both of the library's caches, one clause a case.
@Suite("Conformance: the CustomerInfoCache contract")
struct ContractConformanceTests {
  typealias Clause = CustomerInfoCacheContract.Clause

  /// Every clause but the one that needs a way to refuse the storage, checked on its own.
  static let clauses = Clause.allCases.filter { $0 != .storageUnavailable }

  @Test("SQLiteCustomerInfoCache keeps the contract", arguments: clauses)
  func sqlite(_ clause: Clause) throws {
    // One directory per case, one file per cache the clause opens.
    let directory = try TemporaryDirectory()
    let contract = CustomerInfoCacheContract { clock in
      try SQLiteCustomerInfoCache(
        path: directory.path("cache-\(UUID().uuidString).sqlite"), clock: clock)
    }
    try contract.check(clause)
  }

  @Test(
    "SQLiteCustomerInfoCache reads storage_unavailable, never no_snapshot, while its file is refused"
  )
  func sqliteFileRefused() throws {
    let directory = try TemporaryDirectory()
    let vfs = try TestVFS()
    // The shared-memory lock every read and write transaction takes is what a locked device
    // refuses first (see StorageUnavailableTests).
    let outage = StorageOutage(
      begin: { _ in vfs.armFault(.shm, at: 1, persistent: true) },
      end: { cache in
        vfs.disarm()
        (cache as? SQLiteCustomerInfoCache)?.protectedDataDidBecomeAvailable()
      })
    let contract = CustomerInfoCacheContract(storageOutage: outage) { clock in
      var configuration = CacheConfiguration()
      configuration.vfsName = vfs.name
      return try SQLiteCustomerInfoCache(
        path: directory.path("cache-\(UUID().uuidString).sqlite"), configuration: configuration,
        clock: clock)
    }
    try contract.check(.storageUnavailable)
  }

  @Test("InMemoryCustomerInfoCache keeps the contract", arguments: clauses)
  func inMemory(_ clause: Clause) throws {
    let contract = CustomerInfoCacheContract { clock in InMemoryCustomerInfoCache(clock: clock) }
    try contract.check(clause)
  }

  @Test("checkAll runs every clause in one test, and an error is an issue, not the end")
  func checkAll() {
    CustomerInfoCacheContract { clock in InMemoryCustomerInfoCache(clock: clock) }.checkAll()
    let failing = CustomerInfoCacheContract { _ in throw CacheError.closed }
    withKnownIssue("a factory that throws fails every clause", isIntermittent: false) {
      failing.checkAll()
    } matching: { issue in
      issue.error as? CacheError == .closed
    }
  }
}
