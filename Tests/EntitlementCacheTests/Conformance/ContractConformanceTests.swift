import EntitlementCache
import EntitlementCacheConformance
import Foundation
import TestSupport
import Testing

/// The CustomerInfoCache contract run against both of the library's caches, one clause a case.
@Suite("Conformance: the CustomerInfoCache contract")
struct ContractConformanceTests {
  typealias Clause = CustomerInfoCacheContract.Clause

  @Test("SQLiteCustomerInfoCache keeps the contract", arguments: Clause.allCases)
  func sqlite(_ clause: Clause) throws {
    // One directory per case, one file per cache the clause opens.
    let directory = try TemporaryDirectory()
    let contract = CustomerInfoCacheContract { clock in
      try SQLiteCustomerInfoCache(
        path: directory.path("cache-\(UUID().uuidString).sqlite"), clock: clock)
    }
    try contract.check(clause)
  }

  @Test("InMemoryCustomerInfoCache keeps the contract", arguments: Clause.allCases)
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
