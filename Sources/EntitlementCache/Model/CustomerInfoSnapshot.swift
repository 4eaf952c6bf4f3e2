#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A validated CustomerInfo together with the exact JSON bytes that will be stored.
///
/// Build one from the server's response as soon as it arrives: it rejects bad input with a
/// ``SnapshotError`` naming the field, before anything is written. The cache stores
/// ``jsonData`` unchanged, so fields this build does not know survive byte for byte.
///
/// ```swift
/// let snapshot = try CustomerInfoSnapshot(jsonData: responseBody)
/// _ = try cache.storeAnswer(snapshot, for: scope)  // never over a newer answer
/// ```
public struct CustomerInfoSnapshot: Sendable, Hashable, CustomStringConvertible,
  CustomReflectable
{
  /// The largest payload accepted by default: 1 MiB, far above a real CustomerInfo (a
  /// 1,000-entitlement snapshot is about 250 KiB) and small enough that a runaway server
  /// response cannot bloat the cache file.
  public static let defaultSizeLimit = 1 << 20

  /// The decoded CustomerInfo.
  public let customerInfo: CustomerInfo
  /// The JSON that is stored: the server's bytes exactly as they arrived.
  public let jsonData: Data
  /// The server's signature over these bytes, kept with them (<doc:TrustedSnapshots>); nil when the
  /// response came unsigned. A cache with ``TrustRoots`` decides `verified` from it alone.
  public let signature: ResponseSignature?
  /// The nonce the request sent, which the signature must carry; nil when it sent none, or for
  /// a snapshot not fetched by a request (a fixture, a support file).
  public let requestNonce: [UInt8]?

  /// Validates the server's JSON and keeps its bytes, with the signature that came with them.
  ///
  /// - Parameters:
  ///   - jsonData: The response body exactly as received: the signature covers these bytes.
  ///   - signature: The signed material that came with the body; nil when none did.
  ///   - requestNonce: The 16 bytes the request sent for the server to sign; nil when none.
  ///   - sizeLimit: The largest body accepted, in bytes.
  /// - Throws: ``SnapshotError`` naming the field and the problem: malformed JSON, a missing
  ///   field, a wrong type, a date that does not parse, or a payload over `sizeLimit` bytes.
  ///   A signature is checked by the cache that stores it, not here.
  public init(
    jsonData: Data, signature: ResponseSignature? = nil, requestNonce: [UInt8]? = nil,
    sizeLimit: Int = defaultSizeLimit
  ) throws(SnapshotError) {
    guard jsonData.count <= sizeLimit else {
      throw SnapshotError(path: "", problem: .tooLarge(size: jsonData.count, limit: sizeLimit))
    }
    customerInfo = try CustomerInfo(json: JSONValue(parsing: jsonData), path: "")
    self.jsonData = jsonData
    self.signature = signature
    self.requestNonce = requestNonce
  }

  /// `decoded` with other signed material: the body is not parsed again.
  init(decoded: CustomerInfoSnapshot, signature: ResponseSignature?, requestNonce: [UInt8]?) {
    customerInfo = decoded.customerInfo
    jsonData = decoded.jsonData
    self.signature = signature
    self.requestNonce = requestNonce
  }

  /// Encodes a CustomerInfo built in code.
  ///
  /// ``customerInfo`` is then the encoding read back, not `customerInfo` itself: dates are kept
  /// to the millisecond, so a date built in code with a finer fraction would otherwise decide
  /// one way from memory and another from the stored bytes.
  ///
  /// - Throws: ``SnapshotError`` when the encoding is over `sizeLimit` bytes or an unknown field
  ///   holds a number JSON cannot express.
  package init(_ customerInfo: CustomerInfo, sizeLimit: Int = defaultSizeLimit)
    throws(SnapshotError)
  {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data: Data
    do {
      data = try encoder.encode(customerInfo)
    } catch {
      throw SnapshotError(path: "", problem: .unencodable)
    }
    try self.init(jsonData: data, sizeLimit: sizeLimit)
  }

  /// The size, `requestDate`, entitlement keys and whether it is signed: never a token, a
  /// field the server added (which may carry one), a signature or the request's nonce.
  public var description: String {
    let keys = customerInfo.entitlements.keys.sorted().joined(separator: ", ")
    return
      "CustomerInfoSnapshot(\(jsonData.count) B, requestDate: \(ISO8601.format(customerInfo.requestDate)), entitlements: [\(keys)], signed: \(signature != nil))"
  }

  /// What ``description`` shows, so `dump` and debuggers print no token or signature either.
  public var customMirror: Mirror {
    Mirror(self, children: ["summary": description], displayStyle: .struct)
  }
}
