import CSQLite
import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

// MARK: Scenarios of the client

extension DiagnosticsTests {
  /// A harness whose client and SQLite cache tell `journal`.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func harness(
    _ journal: DiagnosticJournal, posts: Bool = false, vfs: TestVFS? = nil
  ) throws -> ClientHarness {
    try ClientHarness(
      configure: { $0.onDiagnostic = journal.handler }, posts: posts,
      cache: { clock, directory in
        var configuration = CacheConfiguration()
        configuration.changeCheckInterval = .zero
        configuration.onDiagnostic = journal.handler
        configuration.vfsName = vfs?.name
        return try SQLiteCustomerInfoCache(
          path: directory.path("cache.sqlite"), configuration: configuration, clock: clock)
      })
  }

  /// A transient failure is told with its flow and the retry it scheduled; a rejected answer
  /// with no retry; a stored answer with nothing.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func refreshFailures() throws -> [Diagnostic] {
    let journal = DiagnosticJournal()
    let harness = try harness(journal)
    harness.start(answering: .failure(.transient(status: 503)))
    let scope = ClientFixture.identity("alice").scope
    guard case .retryScheduled(.refresh, let delay)? = journal.events.last else {
      Issue.record("expected a retry, told \(journal.names)")
      return journal.diagnostics
    }
    #expect(delay > .zero && delay <= .seconds(2))
    #expect(
      journal.events.first
        == .refreshFailed(flow: .start, reason: .failed(.transient(status: 503))))
    #expect(journal.diagnostics.allSatisfy { $0.scope == scope })
    harness.runtime.advance(by: delay)
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(journal.names == ["refresh_failed", "retry_scheduled"])
    _ = harness.run { client in await client.refresh() }
    harness.fetcher.answer(.failure(.rejected(status: 401)))
    harness.runtime.runUntilIdle()
    #expect(
      journal.events.last
        == .refreshFailed(flow: .explicit, reason: .failed(.rejected(status: 401))))
    #expect(journal.names.count == 3)
    return journal.diagnostics
  }

  /// The device clock set back past the tolerance: told once, not at every publish after it.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func clockRollback() throws -> [Diagnostic] {
    let journal = DiagnosticJournal()
    let harness = try harness(journal)
    harness.start(answering: ClientFixture.json())
    harness.runtime.advance(by: .hour)
    _ = harness.run { client in await client.state(fetchPolicy: .cacheOnly) }
    harness.runtime.manualClock.set(Fixture.requestDate.addingTimeInterval(-.day))
    _ = harness.run { client in await client.state(fetchPolicy: .cacheOnly) }
    harness.runtime.advance(by: .minute)
    _ = harness.run { client in await client.state(fetchPolicy: .cacheOnly) }
    #expect(journal.names == ["clock_rollback_suspected"])
    #expect(journal.diagnostics.first?.scope == ClientFixture.identity("alice").scope)
    return journal.diagnostics
  }

  /// A purchase observed while the file is refused: held, told once though delivered twice.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func purchaseHeld() throws -> [Diagnostic] {
    let journal = DiagnosticJournal()
    // Kept as long as the cache: the file is opened through it.
    let vfs = try TestVFS()
    let (harness, _) = try HeldPurchaseTests.lockedClient(vfs, onDiagnostic: journal.handler)
    #expect(HeldPurchaseTests.complete("tx1", on: harness)?.heldInMemory == ["tx1"])
    #expect(HeldPurchaseTests.complete("tx1", on: harness)?.heldInMemory == ["tx1"])
    let held = journal.events.filter { $0.name == "purchase_held" }
    #expect(held == [.purchaseHeld(transactionID: "tx1")])
    #expect(journal.names.first == "storage_unavailable")
    withExtendedLifetime(vfs) {}
    return journal.diagnostics
  }

  /// A post that fails transiently is told with its backoff; a conflict with its resolution.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func purchasePosts() throws -> [Diagnostic] {
    let journal = DiagnosticJournal()
    let harness = try harness(journal, posts: true)
    harness.start(answering: ClientFixture.json())
    _ = harness.run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase("tx1"))
    }
    harness.poster.answer(.failure(.transient(status: nil)))
    harness.runtime.runUntilIdle()
    guard case .retryScheduled(.purchasePost("tx1"), let delay)? = journal.events.last else {
      Issue.record("expected a post retry, told \(journal.names)")
      return journal.diagnostics
    }
    #expect(delay >= .milliseconds(1500) && delay <= .milliseconds(2500))
    harness.runtime.advance(by: delay)
    harness.poster.answer(.success(.conflict(resolution: .loginRequired)))
    harness.runtime.runUntilIdle()
    harness.fetcher.failEveryWaiting()
    harness.runtime.runUntilIdle()
    #expect(
      journal.events.contains(.purchaseConflict(transactionID: "tx1", resolution: .loginRequired)))
    return journal.diagnostics
  }
}
