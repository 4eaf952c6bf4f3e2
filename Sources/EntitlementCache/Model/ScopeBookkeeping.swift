#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What the cache knows about a scope besides its snapshot (<doc:Storage#Bookkeeping>).
///
/// Device times (what the device's wall clock said) and server times (`requestDate`) are kept
/// apart: the server offset links them at the last successful refresh, and the high-water mark
/// holds device times only.
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
  /// The latest device time observed for the scope since its last successful refresh: every
  /// write, refresh attempt and read. A successful refresh resets it to the refresh's time.
  /// Effective device time never falls below it; it never holds a server time.
  public var deviceHighWaterMark: Date
  /// The boot clock's reading at the last successful refresh, where the platform has one: in
  /// that boot session, offline time is measured on it whatever the wall clock says.
  public var refreshBootInstant: BootInstant?
  /// Size of the stored snapshot in bytes.
  public var snapshotSize: Int?
  /// SHA-256 of the stored snapshot bytes.
  public var snapshotSHA256: [UInt8]?
  /// The purchase queue holds a purchase this scope observed that is not posted yet
  /// (`pending` or `posting`; see <doc:PurchaseQueue>): a denial then says "purchase processing",
  /// not "buy".
  public var hasPendingPurchase: Bool
  /// Whether the snapshot is a refresh's or an import's (``CustomerInfoImporting``). A
  /// refresh's by default; a cache keeps an import's until a refresh replaces the snapshot.
  public var origin: SnapshotOrigin = .refresh
}

// Initializers in an extension, so the memberwise one stays for the SQLite cache's row reader
// to build through (Architecture, "Initializers of values on the read path").
extension ScopeBookkeeping {
  /// Creates bookkeeping; for a snapshot evaluated in memory, `storedAt` is the device time it
  /// arrived.
  ///
  /// - Parameters:
  ///   - storedAt: Device time of the last successful refresh; nil without a snapshot.
  ///   - serverTime: That snapshot's `requestDate`.
  ///   - lastRefreshAttemptAt: Device time of the latest refresh attempt.
  ///   - lastRefreshFailedAt: Device time of a refresh that failed after the last success.
  ///   - lastRefreshFailureReason: What the caller said about that failure.
  ///   - deviceHighWaterMark: The latest device time seen since the last refresh; by default
  ///     the latest of `storedAt` and `lastRefreshAttemptAt`.
  ///   - refreshBootInstant: The boot clock at the last successful refresh.
  ///   - snapshotSize: Size of the stored snapshot in bytes.
  ///   - snapshotSHA256: SHA-256 of the stored snapshot bytes.
  ///   - hasPendingPurchase: The scope observed a purchase not posted yet.
  public init(
    storedAt: Date?, serverTime: Date? = nil, lastRefreshAttemptAt: Date? = nil,
    lastRefreshFailedAt: Date? = nil, lastRefreshFailureReason: String? = nil,
    deviceHighWaterMark: Date? = nil, refreshBootInstant: BootInstant? = nil,
    snapshotSize: Int? = nil, snapshotSHA256: [UInt8]? = nil, hasPendingPurchase: Bool = false
  ) {
    self.storedAt = storedAt
    self.serverTime = serverTime
    self.lastRefreshAttemptAt = lastRefreshAttemptAt
    self.lastRefreshFailedAt = lastRefreshFailedAt
    self.lastRefreshFailureReason = lastRefreshFailureReason
    self.deviceHighWaterMark =
      deviceHighWaterMark ?? [storedAt, lastRefreshAttemptAt].compactMap { $0 }.max()
      ?? .distantPast
    self.refreshBootInstant = refreshBootInstant
    self.snapshotSize = snapshotSize
    self.snapshotSHA256 = snapshotSHA256
    self.hasPendingPurchase = hasPendingPurchase
  }

  /// How far the server's clock was ahead of the device's at the last successful refresh
  /// (`requestDate - storedAt`, in seconds; negative when the device was ahead). Nil without a
  /// snapshot.
  package var serverOffset: TimeInterval? {
    guard let storedAt, let serverTime else { return nil }
    return serverTime.timeIntervalSince(storedAt)
  }
}
