/// Whether the cache last told its storage unavailable, shared by the cache and its reader so
/// that each change is told once, by whichever call finds it: 1 when it did, else 0.
final class StorageHealth: Sendable {
  private let toldUnavailable = AtomicWord(0)

  /// Marks the storage unavailable; true for the one call that changed it.
  func markUnavailable() -> Bool {
    toldUnavailable.exchange(1) == 0
  }

  /// Marks the storage available; true for the one call that changed it. Every read from the
  /// file and every committed write asks, so while the storage never went away this is one
  /// load, without the exchange or a lock.
  @inline(__always) func markAvailable() -> Bool {
    toldUnavailable.load() != 0 && toldUnavailable.exchange(0) != 0
  }
}
