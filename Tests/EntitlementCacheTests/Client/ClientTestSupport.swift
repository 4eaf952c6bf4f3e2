import EntitlementCacheTesting
import Foundation
import TestSupport
import Testing

@testable import EntitlementCache

/// Requests that wait until a test answers them by hand: the fetcher's and the poster's.
///
/// A cancelled request (the client stopped, or timed it out) fails at once, as URLSession's
/// does: a task suspended here for good would hold the client, its cache and the runtime after
/// the test, which the Address Sanitizer's leak check reports.
final class HandAnswered<Request: Sendable, Answer: Sendable>: Sendable {
  private struct Pending {
    let id: UUID
    let request: Request
    let continuation: CheckedContinuation<Result<Answer, FetchFailure>, Never>
  }

  private let state = Locked<(pending: [Pending], made: [Request], keepsCancelled: Bool)>(
    ([], [], false))

  /// From now on a cancelled request keeps waiting for its answer, as a transport that ignores
  /// cancellation does: for the tests of what the client does with an answer that comes late.
  func keepCancelledRequests() { state.withLock { $0.keepsCancelled = true } }

  /// Waits for the test's answer to `request`.
  func wait(for request: Request) async -> Result<Answer, FetchFailure> {
    let id = UUID()
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let cancelled = state.withLock { state -> Bool in
          state.made.append(request)
          guard !Task.isCancelled || state.keepsCancelled else { return true }
          state.pending.append(Pending(id: id, request: request, continuation: continuation))
          return false
        }
        if cancelled { continuation.resume(returning: .failure(.transient(status: nil))) }
      }
    } onCancel: {
      guard !state.withLock({ $0.keepsCancelled }) else { return }
      take { $0.id == id }?.continuation.resume(returning: .failure(.transient(status: nil)))
    }
  }

  /// Every request made so far, in order.
  var requests: [Request] { state.withLock { $0.made } }
  /// The requests still waiting for an answer.
  var waiting: [Request] { state.withLock { $0.pending.map(\.request) } }

  /// Answers the oldest waiting request that `matches`; false when none waits.
  func answer(_ result: Result<Answer, FetchFailure>, where matches: (Request) -> Bool) -> Bool {
    guard let pending = take({ matches($0.request) }) else { return false }
    pending.continuation.resume(returning: result)
    return true
  }

  /// Fails every waiting request, so no task stays suspended here once a test has ended.
  func failEveryWaiting() {
    let pending = state.withLock { state in
      defer { state.pending = [] }
      return state.pending
    }
    for waiting in pending {
      waiting.continuation.resume(returning: .failure(.transient(status: nil)))
    }
  }

  private func take(_ matches: (Pending) -> Bool) -> Pending? {
    state.withLock { state in
      guard let index = state.pending.firstIndex(where: matches) else { return nil }
      return state.pending.remove(at: index)
    }
  }
}

/// A fetcher whose every request waits until the test answers it by hand.
final class HandAnsweredFetcher: CustomerInfoFetcher {
  private let requestsWaiting = HandAnswered<FetchRequest, FetchedCustomerInfo>()

  func fetchCustomerInfo(_ request: FetchRequest) async throws(FetchFailure)
    -> FetchedCustomerInfo
  {
    try await requestsWaiting.wait(for: request).get()
  }

  /// Every request made so far, in order.
  var requests: [FetchRequest] { requestsWaiting.requests }
  /// The requests still waiting for an answer.
  var waiting: [FetchRequest] { requestsWaiting.waiting }

  /// Fails every waiting request.
  func failEveryWaiting() { requestsWaiting.failEveryWaiting() }

  /// See ``HandAnswered/keepCancelledRequests()``.
  func keepCancelledRequests() { requestsWaiting.keepCancelledRequests() }

  /// Answers the oldest waiting request for `user` (any user when nil).
  func answer(
    user: String? = nil, _ result: Result<FetchedCustomerInfo, FetchFailure>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    guard requestsWaiting.answer(result, where: { user == nil || $0.appUserID == user }) else {
      Issue.record("no request waiting for \(user ?? "anyone")", sourceLocation: sourceLocation)
      return
    }
  }

  /// Answers the oldest waiting request for `user` with `json`.
  func answer(user: String? = nil, json: String, sourceLocation: SourceLocation = #_sourceLocation)
  {
    answer(
      user: user, .success(FetchedCustomerInfo(body: Data(json.utf8))),
      sourceLocation: sourceLocation)
  }
}

/// A poster whose every post waits until the test answers it by hand.
final class HandAnsweredPoster: PurchasePoster {
  private let postsWaiting = HandAnswered<PurchasePostRequest, PurchasePostResult>()

  func post(_ request: PurchasePostRequest) async throws(FetchFailure) -> PurchasePostResult {
    try await postsWaiting.wait(for: request).get()
  }

