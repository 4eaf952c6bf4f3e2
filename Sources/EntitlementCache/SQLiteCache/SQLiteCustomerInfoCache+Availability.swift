#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

extension SQLiteCustomerInfoCache {
  /// Tries to open a file that could not be opened before, now: call it when the app learns
  /// that protected data became available (UIKit's
  /// `protectedDataDidBecomeAvailableNotification`), or whenever the file may be readable
  /// again. Reads and writes also try by themselves, at most every two seconds.
  ///
  /// When the file opens, observers of ``observeWrites(_:)`` are told, so a refresh client
  /// publishes the real state at once.
  ///
  /// - Returns: Whether the cache has its file open now (true when it already had; false
  ///   once it is closed).
  @discardableResult
  public func protectedDataDidBecomeAvailable() -> Bool {
    if openAwaitedStorage(force: true) { return true }
    let isOpen = awaitingStorage.withLock { $0 == nil } && writer.withLock { $0 != nil }
    // An open file may have refused reads and writes while the device was locked again:
    // observers are told it may answer now, as when it opens.
    if isOpen { writeObservers.notify() }
    return isOpen
  }

  /// Opens the file if the cache is waiting for it and an attempt is due (or `force`).
  ///
  /// One caller per interval makes the attempt: it is claimed, under the leaf lock, before
  /// anything else is locked. Then it takes the writer's lock and, inside it, the reads lock:
  /// the lock order. A read passes `waitingForWrites` false, so it never waits for a write:
  /// the attempt is dropped when a write holds the lock. Called with no lock held.
  ///
  /// - Returns: Whether this call opened the file.
  @discardableResult
  func openAwaitedStorage(force: Bool = false, waitingForWrites: Bool = true) -> Bool {
    if case .opened = attemptAwaitedStorage(force: force, waitingForWrites: waitingForWrites) {
      return true
    }
    return false
  }

  /// What one call of ``attemptAwaitedStorage(force:waitingForWrites:)`` did.
  enum AwaitedAttempt {
    /// None was due, another caller held the attempt, or a write held the lock.
    case notAttempted
    /// The file opened.
    case opened
    /// The file did not open; `changed` when why is of another kind than before.
    case failed(changed: Bool)
  }

  /// ``openAwaitedStorage(force:waitingForWrites:)``, saying what the attempt found.
  private func attemptAwaitedStorage(force: Bool, waitingForWrites: Bool) -> AwaitedAttempt {
    let now = clock.now()
    let claimed = awaitingStorage.withLock { state -> Bool in
      // A newer build's file does not become readable by waiting: only the app's call tries.
      guard let awaiting = state,
        force || (awaiting.failure.kind != .newerSchema && awaiting.isDue(at: now))
      else { return false }
      state?.lastAttempt = now
      return true
    }
    guard claimed else { return .notAttempted }
    let attempt =
      waitingForWrites
      ? writer.withLock { openClaimed(&$0) }
      : (writer.withLockIfAvailable { openClaimed(&$0) } ?? nil)
    let opened: DatabaseOpener.Opened
    switch attempt {
    case nil:
      return .notAttempted
    case .failure(let failure)?:
      // The file answered at last, with something other than a refusal: a newer build's file
      // this one does not read, or an error. Told once, when it changes.
      if failure.changed, failure.now.kind != .unavailable {
        if failure.now.kind == .newerSchema { _ = storageHealth.markAvailable() }
        tellOpening(damaged: false, newer: nil, awaiting: failure.now)
      }
      return .failed(changed: failure.changed)
    case .success(let ready)?:
      opened = ready
    }
    tellOpening(damaged: opened.damage != nil, newer: opened.readOnly, awaiting: nil)
    tellStorageAvailableIfItWasNot()
    // As the first open does (never on a newer build's file, which is only read). Retention
    // only: a failure here loses nothing, and the next open prunes again.
    if configuration.pruneOnOpen, readOnlySchema.withLock({ $0 == nil }) { _ = try? prune() }
    // What reads answered changed for every scope: tell observers as a write would.
    committedWrites.withLock { $0 += 1 }
    writeObservers.notify()
    return .opened
  }

  /// Tries the awaited file again for a read that found it unavailable (never waiting for a
  /// write), and says whether the read should read again: the file opened, or this attempt
  /// found it unusable for another reason than before (a newer build's file, another
  /// program's), which the read answers with rather than with the one it met.
  func retryAwaitedStorageForRead() -> Bool {
    switch attemptAwaitedStorage(force: false, waitingForWrites: false) {
    case .opened, .failed(changed: true): true
    case .notAttempted, .failed(changed: false): false
    }
  }

  /// Why an attempt to open the awaited file failed, and whether that changed.
  private struct FailedOpen: Error {
    var now: StorageFailure
    var changed: Bool
  }

  /// The claimed attempt, under the writer's lock: opens the file into `connection`, and
  /// returns what the opener found; nil when another caller opened it, or it was closed.
  private func openClaimed(
    _ connection: inout StoreWriter?
  ) -> Result<DatabaseOpener.Opened, FailedOpen>? {
    // Opened by another caller, or closed, while this one waited for the lock.
    guard connection == nil, awaitingStorage.withLock({ $0 != nil }) else { return nil }
    let ready: DatabaseOpener.Opened
    do {
      ready = try DatabaseOpener(path: path, configuration: configuration, clock: clock).open()
    } catch {
      guard case .storage(_, let failure) = error else { return nil }
      let before = awaitingStorage.withLock { state in
        defer { state?.failure = failure }
        return state?.failure.kind
      }
      return .failure(FailedOpen(now: failure, changed: before != failure.kind))
    }
    reads.withLock {
      $0.replaceReader(
        with: ready.reader, dataVersion: ready.dataVersion, writerSerial: ready.writer.serial)
    }
    damage.withLock { $0 = ready.damage }
    readOnlySchema.withLock { $0 = ready.readOnly }
    connection = ready.writer
    awaitingStorage.withLock { $0 = nil }
    return .success(ready)
  }

  /// Whether the cache is waiting for its file to open.
  var isAwaitingStorage: Bool { awaitingStorage.withLock { $0 != nil } }

  /// The error a write throws while the file cannot be opened; nil when it is open or closed.
  package func awaitedStorageError(_ operation: CacheOperation) -> CacheError? {
    awaitingStorage.withLock { $0 }.map { .storage(operation, $0.failure) }
  }
}
