import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// An entitlement key is one key in every form Swift calls equal: the server's composed `é`
/// and an app's `e` with a combining accent. The point read compared bytes while memory
/// compared as Swift does, so the answer depended on the order of reads, and a read of the
/// other form could leave the stored key itself `notEntitled`.
@Suite("Entitlement keys in another Unicode form")
struct EntitlementKeyFormTests {
  static let composed = "caf\u{E9}"
  static let decomposed = "cafe\u{301}"

  @Test(
    "both forms answer as the in-memory cache does, in any order of reads",
    arguments: [
      [composed, decomposed, "pro", composed], [decomposed, "pro", composed, decomposed],
    ])
  func bothFormsAreOneKey(order: [String]) throws {
    let info = Fixture.info([
      Self.composed: Fixture.entitlement(.active, expiresAt: Fixture.at(.day))
    ])
    let harness = try CacheHarness()
    try harness.store(info)
    let memory = InMemoryCustomerInfoCache(clock: harness.clock.cacheClock)
    try memory.store(try CustomerInfoSnapshot(info), for: Fixture.scopeA)
    let reader = try harness.secondInstance()
    for key in order {
      let decision = reader.access(to: key, for: Fixture.scopeA)
      #expect(decision == memory.access(to: key, for: Fixture.scopeA), "\(Array(key.utf8))")
      #expect(decision.isGranted == (key != "pro"), "\(Array(key.utf8))")
    }
  }
}
