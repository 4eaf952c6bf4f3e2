#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The store's opaque proof of a purchase (a signed transaction, a receipt, a purchase token),
/// which the server needs to attribute it. It is a credential: the queue keeps it in the file
/// to post it, and nothing else ever shows it.
///
/// Its description, debug description and mirror say only how long it is, so printing,
/// interpolating or `dump`ing an entry cannot leak it.
public struct PurchaseToken: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The bytes to post.
  public let bytes: Data

  /// A token of `bytes`, exactly as the store handed them over.
  public init(_ bytes: Data) {
    self.bytes = bytes
  }

  /// `PurchaseToken(1234 bytes)`: never the bytes.
  public var description: String { "PurchaseToken(\(bytes.count) bytes)" }

  /// A mirror with no children, so `dump` and debuggers show nothing of the bytes.
  public var customMirror: Mirror { Mirror(self, children: [:]) }
}
