import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Updates and time passing (<doc:RefreshClient>): streams replay the latest state and never repeat
/// one; time crossing a boundary republishes at its instant, with no network.
@Suite("Refresh client: streams and boundaries")
struct BoundaryRepublishTests {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "offline, pro flips to expired at the exact instant of expiresAt", arguments: CacheKind.allCases
  )
  func expiryWhileOffline(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind) { $0.changeCheckInterval = nil }
    let expiresAt = Fixture.requestDate.addingTimeInterval(10 * .minute)
    try harness.storeDirectly(ClientFixture.json(proExpiresAt: expiresAt), user: "alice")
    harness.start(answering: .failure(.transient(status: nil)))
    #expect(harness.publishedPro == ["alice: granted", "alice: granted"])  // fresh, then offline

    harness.runtime.advance(by: .milliseconds(599_999))
    #expect(harness.proDecisions.last?.isGranted == true)
    harness.runtime.advance(by: .milliseconds(1))
    #expect(harness.publishedPro.last == "alice: denied(expired)")
    #expect(harness.publishTimes.last == expiresAt)
    #expect(harness.proDecisions.last?.state == .denied(.expired))
    #expect(harness.proDecisions.last?.evidence.validUntil == expiresAt)
    // No network was asked for the flip: only the start fetch and its backed-off retry.
    #expect(harness.fetcher.requests.allSatisfy { $0.flow == .start || $0.flow == .retry })
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a server clock ahead of the device moves the flip to the device time of the boundary")
  func expiryWithServerAhead() throws {
    let harness = try ClientHarness { $0.changeCheckInterval = nil }
    // The server's clock reads ten minutes ahead: its requestDate is the device's +10 min.
    let serverNow = Fixture.requestDate.addingTimeInterval(10 * .minute)
    let expiresAt = serverNow.addingTimeInterval(.minute)
    harness.client.start()
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(
      json: ClientFixture.json(requestDate: serverNow, proExpiresAt: expiresAt))
    harness.runtime.runUntilIdle()
    harness.runtime.advance(by: .seconds(61))
    #expect(harness.publishedPro.last == "alice: denied(expired)")
    #expect(harness.publishTimes.last == Fixture.requestDate.addingTimeInterval(.minute))
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("staleAfter republishes with freshness stale at its instant, deciding the same")
  func staleBoundary() throws {
    let harness = try ClientHarness { $0.changeCheckInterval = nil }
    harness.start(answering: ClientFixture.json())
    let before = harness.states.count
    harness.runtime.advance(by: .minute * 5)
    #expect(harness.states.count == before + 1)
    #expect(harness.states.last?.customerInfo?.freshness == .stale)
    #expect(harness.publishTimes.last == Fixture.requestDate.addingTimeInterval(5 * .minute))
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a subscriber gets the latest state at once, then only changes")
  func replayAndNoRepeats() throws {
    let harness = try ClientHarness()
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.start(answering: ClientFixture.json())
    let late = Outcome<[ClientState]>()
    harness.runtime.spawn { [client = harness.client] in
      var seen: [ClientState] = []
      for await state in client.updates {
        seen.append(state)
        late.set(seen)
      }
    }
    harness.runtime.runUntilIdle()
    #expect(late.result?.count == 1)
    #expect(late.result?.first?.customerInfo?.freshness == .fresh)
    // A minute of cross-process checks finds nothing new: nothing is published.
    let published = harness.states.count
    harness.runtime.advance(by: .minute)
    #expect(harness.states.count == published)
    #expect(late.result?.count == 1)
    for (earlier, later) in zip(harness.states, harness.states.dropFirst()) {
      #expect(!earlier.saysTheSame(as: later))
    }
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a per-key stream for a key nobody configured decides it, and stops deciding it when dropped")
  func accessStreamForAnyKey() throws {
    let harness = try ClientHarness()
    harness.client.start()
    harness.runtime.runUntilIdle()
    let premium = Outcome<[String]>()
    let listener = harness.runtime.spawn { [client = harness.client] in
      var seen: [String] = []
      for await update in client.accessUpdates(to: "premium") {
        seen.append(label(update.decision.state))
        premium.set(seen)
      }
    }
    harness.runtime.runUntilIdle()
    #expect(premium.result == ["offlineUnavailable(no_snapshot)"])
    // From the first listener on, every state decides the key too.
    #expect(harness.client.currentState?.decisions.keys.sorted() == ["premium", "pro"])
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(premium.result == ["offlineUnavailable(no_snapshot)", "denied(not_entitled)"])
    #expect(harness.client.currentState?.decisions.keys.sorted() == ["premium", "pro"])
    listener.cancel()
    harness.runtime.runUntilIdle()
    _ = harness.run { client in await client.state(fetchPolicy: .cacheOnly) }
    #expect(harness.client.currentState?.decisions.keys.sorted() == ["pro"])
  }
}

/// The boundary timer's delay, which must never be zero for a boundary still ahead.
@Suite("Refresh client: the boundary timer's delay")
struct BoundaryDelayTests {
  @Test(
    "a boundary ahead by any amount waits at least a millisecond, rounded up",
    arguments: [
      (1e-9, 1), (1e-7, 1), (0.0004, 1), (0.001, 1), (0.001001, 2), (299.9999999, 300_000),
      (300, 300_000),
    ] as [(Double, Int64)])
  func delay(seconds: Double, milliseconds: Int64) {
    #expect(Duration.boundaryDelay(seconds) == .milliseconds(milliseconds))
  }
}
