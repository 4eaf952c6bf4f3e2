#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A read that could not use the file, or whose policy was out of range:
/// ``SQLiteCustomerInfoCache/access(to:for:policy:)`` answered `offlineUnavailable` with
/// `unreadable`, `storageUnavailable` or `newerSchema`, or
/// ``SQLiteCustomerInfoCache/activeEntitlementKeys(for:policy:)`` came back empty. Names no token, no raw identity and no bound value.
package struct ReadFailureReport: Sendable, Hashable, CustomStringConvertible {
  /// The first hexadecimal digits of the scope's hash, as `entitlement-cache scopes` shows.
  package var scopeHashPrefix: String
  /// Why: ``CacheError/storage(_:_:)``, ``CacheError/unreadableSnapshot(_:)``,
  /// ``CacheError/closed`` or ``CacheError/invalidConfiguration(field:problem:)``.
  package var error: CacheError
  /// The device time of the read.
  package var at: Date

  /// One line: the scope and the cause.
  package var description: String { "read of scope \(scopeHashPrefix): \(error)" }
}