  /// Every post made so far, in order.
  var requests: [PurchasePostRequest] { postsWaiting.requests }
  /// `user: transaction #attempt` for every post made so far.
  var posted: [String] {
    requests.map { "\($0.appUserID): \($0.transactionID) #\($0.attempt)" }
  }
  /// The posts still waiting for an answer.
  var waiting: [PurchasePostRequest] { postsWaiting.waiting }

  /// Fails every waiting post.
  func failEveryWaiting() { postsWaiting.failEveryWaiting() }

  /// Answers the oldest waiting post.
  func answer(
    _ result: Result<PurchasePostResult, FetchFailure>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    guard postsWaiting.answer(result, where: { _ in true }) else {
      Issue.record("no post waiting", sourceLocation: sourceLocation)
      return
    }
  }
}

/// The client tests' identities on the sample scope, and their one-`pro` snapshots by `Date`.
enum ClientFixture {
  static func identity(_ user: String) -> ClientIdentity {
    do {
      return try ClientIdentity(
        sdkKey: SampleScope.sdkKey, installationID: SampleScope.installation,
        environment: .production, appUserID: user)
    } catch {
      preconditionFailure("bad fixture identity: \(error)")
    }
  }

  /// A snapshot taken at `requestDate` granting `pro` until `proExpiresAt`.
  static func json(
    requestDate: Date = Fixture.requestDate, proExpiresAt: Date? = nil,
    verification: String = "verified",
    status: String = "active", product: String = "pro_monthly"
  ) -> String {
    let expires = (proExpiresAt ?? requestDate.addingTimeInterval(30 * .day))
    return SampleSnapshot.single(
      requestDate: ISO8601.format(requestDate), verification: verification, status: status,
      expiresAt: ISO8601.format(expires), productId: product)
  }
}

/// A client on a simulated runtime, with every published state, decision and report recorded.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class ClientHarness: Sendable {
  let runtime: SimulatedRuntime
  let fetcher = HandAnsweredFetcher()
  let poster = HandAnsweredPoster()
  let cache: any CustomerInfoCache
  let client: EntitlementClient
  private let recorded = Locked<
    (
      states: [ClientState], pro: [AccessUpdate], reports: [RefreshReport], times: [Date],
      purchases: [PurchaseUpdate]
    )
  >(([], [], [], [], []))

  /// Where an SQLite cache's file lives, kept as long as the harness.
  let directory: TemporaryDirectory

  /// - Parameter posts: Whether the client posts purchases through ``poster``.
  init(
    user: String = "alice", on kind: CacheKind = .inMemory,
    configure: (inout ClientConfiguration) -> Void = { _ in },
    posts: Bool = false,
    cache makeCache: ((CacheClock, TemporaryDirectory) throws -> any CustomerInfoCache)? = nil
  ) throws {
    runtime = SimulatedRuntime(start: Fixture.requestDate, bootSession: "boot-1")
    directory = try TemporaryDirectory()
    if let makeCache {
      cache = try makeCache(runtime.clock, directory)
    } else {
      cache = try kind.make(clock: runtime.clock, in: directory)
    }
    var configuration = ClientConfiguration()
    configuration.watchedEntitlements = ["pro"]
    configure(&configuration)
    if posts, let queueing = cache as? any CustomerInfoCache & PurchaseQueueStore {
      client = try EntitlementClient(
        cache: queueing, fetcher: fetcher, identity: ClientFixture.identity(user),
        configuration: configuration, runtime: runtime, poster: poster)
    } else {
      client = try EntitlementClient(
        cache: cache, fetcher: fetcher, identity: ClientFixture.identity(user),
        configuration: configuration, runtime: runtime)
    }
    let client = self.client
    let runtime = self.runtime
    // Weakly: the streams end only when the client stops, which the harness's deinit does.
    runtime.spawn { [weak self] in
      for await state in client.updates {
        let now = runtime.manualClock.now
        self?.recorded.withLock {
          $0.states.append(state)
          $0.times.append(now)
        }
      }
    }
    runtime.spawn { [weak self] in
      for await update in client.accessUpdates(to: "pro") {
        self?.recorded.withLock { $0.pro.append(update) }
      }
    }
    runtime.spawn { [weak self] in
      for await report in client.refreshReports {
        self?.recorded.withLock { $0.reports.append(report) }
      }
    }
    runtime.spawn { [weak self] in
      for await update in client.purchaseUpdates {
        self?.recorded.withLock { $0.purchases.append(update) }
      }
    }
    runtime.runUntilIdle()
  }

  /// Stops the client and lets every task it left end: a task suspended for good would hold
  /// the client, its cache and the runtime, which the Address Sanitizer's leak check reports.
  deinit {
    client.stop()
    fetcher.failEveryWaiting()
    poster.failEveryWaiting()
    runtime.runUntilIdle()
  }

