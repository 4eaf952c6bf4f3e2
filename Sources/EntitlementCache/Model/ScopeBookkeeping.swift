#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the cache knows about a scope besides its snapshot (DESIGN §4).
public struct ScopeBookkeeping: Sendable, Hashable {
  /// Device time of the last successful refresh written; nil when no snapshot is stored.
  public var storedAt: Date?
  /// The server's `requestDate` of the stored snapshot.
  public var serverTime: Date?
  /// Device time of the latest refresh attempt, successful or not.
  public var lastRefreshAttemptAt: Date?
  /// Device time of a refresh that failed after the last success; cleared by a success.
  public var lastRefreshFailedAt: Date?
  /// What the caller said about that failure.
  public var lastRefreshFailureReason: String?
  /// The latest trusted time observed for the scope: every write and refresh attempt, and the
  /// server's `requestDate`. Effective time never falls below it.
  public var highWaterMark: Date
  /// Size of the stored snapshot in bytes.
  public var snapshotSize: Int?
  /// SHA-256 of the stored snapshot bytes.
  public var snapshotSHA256: [UInt8]?

  /// Creates bookkeeping; for a snapshot evaluated in memory, `storedAt` is when it arrived.
  public init(
    storedAt: Date?, serverTime: Date? = nil, lastRefreshAttemptAt: Date? = nil,
    lastRefreshFailedAt: Date? = nil, lastRefreshFailureReason: String? = nil,
    highWaterMark: Date? = nil, snapshotSize: Int? = nil, snapshotSHA256: [UInt8]? = nil
  ) {
    self.storedAt = storedAt
    self.serverTime = serverTime
    self.lastRefreshAttemptAt = lastRefreshAttemptAt
    self.lastRefreshFailedAt = lastRefreshFailedAt
    self.lastRefreshFailureReason = lastRefreshFailureReason
    self.highWaterMark =
      highWaterMark ?? [storedAt, serverTime, lastRefreshAttemptAt].compactMap { $0 }.max()
      ?? .distantPast
    self.snapshotSize = snapshotSize
    self.snapshotSHA256 = snapshotSHA256
  }
}
