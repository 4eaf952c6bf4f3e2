import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Identity (<doc:RefreshClient>): each request captures its scope; a late answer lands under it
/// and reaches a stream only while that scope is current.
@Suite("Refresh client: a late answer stays with its user")
struct IdentityRaceTests {
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a late answer for A after logIn(B) is stored under A and never reaches B",
    arguments: CacheKind.allCases)
  func lateAnswerAfterLogIn(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind)
    harness.client.start()
    harness.runtime.runUntilIdle()
    let login = harness.run { client in (try? await client.logIn("bob"))?.appUserID }
    #expect(harness.fetcher.waiting.map(\.appUserID) == ["alice", "bob"])

    harness.fetcher.answer(user: "alice", json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: stored"])
    #expect(harness.cache.access(to: "pro", for: ClientFixture.identity("alice").scope).isGranted)
    #expect(
      harness.publishedPro == [
        "alice: offlineUnavailable(no_snapshot)", "bob: offlineUnavailable(no_snapshot)",
      ])
    #expect(harness.proDecisions.allSatisfy { !$0.isGranted })
    #expect(!harness.client.access(to: "pro").isGranted)
    #expect(!login.isFinished)

    harness.fetcher.answer(user: "bob", .failure(.rejected(status: 401)))
    harness.runtime.runUntilIdle()
    #expect(login.result == "bob")
    #expect(harness.outcomes == ["alice: stored", "bob: failed"])
    #expect(harness.states.last?.appUserID == "bob")
    #expect(
      harness.states.allSatisfy {
        $0.appUserID == "alice" || !$0.activeEntitlementKeys.contains("pro")
      })
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a late answer for A after logOut() is dropped, and A's snapshot stays removed",
    arguments: CacheKind.allCases)
  func lateAnswerAfterLogOut(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind)
    try harness.startOverHourOldSnapshot()
    let logout = harness.run { client in (try? await client.logOut(to: "guest"))?.appUserID }
    #expect(try harness.cache.load(ClientFixture.identity("alice").scope) == nil)

    harness.fetcher.answer(
      user: "alice",
      json: ClientFixture.json(requestDate: Fixture.requestDate.addingTimeInterval(.hour)))
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: discardedLoggedOut"])
    #expect(try harness.cache.load(ClientFixture.identity("alice").scope) == nil)
    #expect(harness.publishedPro == ["alice: granted", "guest: offlineUnavailable(no_snapshot)"])

    harness.fetcher.answer(user: "guest", json: ClientFixture.json(status: "expired"))
    harness.runtime.runUntilIdle()
    #expect(logout.result == "guest")
    #expect(
      harness.publishedPro.last == "guest: denied(not_entitled)"
        || harness.publishedPro.last == "guest: denied(expired)")
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a logOut whose removal fails throws before switching: the user, their snapshot and no fetch")
  func logOutThatCannotRemoveSwitchesNothing() throws {
    let harness = try ClientHarness(cache: { clock, _ in
      UnremovableCache(InMemoryCustomerInfoCache(clock: clock))
    })
    harness.start(answering: ClientFixture.json())
    let published = harness.states.count
    let logout = harness.run { client -> String in
      do {
        _ = try await client.logOut(to: "guest")
        return "switched"
      } catch {
        return "\(error)"
      }
    }
    #expect(logout.result == "\(CacheError.closed)")
    #expect(harness.client.identity.appUserID == "alice")
    #expect(harness.cache.access(to: "pro", for: ClientFixture.identity("alice").scope).isGranted)
    #expect(harness.fetcher.waiting.isEmpty)
    #expect(harness.states.count == published)
    #expect(harness.client.currentState?.appUserID == "alice")
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("an access stream names the user of every decision, and a switch delivers the new one's")
  func accessUpdatesSayWhose() throws {
    let harness = try ClientHarness()
    harness.client.start()
    harness.runtime.runUntilIdle()
    let seen = Outcome<[String]>()
    harness.runtime.spawn { [client = harness.client] in
      var labels: [String] = []
      for await update in client.accessUpdates(to: "premium") {
        labels.append("\(update.appUserID): \(update.decision.state)")
        seen.set(labels)
      }
    }
    harness.runtime.runUntilIdle()
    // Neither user has a snapshot, so both decisions read the same: Bob's is delivered all
    // the same, named as his.
    _ = harness.run { client in try? await client.logIn("bob") }
    let noSnapshot = AccessState.offlineUnavailable(.noSnapshot)
    #expect(seen.result == ["alice: \(noSnapshot)", "bob: \(noSnapshot)"])
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("logOut keeps the previous snapshot when configured to")
  func logOutKeepsSnapshot() throws {
    let harness = try ClientHarness(configure: { $0.removesSnapshotOnLogOut = false })
    try harness.storeDirectly(ClientFixture.json(), user: "alice")
    harness.client.start()
    harness.runtime.runUntilIdle()
    _ = harness.run { client in try? await client.logOut(to: "guest") }
    harness.fetcher.answer(user: "alice", json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(harness.outcomes == ["alice: stored"])
    #expect(harness.cache.access(to: "pro", for: ClientFixture.identity("alice").scope).isGranted)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "A→B→A: the first session's late answer lands under A and is published once A is current again",
    arguments: CacheKind.allCases)
  func backToTheFirstUser(kind: CacheKind) throws {
    let harness = try ClientHarness(on: kind)
    harness.client.start()
    harness.runtime.runUntilIdle()
    _ = harness.run { client in try? await client.logIn("bob") }
    let backToAlice = harness.run { client in try? await client.logIn("alice") }
    // Alice's first fetch is still out; the identity change waits for a fetch of its own, which
    // leaves after it, rather than joining one that left before the switch.
    #expect(harness.fetcher.waiting.map(\.appUserID) == ["alice", "bob"])

    harness.fetcher.answer(user: "alice", json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(harness.publishedPro.last == "alice: granted")
    #expect(
      harness.fetcher.waiting.map { "\($0.appUserID) \($0.flow)" } == [
        "bob identityChange", "alice identityChange",
      ])
    #expect(!backToAlice.isFinished)

    // Bob's answer arrives while Alice is current: stored under Bob, never published.
    harness.fetcher.answer(user: "bob", json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(harness.cache.access(to: "pro", for: ClientFixture.identity("bob").scope).isGranted)
    #expect(
      harness.states.filter { $0.appUserID == "bob" }.allSatisfy {
        !$0.activeEntitlementKeys.contains("pro")
      })

    harness.fetcher.answer(
      user: "alice", json: ClientFixture.json(requestDate: Fixture.requestDate, status: "expired"))
    harness.runtime.runUntilIdle()
    #expect(backToAlice.isFinished)
    #expect(harness.outcomes == ["alice: stored", "bob: stored", "alice: stored"])
    #expect(
      harness.publishedPro.last == "alice: denied(expired)"
        || harness.publishedPro.last == "alice: denied(not_entitled)")
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("logging in as the current user changes nothing and fetches nothing")
  func logInAsSelf() throws {
    let harness = try ClientHarness()
    harness.client.start()
    harness.runtime.runUntilIdle()
    let login = harness.run { client in (try? await client.logIn("alice"))?.appUserID }
    #expect(login.result == "alice")
    #expect(harness.fetcher.requests.count == 1)
    #expect(harness.states.count == 1)
  }

  /// Swift's `==` calls `café` with a composed `é` and with `e` and a combining accent equal;
  /// the cache hashes their bytes into two scopes, so they are two users. The client compared
  /// them with `==`: logIn did nothing, and the second user was granted the first's `pro`.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("an app-user ID that is another's in another Unicode form is another user")
  func logInAsACanonicallyEquivalentID() throws {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"
    #expect(composed == decomposed)
    let harness = try ClientHarness(user: composed)
    harness.client.start()
    harness.runtime.runUntilIdle()
    harness.fetcher.answer(json: ClientFixture.json())
    harness.runtime.runUntilIdle()
    #expect(harness.client.access(to: "pro").isGranted)

    let login = harness.run { client in (try? await client.logIn(decomposed))?.appUserID }
    #expect(harness.client.identity.scope == ClientFixture.identity(decomposed).scope)
    #expect(harness.fetcher.waiting.map { Array($0.appUserID.utf8) } == [Array(decomposed.utf8)])
    #expect(!harness.client.access(to: "pro").isGranted)
    harness.fetcher.answer(.failure(.transient(status: 503)))
    harness.runtime.runUntilIdle()
    #expect(login.result??.utf8.elementsEqual(decomposed.utf8) == true)
    #expect(!harness.client.access(to: "pro").isGranted)
    let last = try #require(harness.states.last)
    #expect(last.appUserID.utf8.elementsEqual(decomposed.utf8))
    #expect(last.decisions["pro"].map { !$0.isGranted } == true)
    var sameStateOtherUser = last
    sameStateOtherUser.appUserID = composed
    #expect(sameStateOtherUser != last)
    #expect(
      AccessUpdate(appUserID: composed, decision: harness.client.access(to: "pro"))
        != AccessUpdate(appUserID: decomposed, decision: harness.client.access(to: "pro")))
  }

  /// Both users' cached states decide the same: the client took the switch for no change
  /// when it compared users as Swift compares strings, and neither the state nor the stream
  /// said that another user was now current.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("a switch between two Unicode forms publishes the new user even when decisions match")
  func switchBetweenFormsIsPublishedWhenDecisionsMatch() throws {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"
    let harness = try ClientHarness(user: composed)
    try harness.storeDirectly(ClientFixture.json(), user: composed)
    try harness.storeDirectly(ClientFixture.json(), user: decomposed)
    // The start fetch stays unanswered, so both cached states stay as stored: the same.
    harness.client.start()
    harness.runtime.runUntilIdle()
    let before = harness.states.count
    let updatesBefore = harness.proUpdates.count
    #expect(harness.proDecisions.last?.isGranted == true)

    _ = harness.run { client in (try? await client.logIn(decomposed))?.appUserID }
    let published = harness.states.dropFirst(before)
    #expect(published.contains { $0.appUserID.utf8.elementsEqual(decomposed.utf8) })
    let delivered = harness.proUpdates.dropFirst(updatesBefore)
    #expect(delivered.contains { $0.appUserID.utf8.elementsEqual(decomposed.utf8) })
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("an empty app-user ID is rejected and nothing changes")
  func emptyUser() throws {
    let harness = try ClientHarness()
    harness.client.start()
    harness.runtime.runUntilIdle()
    let login = harness.run { client -> String in
      do {
        _ = try await client.logIn("")
        return "switched"
      } catch {
        return "\(error)"
      }
    }
    #expect(login.result == "invalid scope: app-user ID is empty")
    #expect(harness.client.identity.appUserID == "alice")
  }
}

/// A cache whose removals fail, as a full disk or a closed file would make them.
final class UnremovableCache: ForwardingCustomerInfoCache {
  let base: InMemoryCustomerInfoCache

  init(_ base: InMemoryCustomerInfoCache) {
    self.base = base
  }

  func remove(_ scope: CacheScope) throws(CacheError) {
    throw .closed
  }
}
