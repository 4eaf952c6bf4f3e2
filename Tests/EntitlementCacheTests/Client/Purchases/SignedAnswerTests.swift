import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// The refresh client with a cache that has trust roots: the fetcher's signature and the
/// request's nonce reach the store (<doc:TrustedSnapshots>).
@Suite("Refresh client: signed answers")
struct SignedAnswerTests {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func harness(_ kind: CacheKind) throws -> ClientHarness {
    let roots = try TestSigner.roots()
    return try ClientHarness(
      on: kind,
      cache: { clock, directory in
        switch kind {
        case .inMemory:
          return InMemoryCustomerInfoCache(clock: clock, trustRoots: roots)
        case .sqlite:
          var configuration = CacheConfiguration()
          configuration.pruneOnOpen = false
          configuration.changeCheckInterval = .zero
          configuration.trustRoots = roots
          return try SQLiteCustomerInfoCache(
            path: directory.path("cache.sqlite"), configuration: configuration, clock: clock)
        }
      })
  }

  /// Answers the oldest waiting request with `json`, signed for its scope over `nonce` (the
  /// request's own when nil).
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  static func answerSigned(
    _ harness: ClientHarness, json: String, nonce: [UInt8]? = nil, scope: CacheScope? = nil
  ) throws {
    let request = try #require(harness.fetcher.waiting.first)
    let body = Data(json.utf8)
    let snapshot = try CustomerInfoSnapshot(jsonData: body)
    let signature = try TestSigner.sign(
      body, requestDate: snapshot.customerInfo.requestDate, scope: scope ?? request.scope,
      nonce: nonce ?? request.nonce)
    harness.fetcher.answer(.success(FetchedCustomerInfo(body: body, signature: signature)))
    harness.runtime.runUntilIdle()
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "an answer signed over the request's nonce is published verified", arguments: CacheKind.allCases
  )
  func verifiedThroughTheClient(_ kind: CacheKind) throws {
    let harness = try Self.harness(kind)
    harness.client.start()
    harness.runtime.runUntilIdle()
    let request = try #require(harness.fetcher.waiting.first)
    #expect(request.nonce.count == 16)
    try Self.answerSigned(harness, json: ClientFixture.json())
    let pro = try #require(harness.proDecisions.last)
    #expect(pro.isGranted && pro.isHighTrust)
    #expect(pro.evidence.verification == .known(.verified))
    let stored = try #require(try harness.cache.load(request.scope)?.snapshot)
    #expect(stored.requestNonce == request.nonce)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a replayed answer, signed over another nonce, is stored failed(nonceMismatch)",
    arguments: CacheKind.allCases)
  func replayedNonce(_ kind: CacheKind) throws {
    let harness = try Self.harness(kind)
    harness.client.start()
    harness.runtime.runUntilIdle()
    try Self.answerSigned(
      harness, json: ClientFixture.json(), nonce: Array(repeating: 9, count: 16))
    let pro = try #require(harness.proDecisions.last)
    #expect(pro.evidence.verification == .known(.failed))
    #expect(pro.evidence.verificationFailure == .nonceMismatch)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a failed answer over a verified snapshot is a failed refresh; the verified one stays",
    arguments: CacheKind.allCases)
  func failedOverVerified(_ kind: CacheKind) throws {
    let harness = try Self.harness(kind)
    harness.client.start()
    harness.runtime.runUntilIdle()
    try Self.answerSigned(harness, json: ClientFixture.json())
    harness.runtime.advance(by: .minute * 10)
    _ = harness.run { client in await client.refresh() }
    let later = ClientFixture.json(
      requestDate: Fixture.requestDate.addingTimeInterval(10 * .minute))
    // Signed for another user: the server answered for someone else.
    try Self.answerSigned(harness, json: later, scope: ClientFixture.identity("mallory").scope)
    #expect(harness.outcomes.last == "alice: verificationFailed")
    let scope = ClientFixture.identity("alice").scope
    let loaded = try #require(try harness.cache.load(scope))
    #expect(loaded.snapshot?.customerInfo.requestDate == Fixture.requestDate)
    #expect(loaded.bookkeeping.lastRefreshFailureReason == "verification_failed_scope_mismatch")
    let pro = harness.cache.access(to: "pro", for: scope)
    #expect(pro.evidence.verification == .known(.verified))
    #expect(pro.evidence.freshness == .offline)
  }
}
