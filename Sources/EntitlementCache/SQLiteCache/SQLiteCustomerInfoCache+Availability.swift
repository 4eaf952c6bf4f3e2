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

extension SQLiteCustomerInfoCache {
  /// Tries to open a file that could not be opened before, now: call it when the app learns
  /// that protected data became available (UIKit's
  /// `protectedDataDidBecomeAvailableNotification`), or whenever the file may be readable
  /// again. Reads and writes also try by themselves, at most every two seconds.
  ///
  /// When the file opens, observers of ``observeWrites(_:)`` are told, so a refresh client
  /// publishes the real state at once.
  ///
  /// - Returns: Whether the cache has its file open now (true when it already had).
  @discardableResult
  public func protectedDataDidBecomeAvailable() -> Bool {
    openAwaitedStorage(force: true)
  }

  /// Opens the file if the cache is waiting for it and an attempt is due (or `force`); true
  /// when the file is open afterwards. Takes the writer's lock, then the reads lock: the
  /// lock order. Called with neither held.
  @discardableResult
  func openAwaitedStorage(force: Bool = false) -> Bool {
    let now = clock.now()
    guard let awaiting = awaitingStorage.withLock({ $0 }) else {
      return writer.withLock { $0 != nil }
    }
    guard force || awaiting.isDue(at: now) else { return false }
    let opened = writer.withLock { connection -> Bool in
      // Another thread opened it, or the cache was closed, while this one waited.
      guard connection == nil, awaitingStorage.withLock({ $0 != nil }) else {
        return connection != nil
      }
      let ready: DatabaseOpener.Ready
      do {
        ready = try DatabaseOpener(path: path, configuration: configuration, clock: clock).ready()
      } catch {
        awaitingStorage.withLock { state in
          guard state != nil else { return }
          if case .storage(_, let failure)? = error as? CacheError { state?.failure = failure }
          state?.lastAttempt = now
        }
        return false
      }
      reads.withLock {
        $0.replaceReader(
          with: ready.reader, dataVersion: ready.dataVersion, writerSerial: ready.writer.serial)
      }
      damage.withLock { $0 = ready.damage }
      connection = ready.writer
      awaitingStorage.withLock { $0 = nil }
      return true
    }
    if opened {
      // What reads answered changed for every scope: tell observers as a write would.
      committedWrites.add(1, ordering: .relaxed)
      writeObservers.notify()
    }
    return opened
  }

  /// The error a write throws while the file cannot be opened; nil when it is open or closed.
  func awaitedStorageError(_ operation: CacheOperation) -> CacheError? {
    awaitingStorage.withLock { $0 }.map { .storage(operation, $0.failure) }
  }
}
