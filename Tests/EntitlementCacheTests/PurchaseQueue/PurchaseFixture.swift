import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A purchase as the store hands it over, with a token that must never be shown.
enum PurchaseFixture {
  static let secret = "STORE-SIGNED-TRANSACTION-SECRET"

  static func purchase(_ transactionID: String, product: String = "pro_monthly")
    -> ObservedPurchase
  {
    ObservedPurchase(
      transactionID: transactionID, productID: product,
      token: PurchaseToken(Data("\(secret)-\(transactionID)".utf8)))
  }
}

/// Both caches that keep a purchase queue, on one manual clock.
struct QueueCaches {
  let clock = ManualClock(Fixture.requestDate)
  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  func make(_ kind: CacheKind) throws -> any CustomerInfoCache & PurchaseQueueStore {
    switch kind {
    case .inMemory: InMemoryCustomerInfoCache(clock: clock.cacheClock)
    case .sqlite: try Fixture.cache(in: directory, clock: clock)
    }
  }
}
