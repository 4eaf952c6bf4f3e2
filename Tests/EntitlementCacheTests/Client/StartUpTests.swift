import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Start-up (<doc:RefreshClient>).
@Suite("Refresh client: start-up publishes before the network")
struct StartUpTests {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("with nothing cached, start publishes offlineUnavailable(noSnapshot) at once")
  func nothingCached() throws {
    let harness = try ClientHarness()
    harness.client.start()
    // Published synchronously, before any task ran: the app never waits on silence.
    #expect(
      harness.client.currentState?.decisions["pro"]?.state == .offlineUnavailable(.noSnapshot))
    #expect(harness.fetcher.requests.isEmpty)
    harness.runtime.runUntilIdle()
    #expect(harness.publishedPro == ["alice: offlineUnavailable(no_snapshot)"])
    #expect(harness.fetcher.waiting.map(\.flow) == [.start])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("with a cached grant, start publishes it before the fetch, then the fetched state")
  func cachedGrantThenRefresh() throws {
    let harness = try ClientHarness()
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.runtime.advance(by: .hour)  // an hour later the app launches offline
    harness.client.start()
    #expect(harness.client.currentState?.decisions["pro"]?.state == .granted)
    #expect(harness.client.currentState?.customerInfo?.freshness == .stale)
    harness.runtime.runUntilIdle()
    #expect(harness.fetcher.waiting.count == 1)
    harness.fetcher.answer(
      json: ClientFixture.json(requestDate: Fixture.requestDate.addingTimeInterval(.hour)))
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: stored"])
    #expect(harness.states.map { $0.customerInfo?.freshness } == [.stale, .fresh])
    // The decision itself did not change, so the per-key stream did not repeat it... except
    // that its evidence did (a new storedAt): it says something new.
    #expect(harness.proDecisions.count == 2)
  }
}
