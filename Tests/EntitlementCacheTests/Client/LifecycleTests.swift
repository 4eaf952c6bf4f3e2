import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Which flows refresh, backoff, the background, other processes (<doc:RefreshClient>).
@Suite("Refresh client: flows, failures and the app's lifecycle")
struct LifecycleTests {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("failures back off from about 1 s, doubling to 5 min, with jitter; a success resets them")
  func backoff() throws {
    let harness = try ClientHarness { $0.changeCheckInterval = nil }
    harness.client.start()
    harness.runtime.runUntilIdle()
    var waits: [Double] = []
    for _ in 0..<12 {
      harness.fetcher.answer(.failure(.transient(status: 503)))
      harness.runtime.runUntilIdle()
      guard let wait = harness.runtime.pendingWaits.first else {
        Issue.record("no retry scheduled")
        return
      }
      waits.append(wait.seconds)
      harness.runtime.advance(by: wait)
      #expect(harness.fetcher.waiting.map(\.flow) == [.retry])
    }
    for (attempt, wait) in waits.enumerated() {
      let base = min(pow(2, Double(attempt)), 5 * .minute)
      #expect(
        wait >= base * 0.75 && wait <= min(base * 1.25, 5 * .minute) + 0.001,
        "retry \(attempt + 1): \(wait) s")
    }
    #expect(
      waits.suffix(3).allSatisfy { $0 <= 5 * .minute && $0 >= 0.75 * 5 * .minute },
      "capped at 5 min")
    #expect(Set(waits.map { ($0 * 1000).rounded() }).count > 6, "jitter spreads the delays")
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(harness.runtime.pendingWaits == [.minute * 5])  // only staleAfter
    #expect(harness.client.currentState?.customerInfo?.freshness == .fresh)
    #expect(
      try harness.cache.load(ClientFixture.identity("alice").scope)?.bookkeeping
        .lastRefreshFailureReason == nil)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a rejected fetch is recorded with its status, never retried on a timer, asked again by the next flow"
  )
  func rejected() throws {
    let harness = try ClientHarness { $0.changeCheckInterval = nil }
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.start(answering: .failure(.rejected(status: 401)))
    #expect(harness.outcomes == ["alice: failed"])
    #expect(harness.reports.last?.outcome == .failed(.rejected(status: 401)))
    let stored = try harness.cache.load(ClientFixture.identity("alice").scope)
    #expect(stored?.bookkeeping.lastRefreshFailureReason == "rejected_401")
    #expect(harness.client.currentState?.decisions["pro"]?.evidence.isComputedOffline == true)
    #expect(harness.fetcher.waiting.isEmpty)
    // An hour in the foreground: the transient backoff would have asked a dozen times.
    harness.runtime.advance(by: .hour)
    #expect(harness.fetcher.requests.count == 1)
    // The next flow that refreshes asks again, with no backoff holding it.
    _ = harness.run { client in await client.refresh() }
    #expect(harness.fetcher.waiting.map(\.flow) == [.explicit])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a fresh answer a purchase post stored cancels the retry of an earlier failed fetch")
  func postedAnswerCancelsRetry() throws {
    let harness = try ClientHarness(
      configure: { $0.changeCheckInterval = nil }, posts: true)
    // A purchase queued in an earlier launch: start drains it, with no refresh of its own.
    let queue = try #require(harness.cache as? any PurchaseQueueStore)
    _ = try queue.enqueue(
      PurchaseFixture.purchase("tx1"), observedBy: ClientFixture.identity("alice").scope)
    harness.client.start()
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(.failure(.transient(status: nil)))
    harness.runtime.runUntilIdle()
    let retry = try #require(harness.runtime.pendingWaits.first)
    let fresh = ClientFixture.json(requestDate: Fixture.requestDate)
    harness.poster.answer(.success(.synced(FetchedCustomerInfo(body: Data(fresh.utf8)))))
    harness.runtime.runUntilIdle()
    #expect(harness.client.currentState?.customerInfo?.freshness == .fresh)
    // Past the retry's delay: no retry asks, so nothing can mark the fresh answer offline.
    harness.runtime.advance(by: retry + .seconds(1))
    #expect(harness.fetcher.requests.map(\.flow) == [.start])
    #expect(harness.client.currentState?.customerInfo?.freshness == .fresh)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("in the background retries stop; back in the foreground a stale snapshot refreshes")
  func backgroundStopsRetries() throws {
    let harness = try ClientHarness { $0.changeCheckInterval = nil }
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.start(answering: .failure(.transient(status: nil)))
    #expect(!harness.runtime.pendingWaits.isEmpty)
    harness.client.didEnterBackground()
    harness.runtime.runUntilIdle()
    harness.runtime.advance(by: .hour)
    #expect(harness.fetcher.requests.count == 1)
    harness.client.didEnterForeground()
    harness.runtime.runUntilIdle()
    #expect(harness.fetcher.waiting.map(\.flow) == [.foreground])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("entering the foreground with a fresh snapshot does not fetch")
  func foregroundWhenFresh() throws {
    let harness = try ClientHarness()
    harness.start(answering: ClientFixture.json())
    harness.client.didEnterBackground()
    harness.runtime.advance(by: .minute)
    harness.client.didEnterForeground()
    harness.runtime.runUntilIdle()
    #expect(harness.fetcher.requests.count == 1)
    harness.client.didEnterBackground()
    harness.runtime.advance(by: .minute * 10)
    harness.client.didEnterForeground()
    harness.runtime.runUntilIdle()
    #expect(harness.fetcher.waiting.map(\.flow) == [.foreground])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "launched in the background: no fetch under 25 h; past it, one after a random delay of at most 5 s"
  )
  func backgroundLaunch() throws {
    let recent = try ClientHarness()
    try recent.storeDirectly(ClientFixture.json(), user: "alice")
    recent.runtime.advance(by: .hour * 24)
    recent.client.start(in: .background)
    recent.runtime.runUntilIdle()
    #expect(recent.client.currentState?.decisions["pro"]?.isGranted == true)
    #expect(recent.fetcher.requests.isEmpty)

    let old = try ClientHarness()
    try old.storeDirectly(ClientFixture.json(), user: "alice")
    old.runtime.advance(by: .hour * 25)
    old.client.start(in: .background)
    old.runtime.runUntilIdle()
    #expect(old.fetcher.requests.isEmpty)
    let delay = old.runtime.pendingWaits.first
    #expect(delay.map { $0 > .zero && $0 <= .seconds(5) } == true)
    old.runtime.advance(by: .seconds(5))
    #expect(old.fetcher.waiting.map(\.flow) == [.start])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("the network coming back refreshes at once after offline access, and not otherwise")
  func networkAvailable() throws {
    let harness = try ClientHarness { $0.changeCheckInterval = nil }
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.start(answering: .failure(.transient(status: nil)))
    harness.client.networkAvailable()
    harness.runtime.runUntilIdle()
    #expect(harness.fetcher.waiting.map(\.flow) == [.networkAvailable])
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    // The retry that was pending was cancelled, and a fresh snapshot needs nothing.
    harness.client.networkAvailable()
    harness.runtime.advance(by: .seconds(10))
    #expect(harness.fetcher.requests.map(\.flow) == [.start, .networkAvailable])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("another process's write is published within 1 s in the foreground, not in the background")
  func otherProcessWrite() throws {
    let harness = try ClientHarness(on: .sqlite)
    harness.client.start()
    harness.runtime.runUntilIdle()
    // A widget sharing the file: its own connection, its own cache.
    let widget = try CacheKind.sqlite.make(clock: harness.runtime.clock, in: harness.directory)
    try widget.store(
      try CustomerInfoSnapshot(jsonData: Data(ClientFixture.json().utf8)),
      for: ClientFixture.identity("alice").scope)
    #expect(harness.cache.access(to: "pro", for: ClientFixture.identity("alice").scope).isGranted)
    // The client checks every 0.9 s by default, so with the cache's own 50 ms a write shows
    // within 1 s.
    harness.runtime.advance(by: .milliseconds(899))
    #expect(harness.publishedPro.last == "alice: offlineUnavailable(no_snapshot)")
    harness.runtime.advance(by: .milliseconds(1))
    #expect(harness.publishedPro.last == "alice: granted")
    #expect(
      harness.publishTimes.last.map { $0.timeIntervalSince(Fixture.requestDate) <= 1 } == true)

    harness.client.didEnterBackground()
    harness.runtime.runUntilIdle()
    try widget.remove(ClientFixture.identity("alice").scope)
    harness.runtime.advance(by: .seconds(30))
    #expect(harness.publishedPro.last == "alice: granted")
    harness.client.didEnterForeground()
    harness.runtime.runUntilIdle()
    #expect(harness.publishedPro.last == "alice: offlineUnavailable(no_snapshot)")
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("stop cancels the fetch in flight, drops its answer and ends every stream")
  func stop() throws {
    let harness = try ClientHarness()
    // The transport answers anyway, after the cancellation: the answer must be dropped.
    harness.fetcher.keepCancelledRequests()
    harness.client.start()
    harness.runtime.runUntilIdle()
    let waiting = harness.run { client in await client.refresh().appUserID }
    harness.client.stop()
    harness.runtime.runUntilIdle()
    #expect(waiting.result == "alice")
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes.isEmpty)
    #expect(try harness.cache.load(ClientFixture.identity("alice").scope) == nil)
    let ended = harness.run { client in
      var count = 0
      for await _ in client.updates { count += 1 }
      return count
    }
    #expect(ended.result == 1)  // the last state, then the end
    harness.client.start()
    #expect(harness.runtime.pendingWaits.isEmpty)
  }

  @Test("configuration values out of range are rejected, naming the field")
  func configuration() throws {
    var configuration = ClientConfiguration()
    configuration.retryInitialDelay = .zero
    #expect(
      throws: CacheError.invalidConfiguration(
        field: "retryInitialDelay", problem: "must be positive")
    ) {
      try configuration.validate()
    }
    configuration = ClientConfiguration()
    configuration.backgroundJitter = .seconds(-1)
    #expect(
      throws: CacheError.invalidConfiguration(
        field: "backgroundJitter", problem: "must not be negative")
    ) {
      try configuration.validate()
    }
    configuration = ClientConfiguration()
    configuration.retryMaxDelay = .milliseconds(10)
    #expect(
      throws: CacheError.invalidConfiguration(
        field: "retryMaxDelay", problem: "must not be less than retryInitialDelay")
    ) {
      try configuration.validate()
    }
  }
}
