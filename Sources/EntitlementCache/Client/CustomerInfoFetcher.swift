#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The SDK's network: fetches the server's CustomerInfo for one request.
///
/// The refresh client calls it; it owns no storage and publishes nothing. A fetcher returns the
/// body bytes exactly as the server sent them (the cache keeps them byte for byte), or throws a
/// ``FetchFailure`` saying whether trying again later can help.
///
/// ```swift
/// struct BackendFetcher: CustomerInfoFetcher {
///   let session: URLSession
///   func fetchCustomerInfo(_ request: FetchRequest) async throws(FetchFailure) -> FetchedCustomerInfo {
///     let (body, response) = try await session.data(for: urlRequest(for: request))  // mapped to FetchFailure
///     ...
///   }
/// }
/// ```
public protocol CustomerInfoFetcher: Sendable {
  /// Fetches CustomerInfo for `request`. The client may cancel the task (``EntitlementClient/stop()``);
  /// an answer that arrives anyway is dropped.
  func fetchCustomerInfo(_ request: FetchRequest) async throws(FetchFailure) -> FetchedCustomerInfo
}

/// One request for CustomerInfo, as the refresh client makes it.
public struct FetchRequest: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The scope the answer will be stored under: the one current when the request started.
  public var scope: CacheScope
  /// The raw app-user ID to send. It is the SDK's own; the cache stores only its hash.
  public var appUserID: String
  /// 16 fresh random bytes for the server to sign with its answer (<doc:TrustedSnapshots>).
  public var nonce: [UInt8]
  /// The flow that asked.
  public var flow: RefreshFlow

  /// A request for `appUserID` under `scope`.
  package init(scope: CacheScope, appUserID: String, nonce: [UInt8], flow: RefreshFlow) {
    self.scope = scope
    self.appUserID = appUserID
    self.nonce = nonce
    self.flow = flow
  }

  /// The scope and flow only: never the app-user ID or the nonce.
  public var description: String { "FetchRequest(\(scope), flow: \(flow.rawValue))" }

  /// What ``description`` shows, the app-user ID and the nonce redacted, so `dump` and
  /// debuggers show neither.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "scope": scope, "appUserID": Redacted.placeholder, "nonce": Redacted.placeholder,
        "flow": flow,
      ], displayStyle: .struct)
  }
}

/// The server's answer.
public struct FetchedCustomerInfo: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The response body, exactly as received: a CustomerInfo snapshot (<doc:SnapshotFormat>).
  public var body: Data
  /// The signed material that came with the body (<doc:TrustedSnapshots>), the server's signature
  /// over it, its `requestDate`, the scope and the request's ``FetchRequest/nonce``; nil when the
  /// answer came unsigned. The client stores it with the snapshot, with the nonce it sent.
  public var signature: ResponseSignature?

  /// An answer with `body` and, when the server signed it, its `signature`.
  public init(body: Data, signature: ResponseSignature? = nil) {
    self.body = body
    self.signature = signature
  }

  /// `FetchedCustomerInfo(1234 bytes, signed)`: the body holds an access token, so only its
  /// size is shown.
  public var description: String {
    "FetchedCustomerInfo(\(body.count) bytes, \(signature == nil ? "unsigned" : "signed"))"
  }

  /// The body's size and the signature's own redacted mirror.
  public var customMirror: Mirror {
    Mirror(
      self, children: ["body": "\(body.count) bytes", "signature": signature as Any],
      displayStyle: .struct)
  }
}

/// Why a fetch brought no CustomerInfo.
public enum FetchFailure: Error, Sendable, Hashable, CustomStringConvertible {
  /// Trying again later may work: no network, a timeout, a 5xx (its status, when there was a
  /// response).
  case transient(status: Int?)
  /// The server refused the request (a 4xx, with its status); trying again unchanged will not
  /// help, so the client sets no retry timer: the next flow that refreshes asks again.
  case rejected(status: Int)

  /// `transient`, `transient (503)`, `rejected (401)`.
  public var description: String {
    switch self {
    case .transient(nil): "transient"
    case .transient(let status?): "transient (\(status))"
    case .rejected(let status): "rejected (\(status))"
    }
  }

  /// The failure a ``recordedReason`` names; nil for any other text.
  init?(recordedReason: String) {
    if recordedReason == "transient" {
      self = .transient(status: nil)
      return
    }
    for (prefix, make) in [
      ("transient_", { FetchFailure.transient(status: $0) }),
      ("rejected_", { FetchFailure.rejected(status: $0) }),
    ] where recordedReason.hasPrefix(prefix) {
      guard let status = Int(recordedReason.dropFirst(prefix.count)) else { return nil }
      self = make(status)
      return
    }
    return nil
  }

  /// The failure as the cache records it for support engineers, and as the purchase queue
  /// keeps its last failure: `transient`, `transient_503`, `rejected_401`.
  package var recordedReason: String {
    switch self {
    case .transient(nil): "transient"
    case .transient(let status?): "transient_\(status)"
    case .rejected(let status): "rejected_\(status)"
    }
  }
}
