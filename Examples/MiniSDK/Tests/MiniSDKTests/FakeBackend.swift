import EntitlementCache
import Foundation

// Testable for the SDK's lock: Synchronization.Mutex would need iOS 18 and macOS 15.
@testable import MiniSDK

/// A backend the test scripts: it answers at once, dates each body by the virtual clock, and
/// records every call.
final class FakeBackend: MiniTransport {
  struct Calls {
    var fetches: [String] = []
    var posts: [TransportPurchase] = []
  }

  private let clock: CacheClock
  private let fetchAnswer = LockedValue<TransportFailure?>(nil)
  private let postAnswer = LockedValue<TransportFailure?>(nil)
  private let recorded = LockedValue(Calls())
  /// The entitlement every successful answer grants, for 30 days.
  let entitlement = "pro"

  init(clock: CacheClock) { self.clock = clock }

  /// Makes every fetch fail with `failure` from now on; nil to answer again.
  func failFetches(with failure: TransportFailure?) { fetchAnswer.withLock { $0 = failure } }
  /// Makes every post fail with `failure` from now on; nil to answer again.
  func failPosts(with failure: TransportFailure?) { postAnswer.withLock { $0 = failure } }
  /// Every call so far.
  var calls: Calls { recorded.withLock { $0 } }

  func fetchCustomerInfo(appUserID: String, nonce: [UInt8]) async throws(TransportFailure)
    -> TransportResponse
  {
    recorded.withLock { $0.fetches.append(appUserID) }
    if let failure = fetchAnswer.withLock({ $0 }) { throw failure }
    return TransportResponse(body: body())
  }

  func postPurchase(_ purchase: TransportPurchase) async throws(TransportFailure)
    -> TransportResponse?
  {
    recorded.withLock { $0.posts.append(purchase) }
    if let failure = postAnswer.withLock({ $0 }) { throw failure }
    return TransportResponse(body: body())
  }

  /// A CustomerInfo granting ``entitlement`` for 30 days, dated now.
  func body() -> Data {
    let now = clock.now()
    let expires = now.addingTimeInterval(30 * 86_400)
    return Data(
      """
      {"requestDate":"\(now.formatted(.iso8601))","entitlements":{"\(entitlement)":\
      {"status":"active","expiresAt":"\(expires.formatted(.iso8601))"}}}
      """.utf8)
  }
}

/// Log lines the SDK hands its logging closure.
final class LogRecorder: Sendable {
  private let lines = LockedValue<[(level: MiniLogLevel, message: String)]>([])

  /// The closure to give the SDK.
  var handler: MiniLogHandler {
    { level, message in self.lines.withLock { $0.append((level, message)) } }
  }
  /// Every line so far.
  var all: [(level: MiniLogLevel, message: String)] { lines.withLock { $0 } }
  /// The lines whose message starts with `event`.
  func lines(_ event: String) -> [(level: MiniLogLevel, message: String)] {
    all.filter { $0.message.hasPrefix(event) }
  }
}

/// Values a task on the simulated runtime collects, for the test to read.
final class Collected<Value: Sendable>: Sendable {
  private let values = LockedValue<[Value]>([])

  func append(_ value: Value) { values.withLock { $0.append(value) } }
  var all: [Value] { values.withLock { $0 } }
}
