import EntitlementCache
import EntitlementCacheConformance
import MiniSDK
import Testing

/// The dictionary cache keeps every promise of `CustomerInfoCache` that the kit can check
/// without a storage outage: it has no storage to refuse, so `storageUnavailable` is left out.
let dictionaryContract = CustomerInfoCacheContract { clock in
  try DictionaryCustomerInfoCache(clock: clock)
}

@Test(arguments: dictionaryContract.clauses)
func dictionaryCacheKeepsTheContract(_ clause: CustomerInfoCacheContract.Clause) throws {
  try dictionaryContract.check(clause)
}
