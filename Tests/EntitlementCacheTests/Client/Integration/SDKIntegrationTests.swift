import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// A transport the test answers by path, in the shape of the article's example.
final class ScriptedTransport: HTTPTransport {
  private let answers = Locked<[(status: Int, body: Data)]>([])
  private let paths = Locked<[String]>([])

  func queue(status: Int, body: String) {
    answers.withLock { $0.append((status, Data(body.utf8))) }
  }
  var requestedPaths: [String] { paths.withLock { $0 } }

  func get(_ path: String, headers: [String: String]) async throws -> (status: Int, body: Data) {
    try answer(path)
  }

  func post(_ path: String, headers: [String: String], body: Data) async throws
    -> (status: Int, body: Data)
  {
    try answer("POST \(path) as \(headers["X-App-User-ID"] ?? "?")")
  }

  private func answer(_ request: String) throws -> (status: Int, body: Data) {
    paths.withLock { $0.append(request) }
    guard let answer = answers.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
      throw URLError(.notConnectedToInternet)
    }
    return answer
  }
}

@Suite("The refresh client article: plugging EntitlementCache into an SDK")
struct SDKIntegrationTests {
  @Test("the article shows exactly the example this file compiles")
  func articleShowsTheExample() throws {
    let here = URL(fileURLWithPath: #filePath)
    let article = try Documentation.article("RefreshClient")
    let example = try String(
      contentsOf: here.deletingLastPathComponent().appending(path: "SDKIntegrationExample.swift"),
      encoding: .utf8)
    guard let begin = example.range(of: "// RefreshClient.md: begin\n"),
      let end = example.range(of: "// RefreshClient.md: end\n")
    else {
      Issue.record("markers missing")
      return
    }
    let code = example[begin.upperBound..<end.lowerBound]
    let shown = article.contains("```swift\n" + code + "```\n")
    #expect(
      shown, "RefreshClient.md's integration example drifted from SDKIntegrationExample.swift")
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @MainActor
  @Test("the example: cached access at launch, the model follows the stream, logIn switches")
  func exampleWorks() async throws {
    let directory = try TemporaryDirectory()
    let runtime = SimulatedRuntime(start: Fixture.requestDate, bootSession: "boot-1")
    let transport = ScriptedTransport()
    transport.queue(status: 200, body: ClientFixture.json())
    let purchases = try Purchases(
      apiKey: SampleScope.sdkKey, appUserID: "alice", installationID: SampleScope.installation,
      cacheFile: directory.path("purchases.sqlite"), transport: transport, clock: runtime.clock,
      runtime: runtime)
    let model = ProAccessModel()
    let watching = Task { await model.watch(purchases) }
    await settle(runtime) { model.message == "Pro" }
    #expect(model.isUnlocked)
    #expect(model.message == "Pro")
    #expect(transport.requestedPaths == ["/v1/subscribers/alice"])

    transport.queue(status: 404, body: "{}")
    let login = runtime.spawn { try? await purchases.logIn("bob") }
    await settle(runtime) { model.message == "Can't check your subscription: try again online" }
    #expect(await login.value?.appUserID == "bob")
    #expect(!model.isUnlocked)
    #expect(model.message == "Can't check your subscription: try again online")

    // Offline: the transport has nothing queued.
    let back = runtime.spawn { try? await purchases.logIn("alice") }
    await settle(runtime) { model.message == "Pro (offline)" }
    #expect(await back.value?.decisions["pro"]?.isGranted == true)
    #expect(model.message == "Pro (offline)")
    watching.cancel()
    purchases.client.stop()
    await settle(runtime)
  }

  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @MainActor
  @Test("the example: a purchase made offline says processing, and is posted as its buyer later")
  func purchaseOffline() async throws {
    let directory = try TemporaryDirectory()
    let runtime = SimulatedRuntime(start: Fixture.requestDate, bootSession: "boot-1")
    let transport = ScriptedTransport()
    let free = Fixture.notEntitledJSON()
    transport.queue(status: 200, body: free)
    let purchases = try Purchases(
      apiKey: SampleScope.sdkKey, appUserID: "alice", installationID: SampleScope.installation,
      cacheFile: directory.path("purchases.sqlite"), transport: transport, clock: runtime.clock,
      runtime: runtime)
    let model = ProAccessModel()
    let watching = Task { await model.watch(purchases) }
    await settle(runtime) { model.message == "Upgrade to Pro" }
    #expect(model.message == "Upgrade to Pro")
    // Offline: the post and the refresh after it fail.
    let bought = runtime.spawn {
      try? await purchases.purchaseCompleted(
        transactionID: "tx1", productID: "pro_monthly", signedTransaction: Data("jws".utf8))
    }
    await settle(runtime) { model.message == "Purchase processing…" }
    #expect(await bought.value?.pending.map(\.transactionID) == ["tx1"])
    #expect(model.message == "Purchase processing…")
    // Bob logs in on the same device before the network is back.
    transport.queue(status: 200, body: free)
    _ = runtime.spawn { try? await purchases.logIn("bob") }
    await settle(runtime)
    transport.queue(status: 200, body: ClientFixture.json(requestDate: Fixture.requestDate))
    runtime.advance(by: .seconds(5))
    purchases.networkBecameReachable()
    await settle(runtime) { model.message == "Upgrade to Pro" }
    #expect(
      transport.requestedPaths.filter { $0.hasPrefix("POST") } == [
        "POST /v1/receipts as alice", "POST /v1/receipts as alice",
      ])
    #expect(model.message == "Upgrade to Pro")
    watching.cancel()
    purchases.client.stop()
    await settle(runtime)
  }

  /// Runs the simulation until idle and lets the main actor take what it delivered.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @MainActor
  private func settle(_ runtime: SimulatedRuntime) async {
    for _ in 0..<5 {
      runtime.runUntilIdle()
      await Task.yield()
    }
  }

  /// ``settle(_:)``, then more rounds until `delivered` holds: an update reaches the model
  /// through the main actor's queue, which a loaded machine served later than five rounds once
  /// (two fuzzers on both cores). Bounded, so an update that never comes still fails the
  /// expectation after it.
  @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
  @MainActor
  private func settle(_ runtime: SimulatedRuntime, until delivered: () -> Bool) async {
    await settle(runtime)
    for _ in 0..<10_000 where !delivered() {
      runtime.runUntilIdle()
      await Task.yield()
    }
  }
}
