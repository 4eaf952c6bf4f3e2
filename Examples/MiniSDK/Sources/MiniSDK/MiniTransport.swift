import EntitlementCache
import Foundation

/// The network an app (or a test) gives ``MiniPurchases``: anything that can ask the backend for
/// a user's CustomerInfo and post a purchase. `URLSession` in an app, a fake in tests.
public protocol MiniTransport: Sendable {
  /// Asks for `appUserID`'s CustomerInfo. The backend signs its answer over `nonce` when it
  /// signs at all.
  func fetchCustomerInfo(appUserID: String, nonce: [UInt8]) async throws(TransportFailure)
    -> TransportResponse

  /// Posts one purchase as `purchase.appUserID`, the user who observed it. Returns the
  /// CustomerInfo the backend answered with, or nil when it answered none.
  func postPurchase(_ purchase: TransportPurchase) async throws(TransportFailure)
    -> TransportResponse?
}

/// What the backend sent back.
public struct TransportResponse: Sendable, Hashable {
  /// The body exactly as received: a CustomerInfo snapshot as JSON.
  public var body: Data
  /// The signed material sent with the body; nil when the answer came unsigned.
  public var signature: ResponseSignature?

  /// A response of `body`, signed by `signature` when the backend signed it.
  public init(body: Data, signature: ResponseSignature? = nil) {
    self.body = body
    self.signature = signature
  }
}

/// Why a transport call brought nothing back.
public enum TransportFailure: Error, Sendable, Hashable {
  /// No network, a timeout, a cancelled call: worth trying again later.
  case offline
  /// The backend failed (a 5xx): worth trying again later.
  case serverError(status: Int)
  /// The backend refused the call (a 4xx): asking again unchanged will not help.
  case rejected(status: Int)
  /// Another app user owns the purchase posted (purchases only): what the app should offer.
  case ownedByAnotherUser(ClaimHint)
}

/// One purchase to post.
public struct TransportPurchase: Sendable, Hashable {
  /// The user who first observed the purchase, whom it is posted as.
  public var appUserID: String
  /// The store's transaction ID: the backend de-duplicates by it.
  public var transactionID: String
  /// The store's product ID.
  public var productID: String
  /// The store's proof of purchase: a credential, never to be logged.
  public var token: Data
  /// Bytes the backend signs the CustomerInfo it answers over; empty when none.
  public var nonce: [UInt8]
}

extension TransportFailure {
  /// The failure as the refresh client reads it; nil for a conflict, which is an answer.
  var fetchFailure: FetchFailure? {
    switch self {
    case .offline: .transient(status: nil)
    case .serverError(let status): .transient(status: status)
    case .rejected(let status): .rejected(status: status)
    case .ownedByAnotherUser: nil
    }
  }
}

/// The client's fetcher over the SDK's transport.
struct TransportFetcher: CustomerInfoFetcher {
  let transport: any MiniTransport

  func fetchCustomerInfo(_ request: FetchRequest) async throws(FetchFailure)
    -> FetchedCustomerInfo
  {
    do {
      let answer = try await transport.fetchCustomerInfo(
        appUserID: request.appUserID, nonce: request.nonce)
      return FetchedCustomerInfo(body: answer.body, signature: answer.signature)
    } catch {
      // A conflict means nothing to a fetch: the backend said something this SDK cannot use.
      throw error.fetchFailure ?? .rejected(status: 409)
    }
  }
}

/// The client's purchase poster over the SDK's transport.
struct TransportPoster: PurchasePoster {
  let transport: any MiniTransport

  func post(_ request: PurchasePostRequest) async throws(FetchFailure) -> PurchasePostResult {
    let purchase = TransportPurchase(
      appUserID: request.appUserID, transactionID: request.transactionID,
      productID: request.productID, token: request.token.bytes, nonce: request.nonce)
    do {
      let answer = try await transport.postPurchase(purchase)
      return .synced(answer.map { FetchedCustomerInfo(body: $0.body, signature: $0.signature) })
    } catch {
      if case .ownedByAnotherUser(let resolution) = error {
        return .conflict(resolution: resolution)
      }
      throw error.fetchFailure ?? .rejected(status: 409)
    }
  }
}
