import EntitlementCache
import EntitlementCacheTesting

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The kinds of read, each of which must count as a device time seen (the bookkeeping of
/// `Sources/EntitlementCache/EntitlementCache.docc/Articles/Storage.md`).
enum ContractRead: String, CaseIterable {
  case decision = "access(to:)"
  case keyListing = "activeEntitlementKeys"
  case evaluatedView = "evaluatedCustomerInfo"
}
