import EntitlementCache
import Foundation

/// RevenueCat's v1 subscriber response (`GET /v1/subscribers/{app_user_id}`), the CustomerInfo
/// an SDK built on RevenueCat's REST API already holds for its users, as this package's
/// snapshot.
///
/// An SDK adopting the cache maps what its previous cache holds once, on first launch, so that
/// users who last went online before the update keep the access they had, offline too, until
/// the first refresh replaces it:
///
/// ```swift
/// let snapshot = try RevenueCatV1.snapshot(
///   fromSubscriberResponse: previousCacheBody, environment: scope.environment)
/// // Hand `snapshot` to the cache's import, labelled `RevenueCatV1.label`.
/// ```
///
/// The mapping, rule by rule and why, is the table on the module's page. Written on the
/// `EntitlementCache` product's public API alone, it is also the model for an adapter of
/// another format: build the snapshot's JSON, then let `CustomerInfoSnapshot(jsonData:)`
/// validate it.
public enum RevenueCatV1 {
  /// The label an import from this format carries.
  ///
  /// The cache keeps it with an imported snapshot until the first refresh replaces it, so
  /// support can tell access that came from the previous cache from access the server gave.
  public static let label = "revenuecat-v1"

  /// Maps a subscriber response body to a snapshot of this package's format.
  ///
  /// The snapshot's `requestDate` is the server's time when it answered: how long ago the
  /// previous cache saved the body is for the import to weigh, not this mapping. Storing the
  /// snapshot as a refresh (`store(_:for:)`) would count the server's clock from that old
  /// `requestDate` on, as if it had answered now.
  ///
  /// - Parameters:
  ///   - body: The response body as the previous cache saved it: the JSON object with
  ///     `request_date` and `subscriber`. Fields the mapping does not read are ignored, and
  ///     none of them reaches the snapshot.
  ///   - environment: The store environment of the scope the snapshot is for. A sandbox
  ///     purchase grants nothing in a production scope, so it maps there as expired.
  /// - Returns: The snapshot, validated by `CustomerInfoSnapshot(jsonData:)` as a server's
  ///   would be.
  /// - Throws: ``RevenueCatImportError`` naming the body's field: a body that is not JSON, a
  ///   missing `request_date`, `subscriber` or `subscriber.entitlements`, a known field of the
  ///   wrong type, or a snapshot the core refused (such as one over its size limit).
  public static func snapshot(
    fromSubscriberResponse body: Data, environment: StoreEnvironment
  ) throws(RevenueCatImportError) -> CustomerInfoSnapshot {
    let response = try SubscriberResponse(parsing: body)
    let json = SnapshotMapping(response: response, environment: environment).json
    let data: Data
    do {
      data = try JSONSerialization.data(
        withJSONObject: json, options: [.sortedKeys, .withoutEscapingSlashes])
    } catch {
      throw RevenueCatImportError(
        "", .snapshotRefused(SnapshotError(path: "", problem: .unencodable)))
    }
    do {
      return try CustomerInfoSnapshot(jsonData: data)
    } catch {
      throw RevenueCatImportError("", .snapshotRefused(error))
    }
  }
}
