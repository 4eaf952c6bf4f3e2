import EntitlementCache
import EntitlementCacheTesting

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The server of a script, as the client's ``CustomerInfoFetcher``: each fetch for a user takes
/// that user's next scripted answer and sends it after its latency, on the virtual clock.
///
/// The user is the request's raw app-user ID, which in a simulation is the script's label.
/// With no answer left for the user, the fetch fails `transient` at once: the network is gone.
///
/// It is the client's ``PurchasePoster`` too: each post for a user takes that user's next
/// scripted post answer (none left: `transient`). The user is the observer's label: the client
/// posts as whoever first observed the purchase.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class ScriptedServer: CustomerInfoFetcher, PurchasePoster {
  private struct State {
    var remaining: [String: [ScriptedAnswer]]
    var remainingPosts: [String: [ScriptedPostAnswer]]
    var inFlight = 0
    /// Each fetch request not yet reported, by user, with when it arrived, in arrival order.
    var fetchRequests: [(user: String, arrived: Int64)] = []
  }

  private let state: Locked<State>
  private let runtime: SimulatedRuntime
  /// The start in milliseconds: a request arrives at the start plus virtual time elapsed.
  private let start: Int64
  /// Signs each snapshot answer, when the script's answers are signed.
  private let signer: SimulationSigner?
  /// The app, for the scope an `other_user` answer is signed for.
  private let identity: SimulationScript.Identity

  init(
    answers: [String: [ScriptedAnswer]], posts: [String: [ScriptedPostAnswer]],
    runtime: SimulatedRuntime, start: Int64, signer: SimulationSigner?,
    identity: SimulationScript.Identity
  ) {
    state = Locked(State(remaining: answers, remainingPosts: posts))
    self.runtime = runtime
    self.start = start
    self.signer = signer
    self.identity = identity
  }

  /// The true virtual time, in milliseconds since the Unix epoch: when a request arrives.
  private var now: Int64 { start + SimulationTime.milliseconds(runtime.elapsed) }

  /// How many answers are on their way: requests that took an answer whose latency has not
  /// passed. The run goes on while one is, so a late answer is not cut off by the last step.
  var answersInFlight: Int { state.withLock { $0.inFlight } }

  /// When `user`'s latest fetch request arrived, forgetting it and any before it: the client
  /// sends one request a user at a time and reports it when it ends (its answer landed, or
  /// the client's own timeout gave up on it), so the report being written now is that
  /// request's; an earlier one was given up on or lost with a killed process. Nil when no
  /// request arrived since the last report.
  func takeArrival(ofFetchFor user: String) -> Int64? {
    state.withLock { state in
      let latest = state.fetchRequests.last { $0.user == user }?.arrived
      state.fetchRequests.removeAll { $0.user == user }
      return latest
    }
  }

  func fetchCustomerInfo(_ request: FetchRequest) async throws(FetchFailure)
    -> FetchedCustomerInfo
  {
    let requestedAt = now
    state.withLock { $0.fetchRequests.append((request.appUserID, requestedAt)) }
    let (taken, arrived) = try await take(\.remaining, for: request.appUserID)
    guard let answer = taken else { throw .transient(status: nil) }
    switch answer.reply {
    case .failure(let failure):
      throw failure
    case .snapshot(let fields):
      let body = Self.encode(fields, arrived: arrived)
      return FetchedCustomerInfo(
        body: body,
        signature: sign(
          body, for: request.scope, nonce: request.nonce, as: answer.signature,
          user: request.appUserID))
    }
  }

  /// The signature of `body` for `scope`, as `mode` says; nil in an unsigned script.
  private func sign(
    _ body: Data, for scope: CacheScope, nonce: [UInt8], as mode: ScriptedSignature,
    user: String
  ) -> ResponseSignature? {
    // A body that does not decode reaches the client unsigned, as the invalid response it is.
    guard let signer, let snapshot = try? CustomerInfoSnapshot(jsonData: body),
      let otherUser = try? CacheScope(
        sdkKey: identity.sdkKey, installationID: identity.installation,
        environment: identity.environment, appUserID: user + " (another user)")
    else { return nil }
    return signer.sign(
      body, requestDate: snapshot.customerInfo.requestDate, scope: scope, nonce: nonce,
      as: mode, otherUser: otherUser)
  }

  func post(_ request: PurchasePostRequest) async throws(FetchFailure) -> PurchasePostResult {
    let (taken, arrived) = try await take(\.remainingPosts, for: request.appUserID)
    guard let answer = taken else { throw .transient(status: nil) }
    switch answer.reply {
    case .failure(let failure):
      throw failure
    case .conflict(let resolution):
      return .conflict(resolution: resolution)
    case .synced(nil):
      return .synced(nil)
    case .synced(let fields?):
      let body = Self.encode(fields, arrived: arrived)
      return .synced(
        FetchedCustomerInfo(
          body: body,
          signature: sign(
            body, for: request.scope, nonce: request.nonce, as: .valid, user: request.appUserID)))
    }
  }

  /// Takes `user`'s next answer from `list` and waits out its latency on the virtual clock;
  /// returns it with the time the request arrived. None left: nil at once, which the caller
  /// answers `transient`. A request the client cancelled throws `transient`.
  private func take<Answer: Sendable & ScriptedLatency>(
    _ list: WritableKeyPath<State, [String: [Answer]]> & Sendable, for user: String
  ) async throws(FetchFailure) -> (answer: Answer?, arrived: Int64) {
    let arrived = now
    let answer: Answer? = state.withLock { state in
      // The user whose label has the request's bytes: a dictionary lookup would also take
      // another user whose ID is the same text in another Unicode form, which the cache and
      // the client keep apart.
      guard
        let label = state[keyPath: list].keys.first(where: { $0.namesSameUser(as: user) }),
        var answers = state[keyPath: list][label], !answers.isEmpty
      else { return nil }
      let next = answers.removeFirst()
      state[keyPath: list][label] = answers
      state.inFlight += 1
      return next
    }
    guard let answer else { return (nil, arrived) }
    defer { state.withLock { $0.inFlight -= 1 } }
    if answer.latency > .zero {
      do {
        try await runtime.sleep(for: answer.latency)
      } catch {
        // The client cancelled the request (it stopped: a relaunch kills the process). The
        // server's answer is lost with it, as it would be; the client drops whatever it gets.
        throw .transient(status: nil)
      }
    }
    return (answer, arrived)
  }

  /// The snapshot object as JSON bytes, keys sorted so the bytes are the same on every run.
  /// A snapshot without `requestDate` gets the time its request `arrived`.
  private static func encode(_ fields: [String: JSONValue], arrived: Int64) -> Data {
    var fields = fields
    if fields["requestDate"] == nil {
      fields["requestDate"] = .string(SimulationTime.date(arrived).iso8601)
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Values parsed from JSON always encode (they hold no non-finite number); should one not,
    // the empty body reaches the client as the invalid response it would be.
    return (try? encoder.encode(JSONValue.object(fields))) ?? Data()
  }
}

/// An answer that comes back after a latency.
protocol ScriptedLatency {
  var latency: Duration { get }
}

extension ScriptedAnswer: ScriptedLatency {}
extension ScriptedPostAnswer: ScriptedLatency {}