  var states: [ClientState] { recorded.withLock { $0.states } }
  /// The virtual wall-clock time each state was published at.
  var publishTimes: [Date] { recorded.withLock { $0.times } }
  var proDecisions: [AccessDecision] { recorded.withLock { $0.pro }.map(\.decision) }
  /// Every delivery of the `pro` stream, with the user it is for.
  var proUpdates: [AccessUpdate] { recorded.withLock { $0.pro } }
  var reports: [RefreshReport] { recorded.withLock { $0.reports } }
  /// `user: transaction state` for every purchase update.
  var purchaseLog: [String] {
    recorded.withLock { $0.purchases }.map {
      "\($0.appUserID): \($0.purchase.transactionID) \($0.purchase.state.rawValue)"
    }
  }
  /// `user: outcome` for every report.
  var outcomes: [String] { reports.map { "\($0.appUserID): \($0.outcome.name)" } }
  /// The state of `pro` in every published state.
  var publishedPro: [String] {
    states.map { state in
      "\(state.appUserID): \(state.decisions["pro"].map { label($0.state) } ?? "-")"
    }
  }

  /// Runs `body` on the simulation and returns a handle whose value is read once it ended.
  func run<Value: Sendable>(_ body: @escaping @Sendable (EntitlementClient) async -> Value)
    -> Outcome<Value>
  {
    let outcome = Outcome<Value>()
    let client = self.client
    runtime.spawn { outcome.set(await body(client)) }
    runtime.runUntilIdle()
    return outcome
  }

  /// Starts the client and answers its start fetch with `result`, running until idle after
  /// each.
  func start(answering result: Result<FetchedCustomerInfo, FetchFailure>) {
    client.start()
    runtime.runUntilIdle()
    fetcher.answer(result)
    runtime.runUntilIdle()
  }

  /// Starts the client and answers its start fetch with `json`.
  func start(answering json: String) {
    start(answering: .success(FetchedCustomerInfo(body: Data(json.utf8))))
  }

  /// Alice's snapshot stored, an hour passed (stale in the foreground), then the client
  /// started, running until idle: its start fetch is waiting.
  func startOverHourOldSnapshot() throws {
    try storeDirectly(ClientFixture.json(), user: "alice")
    runtime.advance(by: .hour)
    client.start()
    runtime.runUntilIdle()
  }

  /// A purchase made offline: `purchaseCompleted` of `transactionID`, its post failing as with
  /// no network, then the refresh after it answered with `refresh`, running until idle after
  /// each. The call's result once it has ended.
  @discardableResult
  func purchaseWhilePostsFail(
    _ transactionID: String, refresh: Result<FetchedCustomerInfo, FetchFailure>
  ) -> Outcome<PurchaseSyncResult?> {
    let purchase = run { client in
      try? await client.purchaseCompleted(PurchaseFixture.purchase(transactionID))
    }
    poster.answer(.failure(.transient(status: nil)))
    runtime.runUntilIdle()
    fetcher.answer(refresh)
    runtime.runUntilIdle()
    return purchase
  }

  /// Answers every fetch waiting, and every one a landed answer starts, with `json`, running
  /// until idle after each.
  func answerEveryFetch(json: String) {
    while !fetcher.waiting.isEmpty {
      fetcher.answer(json: json)
      runtime.runUntilIdle()
    }
  }

  /// Stores `json` for `user` straight into the cache, as another process would.
  func storeDirectly(_ json: String, user: String) throws {
    try cache.store(
      CustomerInfoSnapshot(jsonData: Data(json.utf8)), for: ClientFixture.identity(user).scope)
  }
}

/// The result of a task run on the simulation, once it has ended.
final class Outcome<Value: Sendable>: Sendable {
  private let value = Locked<Value?>(nil)
  func set(_ newValue: Value) { value.withLock { $0 = newValue } }
  var result: Value? { value.withLock { $0 } }
  var isFinished: Bool { value.withLock { $0 != nil } }
}

/// `granted`, `denied(expired)`, `offlineUnavailable(noSnapshot)`: a state as tests compare it.
func label(_ state: AccessState) -> String {
  switch state {
  case .granted: "granted"
  case .denied(let reason): "denied(\(reason.rawValue))"
  case .offlineUnavailable(let reason): "offlineUnavailable(\(reason.rawValue))"
  case .deviceBlocked: "deviceBlocked"
  }
}

/// The two caches every client behaviour is checked on.
enum CacheKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case inMemory
  case sqlite

  var testDescription: String { rawValue }

  func make(clock: CacheClock, in directory: TemporaryDirectory) throws -> any CustomerInfoCache {
    switch self {
    case .inMemory:
      return InMemoryCustomerInfoCache(clock: clock)
    case .sqlite:
      var configuration = CacheConfiguration()
      configuration.pruneOnOpen = false
      // The cache's own check for other connections' writes runs on the real monotonic clock;
      // the client's runs on the simulated one. Checking on every read leaves only the client's.
      configuration.changeCheckInterval = .zero
      return try SQLiteCustomerInfoCache(
        path: directory.path("cache.sqlite"), configuration: configuration, clock: clock)
    }
  }
}
