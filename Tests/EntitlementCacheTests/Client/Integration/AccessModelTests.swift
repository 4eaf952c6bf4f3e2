#if canImport(Observation)
  import EntitlementCacheTesting
  import Foundation
  import Observation
  import Testing

  @testable import EntitlementCache

  /// The SwiftUI model over the client, observed as SwiftUI observes it: each test registers
  /// what it reads with `withObservationTracking` and waits for the change, with no sleeping.
  @Suite("AccessModel: the client's state for SwiftUI")
  @MainActor
  struct AccessModelTests {
    /// Suspends until something `read` reads changes, then returns once the change is made.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func nextChange(_ read: @escaping () -> Void) async {
      await withCheckedContinuation { continuation in
        withObservationTracking(read) { continuation.resume() }
      }
      // The continuation resumed on the main actor after the change, which the model makes in
      // one step there.
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("it changes once per published state, and reads the decisions, freshness and queue")
    func followsTheClient() async throws {
      let harness = try ClientHarness(posts: true)
      let model = AccessModel(client: harness.client)
      #expect(model.state == nil && !model.isGranted("pro") && model["pro"] == nil)

      harness.client.start()
      harness.runtime.runUntilIdle()
      await nextChange { _ = model.state }
      #expect(model.appUserID == "alice")
      #expect(model["pro"]?.state == .offlineUnavailable(.noSnapshot))
      #expect(!model.isGranted("pro") && model.freshness == nil)

      harness.fetcher.answer(json: ClientFixture.json())
      harness.runtime.runUntilIdle()
      await nextChange { _ = model.state }
      #expect(model.isGranted("pro"))
      #expect(model.freshness == .fresh && !model.isOffline && !model.isPurchaseProcessing)
      #expect(model["gold"] == nil)
      #expect(model.state == harness.states.last)

      // A read that publishes nothing new changes nothing a view reads.
      let changed = Flag()
      withObservationTracking {
        _ = model.state
      } onChange: {
        changed.set()
      }
      _ = harness.run { client in await client.state(fetchPolicy: .cacheOnly) }
      for _ in 0..<10 { await Task.yield() }
      #expect(!changed.isSet)

      // A refresh that fails: served from cache, offline, will retry.
      _ = harness.run { client in await client.refresh() }
      harness.fetcher.answer(.failure(.transient(status: 503)))
      harness.runtime.runUntilIdle()
      await nextChange { _ = model.state }
      #expect(model.isGranted("pro") && model.isOffline)
      #expect(changed.isSet)
      #expect(model.state == harness.states.last)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(
      "an imported snapshot's origin reaches the client's updates and the model, until the first refresh",
      // It waits for changes in loops: a regression fails it at the limit, not by hanging.
      .timeLimit(.minutes(1))
    )
    func importedOrigin() async throws {
      let harness = try ClientHarness(on: .sqlite)
      let cache = try #require(harness.cache as? any CustomerInfoImporting)
      let savedAt = Fixture.requestDate.addingTimeInterval(-2 * .day)
      let previous = try CustomerInfoSnapshot(
        jsonData: Data(ClientFixture.json(requestDate: savedAt).utf8))
      let scope = ClientFixture.identity("alice").scope
      #expect(
        try cache.importSnapshot(
          SnapshotImport(snapshot: previous, savedAt: savedAt, label: "previous-sdk"), for: scope)
          == .imported)
      let imported = SnapshotOrigin.imported(label: "previous-sdk", importedAt: Fixture.requestDate)
      let model = AccessModel(client: harness.client)

      // Offline at the first launch after the upgrade: the import decides, and says so.
      harness.start(answering: .failure(.transient(status: nil)))
      while model.state?.decisions["pro"]?.evidence.isComputedOffline != true {
        await nextChange { _ = model.state }
      }
      #expect(model.isGranted("pro"))
      #expect(model["pro"]?.evidence.origin == imported)
      #expect(model["pro"]?.isHighTrust == false)
      #expect(harness.proUpdates.last?.decision.evidence.origin == imported)
      #expect(harness.states.last?.customerInfo?.decisions["pro"]?.evidence.origin == imported)

      // The first answer replaces it.
      _ = harness.run { client in await client.refresh() }
      harness.fetcher.answer(json: ClientFixture.json())
      harness.runtime.runUntilIdle()
      while model["pro"]?.evidence.origin != .refresh { await nextChange { _ = model.state } }
      #expect(model["pro"]?.isHighTrust == true)
      #expect(harness.proUpdates.last?.decision.evidence.origin == .refresh)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a purchase the server has not confirmed reads as processing")
    func purchaseProcessing() async throws {
      let harness = try ClientHarness(on: .sqlite, posts: true)
      let model = AccessModel(client: harness.client)
      harness.start(answering: Fixture.notEntitledJSON())
      await nextChange { _ = model.state }
      while model["pro"]?.state != .denied(.notEntitled) {
        await nextChange { _ = model.state }
      }
      #expect(!model.isPurchaseProcessing)
      _ = harness.run { client in
        try? await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
      }
      await nextChange { _ = model.state }
      #expect(model["pro"]?.evidence.pendingPurchase == true)
      #expect(model.isPurchaseProcessing && !model.isGranted("pro"))
      harness.poster.failEveryWaiting()
      harness.fetcher.failEveryWaiting()
      harness.runtime.runUntilIdle()
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("made after the client started, it shows the cached state in its first frame")
    func firstFrame() async throws {
      // No watched keys: what the snapshot names is still there.
      let harness = try ClientHarness(configure: { $0.watchedEntitlements = [] })
      harness.start(answering: ClientFixture.json())
      let model = AccessModel(client: harness.client)
      #expect(model.state == harness.client.currentState)
      #expect(model.isGranted("pro") && model["pro"]?.evidence.freshness == .fresh)
      #expect(model["gold"] == nil && !model.isGranted("gold"))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a released model stops following: the client keeps no subscriber for it")
    func releasedModelStops() async throws {
      let harness = try ClientHarness()
      // The harness records the stream too.
      let subscribers = { harness.client.core.withLock { $0.stateSubscribers.count } }
      let before = subscribers()
      var model: AccessModel? = AccessModel(client: harness.client)
      #expect(subscribers() == before + 1)
      harness.client.start()
      harness.runtime.runUntilIdle()
      if let model { await nextChange { _ = model.state } }
      weak let released = model
      model = nil
      #expect(released == nil)
      // The stream's subscription ends with the task; give the main actor a turn to end it.
      await Task.yield()
      #expect(subscribers() == before)
    }
  }

  /// Set once by an observation's change handler.
  final class Flag: Sendable {
    private let flag = Locked(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
  }
#endif
