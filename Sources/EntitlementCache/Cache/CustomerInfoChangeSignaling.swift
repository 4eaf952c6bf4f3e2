/// A cache that can say when anything it holds may have changed: at once for a write through
/// the same instance, and for the cost of one check for a write by another instance or process.
///
/// The refresh client observes the writes of the instance it was given
/// (``observeWrites(_:)``), so a snapshot an SDK stores through that instance reaches the
/// client's streams without waiting for any timer. For writes by other processes it looks at
/// ``changeMark()`` at every cross-process check while the app is in the foreground
/// (``ClientConfiguration/changeCheckInterval``), and reads the cache again only when the
/// mark moved, so an idle client reads and parses nothing. A cache that does not adopt this
/// protocol is read at every check instead. Both caches of the package adopt it; a cache of an
/// SDK's own may, and the conformance kit's round-trip clause checks the mark of a cache that
/// does.
public protocol CustomerInfoChangeSignaling: CustomerInfoCache {
  /// A value that moves whenever anything stored may have changed since it was last returned:
  /// a write by this instance (a snapshot, a failed refresh, a removal, a queued purchase), or
  /// by another instance or process sharing the storage. Reads never move it.
  ///
  /// - Returns: The mark, or nil when the cache cannot tell right now (the caller then reads).
  func changeMark() -> UInt64?

  /// Calls `observer` after every write through this instance, once the write has ended and
  /// the cache holds no lock, on the thread that wrote, until the observation is cancelled or
  /// released. Keep the observer short: the writer waits for it.
  ///
  /// The default observes nothing: writes are then found through ``changeMark()``, at the
  /// next check.
  func observeWrites(_ observer: @escaping @Sendable () -> Void) -> WriteObservation
}

extension CustomerInfoChangeSignaling {
  /// Observes nothing; see ``CustomerInfoChangeSignaling/observeWrites(_:)``.
  public func observeWrites(_ observer: @escaping @Sendable () -> Void) -> WriteObservation {
    WriteObservation()
  }
}

/// An observer registered with ``CustomerInfoChangeSignaling/observeWrites(_:)``: it is called
/// until ``cancel()`` or until this is released.
public final class WriteObservation: Sendable {
  private let cancellation: (@Sendable () -> Void)?

  /// An observation that observes nothing, for a cache whose writes are found through its
  /// change mark alone.
  package init() {
    cancellation = nil
  }

  /// An observation that runs `cancellation` at ``cancel()`` and again when released, for a
  /// cache of your own to stop calling its observer there: make it safe to run twice.
  public init(cancellation: @escaping @Sendable () -> Void) {
    self.cancellation = cancellation
  }

  /// Stops the observer. A write already under way may still call it once.
  public func cancel() {
    cancellation?()
  }

  deinit {
    cancellation?()
  }
}

/// The observers of one cache's writes, shared by both caches of the package.
final class WriteObservers: Sendable {
  private let observers = Locked<(next: UInt64, byID: [UInt64: @Sendable () -> Void])>((0, [:]))

  /// Registers `observer` until the returned observation ends.
  func add(_ observer: @escaping @Sendable () -> Void) -> WriteObservation {
    let id = observers.withLock { observers in
      observers.next += 1
      observers.byID[observers.next] = observer
      return observers.next
    }
    return WriteObservation { [weak self] in
      _ = self?.observers.withLock { $0.byID.removeValue(forKey: id) }
    }
  }

  /// Calls every observer; called by a cache after a write, holding none of its locks.
  func notify() {
    // Called outside this lock: an observer may read the cache, or register another.
    let current = observers.withLock { Array($0.byID.values) }
    for observer in current { observer() }
  }
}
