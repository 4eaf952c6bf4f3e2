import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

@Suite struct StoreSmokeTests {
  @Test func storeThenReadGrantsAndSurvivesReopen() throws {
    let directory = try TemporaryDirectory()
    let clock = ManualClock(Fixture.requestDate)
    do {
      let cache = try Fixture.cache(in: directory, clock: clock)
      #expect(
        cache.access(to: "pro", for: Fixture.scopeA).state == .offlineUnavailable(.noSnapshot))
      try cache.store(try Fixture.snapshot(), for: Fixture.scopeA)
      let decision = cache.access(to: "pro", for: Fixture.scopeA)
      #expect(decision.state == .granted)
      #expect(decision.isHighTrust)
      #expect(decision.evidence.validUntil == Fixture.date("2026-12-07T12:00:00Z"))
      #expect(cache.access(to: "gold", for: Fixture.scopeA).state == .denied(.notEntitled))
      #expect(
        cache.access(to: "pro", for: Fixture.scopeB).state == .offlineUnavailable(.noSnapshot))
    }
    clock.advance(by: .minute)
    let reopened = try Fixture.cache(in: directory, clock: clock)
    let decision = reopened.access(to: "pro", for: Fixture.scopeA)
    #expect(decision.state == .granted)
    #expect(reopened.activeEntitlementKeys(for: Fixture.scopeA) == ["pro", "lifetime"])
    let evaluated = try #require(try reopened.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(evaluated.customerInfo.accessContext != nil)
    clock.advance(by: .minute * 15)
    let later = try #require(try reopened.evaluatedCustomerInfo(for: Fixture.scopeA))
    #expect(later.customerInfo.accessContext == nil)
    #expect(later.freshness == .stale)
  }
}
