import CSQLite
import EntitlementCache

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The lock screen of a simulated device, as its files see it: an SQLite VFS that is the
/// platform's own, except that while the device is locked after a restart (before its first
/// unlock), opening a file is refused (`SQLITE_CANTOPEN`), as data protection refuses a file
/// kept with iOS's default protection class, `completeUntilFirstUserAuthentication`. A file
/// already open stays readable, as it does on the device.
///
/// A script locks the device with `"locked": true` on a `start` or `relaunch` and unlocks it
/// with an `unlock` step; a run that never locks it does not use this VFS. Each run registers
/// one of its own, so runs in one process never share the switch.
///
/// `@unchecked Sendable` is sound because:
/// - Swift writes the registration once, in `init`, before SQLite has it, and never again; while
///   it is registered, SQLite alone changes it (its `pNext`, when another VFS is registered or
///   unregistered), under SQLite's own mutex; `deinit` unregisters it before freeing it;
/// - the unretained reference to `self` inside it is read only by `xOpen`, which SQLite calls
///   only while the VFS is registered, that is, while `self` is alive;
/// - `locked` is behind its own lock, read by `xOpen` on whatever thread opens a file.
final class DeviceLock: @unchecked Sendable {
  /// The VFS as SQLite sees it, with what `xOpen` needs beside it: SQLite hands each method a
  /// pointer to `vfs`, so the method finds the rest from that pointer.
  private struct Registered {
    var vfs: sqlite3_vfs
    var platform: UnsafeMutablePointer<sqlite3_vfs>
    var lock: Unmanaged<DeviceLock>

    static let vfsOffset = MemoryLayout<Registered>.offset(of: \.vfs) ?? 0

    /// The registration a VFS pointer SQLite hands a method belongs to.
    static func of(_ vfs: UnsafeMutablePointer<sqlite3_vfs>) -> UnsafeMutablePointer<Registered> {
      (UnsafeMutableRawPointer(vfs) - vfsOffset).assumingMemoryBound(to: Registered.self)
    }
  }

  /// The name the cache's configuration opens the file through.
  let name: String
  private let locked = Locked(false)
  private let registered: UnsafeMutablePointer<Registered>
  private let nameBytes: UnsafeMutablePointer<CChar>

  /// Registers a VFS over the platform's default.
  ///
  /// - Throws: ``CLIError`` when SQLite has no default VFS or refuses the registration.
  init() throws(CLIError) {
    guard let platform = sqlite3_vfs_find(nil) else {
      throw CLIError.storage("simulate: SQLite has no default VFS to lock")
    }
    name = "entitlement-cache-simulated-lock-" + UUID().uuidString
    let utf8 = Array(name.utf8CString)
    nameBytes = .allocate(capacity: utf8.count)
    nameBytes.initialize(from: utf8, count: utf8.count)
    registered = .allocate(capacity: 1)
    var vfs = platform.pointee
    // Version 2: the system-call overrides of version 3 are the platform's alone.
    vfs.iVersion = min(vfs.iVersion, 2)
    vfs.zName = UnsafePointer(nameBytes)
    vfs.pNext = nil
    vfs.xOpen = { vfs, path, file, flags, outFlags in
      guard let vfs else { return SQLITE_MISUSE }
      let registered = Registered.of(vfs)
      if registered.pointee.lock.takeUnretainedValue().isLocked {
        // SQLite requires a file's methods to be set, or cleared, even when its open fails.
        file?.pointee.pMethods = nil
        return SQLITE_CANTOPEN
      }
      let platform = registered.pointee.platform
      return platform.pointee.xOpen(platform, path, file, flags, outFlags)
    }
    registered.initialize(to: Registered(vfs: vfs, platform: platform, lock: .passUnretained(self)))
    let status = sqlite3_vfs_register(vfsPointer, 0)
    // Every property is set, so `deinit` runs on this throw too and frees what `init` made
    // (unregistering a VFS SQLite never took changes nothing).
    guard status == SQLITE_OK else {
      throw CLIError.storage("simulate: SQLite refused the simulated device's VFS (\(status))")
    }
  }

  /// Unregisters the VFS. Every connection through it is closed by then: the run closes each
  /// cache before it lets go of the lock.
  deinit {
    _ = sqlite3_vfs_unregister(vfsPointer)
    registered.deinitialize(count: 1)
    registered.deallocate()
    nameBytes.deallocate()
  }

  /// The `sqlite3_vfs` SQLite holds while the VFS is registered.
  private var vfsPointer: UnsafeMutablePointer<sqlite3_vfs> {
    (UnsafeMutableRawPointer(registered) + Registered.vfsOffset)
      .assumingMemoryBound(to: sqlite3_vfs.self)
  }

  /// Whether a file opened now is refused.
  var isLocked: Bool { locked.withLock { $0 } }

  /// The device restarted and is not unlocked yet.
  func lock() { locked.withLock { $0 = true } }

  /// The device's first unlock: files open again.
  func unlock() { locked.withLock { $0 = false } }
}
