#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A file that is there but could not be opened yet, and when the cache last tried.
struct AwaitingStorage: Sendable {
  /// Why the last attempt failed.
  var failure: StorageFailure
  /// When, by the cache's wall clock.
  var lastAttempt: Date

  /// How long a read or write waits after a failed attempt before it tries again itself.
  /// Short: a device unlocks at a moment nobody announces to a widget or an extension, and
  /// an attempt costs a few system calls.
  static let retryInterval: TimeInterval = 2

  /// Whether a read or write at `now` may try again. A clock set back allows it too, rather
  /// than waiting for the old time to come round.
  func isDue(at now: Date) -> Bool {
    now.timeIntervalSince(lastAttempt) >= Self.retryInterval || now < lastAttempt
  }
}
