import SQLiteFaultInjection

/// The allocator `Tests/SQLiteFaultInjection` installs under SQLite before `main`: it fails the
/// k-th allocation SQLite makes on the arming thread, so an out-of-memory can be made to happen
/// at every allocation of a write in turn, as SQLite's own malloc tests do. Synchronous tests
/// arm it, write and disarm on one thread; other threads' allocations never fail.
enum FailingAllocator {
  /// Whether it is under SQLite.
  static var isInstalled: Bool { testalloc_is_installed() != 0 }

  /// Fails the `k`-th allocation from now on this thread, and every later one if `persistent`.
  static func arm(at k: Int, persistent: Bool = false) {
    testalloc_arm(Int64(k), persistent ? 1 : 0)
  }

  static func disarm() { testalloc_disarm() }

  /// How many allocations failed because it was armed, since the last arm or disarm.
  static var faultsInjected: Int { Int(testalloc_faults_injected()) }
}
