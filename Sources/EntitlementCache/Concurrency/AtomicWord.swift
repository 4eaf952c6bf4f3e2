import CAtomics

/// One 64-bit word read and written atomically, with no ordering against other memory: for a
/// time or a flag the read paths test without taking a lock.
///
/// `Synchronization.Atomic` does this, but only from iOS 18 and macOS 15; the `CAtomics`
/// module's inline functions work at every deployment target the package supports, and at -O
/// a load is one plain load. Not copyable, so the word has one owner.
///
/// `@unchecked Sendable` is sound because:
/// - `word` is allocated and initialized in `init`, before any other thread can see this
///   value, and deallocated in `deinit`, when none can: this value is its one owner;
/// - in between it is read and written only through the `CAtomics` functions, so no two
///   threads race on it.
struct AtomicWord: ~Copyable, @unchecked Sendable {
  private let word: UnsafeMutablePointer<UInt64>

  init(_ value: UInt64) {
    word = .allocate(capacity: 1)
    word.initialize(to: value)
  }

  deinit {
    word.deallocate()
  }

  /// The word's value.
  @inline(__always) func load() -> UInt64 {
    ec_atomic_load_relaxed(word)
  }

  /// Sets the word to `value`.
  @inline(__always) func store(_ value: UInt64) {
    ec_atomic_store_relaxed(word, value)
  }

  /// Sets the word to `value` and returns what it held.
  @inline(__always) func exchange(_ value: UInt64) -> UInt64 {
    ec_atomic_exchange_relaxed(word, value)
  }
}
