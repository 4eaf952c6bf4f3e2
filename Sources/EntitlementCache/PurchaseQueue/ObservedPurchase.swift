/// A store transaction the app has just seen complete, as the SDK enqueues it
/// (``PurchaseQueueStore/enqueue(_:observedBy:)``) before any network call.
public struct ObservedPurchase: Sendable, Hashable, CustomStringConvertible {
  /// The store's transaction ID: the queue's identity of the purchase, for good.
  public var transactionID: String
  /// The store's product ID.
  public var productID: String
  /// The store's proof of purchase, to post.
  public var token: PurchaseToken

  /// The longest transaction or product ID the queue keeps, in UTF-8 bytes.
  package static let identifierLimit = 256
  /// The largest token the queue keeps, in bytes: a StoreKit signed transaction is a few
  /// kilobytes, an app receipt with a long history a few hundred.
  package static let tokenSizeLimit = 1 << 20

  /// A purchase to enqueue.
  public init(transactionID: String, productID: String, token: PurchaseToken) {
    self.transactionID = transactionID
    self.productID = productID
    self.token = token
  }

  /// The transaction and product: never the token.
  public var description: String {
    "ObservedPurchase(\(transactionID), product: \(productID), \(token))"
  }

  /// Checks what the queue's schema requires, naming the field; the message shows no value.
  func validate() throws(CacheError) {
    for (field, value) in [("transactionID", transactionID), ("productID", productID)] {
      if value.isEmpty { throw .invalidPurchase(field: field, problem: "is empty") }
      if value.utf8.count > Self.identifierLimit {
        throw .invalidPurchase(field: field, problem: "is over \(Self.identifierLimit) bytes")
      }
      if value.utf8.contains(0) {
        throw .invalidPurchase(field: field, problem: "contains a NUL byte")
      }
    }
    if token.bytes.isEmpty { throw .invalidPurchase(field: "token", problem: "is empty") }
    if token.bytes.count > Self.tokenSizeLimit {
      throw .invalidPurchase(
        field: "token", problem: "is \(token.bytes.count) bytes, over \(Self.tokenSizeLimit)")
    }
  }
}
