#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The SDK's network for purchases: posts one queued purchase to the server (<doc:PurchaseQueue>).
///
/// The refresh client calls it for each entry of the queue, *as the user who first observed
/// the purchase*, never as whoever is current: ``PurchasePostRequest/appUserID`` is that user's.
/// It answers what the server said, or throws a ``FetchFailure``: `transient` is retried with
/// backoff, `rejected` (a 4xx) ends the entry as ``PurchaseState/rejected``.
///
/// ```swift
/// struct BackendPoster: PurchasePoster {
///   func post(_ request: PurchasePostRequest) async throws(FetchFailure) -> PurchasePostResult {
///     // POST the token as request.appUserID; map a 409 "owned by another user" to a conflict.
///   }
/// }
/// ```
public protocol PurchasePoster: Sendable {
  /// Posts `request`. The server must de-duplicate by transaction ID: an entry a crash left
  /// `posting` is posted again.
  func post(_ request: PurchasePostRequest) async throws(FetchFailure) -> PurchasePostResult
}

/// One post of a queued purchase.
public struct PurchasePostRequest: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The observer's scope: where the answer's CustomerInfo is stored.
  public var scope: CacheScope
  /// The raw app-user ID of the user who first observed the purchase, to post as.
  public var appUserID: String
  /// The store's transaction ID.
  public var transactionID: String
  /// The store's product ID.
  public var productID: String
  /// The store's proof of purchase. A credential: do not log it.
  public var token: PurchaseToken
  /// Which attempt this is, from 1; counted before the call.
  public var attempt: Int
  /// 16 fresh random bytes for the server to sign with the CustomerInfo it answers
  /// (<doc:TrustedSnapshots>), as a fetch's ``FetchRequest/nonce``; empty when none is sent.
  public var nonce: [UInt8]

  /// A post of `transactionID` as `appUserID`.
  package init(
    scope: CacheScope, appUserID: String, transactionID: String, productID: String,
    token: PurchaseToken, attempt: Int, nonce: [UInt8] = []
  ) {
    self.scope = scope
    self.appUserID = appUserID
    self.transactionID = transactionID
    self.productID = productID
    self.token = token
    self.attempt = attempt
    self.nonce = nonce
  }

  /// The scope, transaction, product and attempt: never the app-user ID, the token or the
  /// nonce.
  public var description: String {
    "PurchasePostRequest(\(scope), \(transactionID), product: \(productID), attempt: \(attempt))"
  }

  /// What ``description`` shows, the app-user ID, token and nonce redacted, so `dump` and
  /// debuggers show none of them either.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "scope": scope, "appUserID": Redacted.placeholder, "transactionID": transactionID,
        "productID": productID, "token": token, "attempt": attempt,
        "nonce": Redacted.placeholder,
      ], displayStyle: .struct)
  }
}

/// What the server said to a post.
public enum PurchasePostResult: Sendable, Hashable {
  /// The purchase is attributed to the observer. When the server answered the CustomerInfo
  /// that follows, it is stored under the observer's scope if that user is still current.
  case synced(FetchedCustomerInfo?)
  /// Another app user owns the purchase. Nothing is transferred; `resolution` is what the app
  /// should offer.
  case conflict(resolution: ClaimHint)
}
