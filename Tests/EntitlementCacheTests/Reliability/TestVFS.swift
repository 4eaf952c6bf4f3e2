import Foundation
import SQLiteFaultInjection

/// The fault-injecting, power-cutting VFS of `Tests/SQLiteFaultInjection`, registered under a name of
/// its own for one test, so tests running in parallel never share one.
///
/// `@unchecked Sendable`: the C object guards every field it mutates with its own pthread mutex
/// (each `testvfs_*` function takes it), and this class holds nothing else mutable.
final class TestVFS: @unchecked Sendable {
  /// The calls a fault can be armed on.
  enum Call: CaseIterable, CustomStringConvertible, Sendable {
    case open, read, write, sync, truncate, lock, shm, fileSize, delete, access

    var raw: TestVFSCall {
      switch self {
      case .open: TestVFSCallOpen
      case .read: TestVFSCallRead
      case .write: TestVFSCallWrite
      case .sync: TestVFSCallSync
      case .truncate: TestVFSCallTruncate
      case .lock: TestVFSCallLock
      case .shm: TestVFSCallShm
      case .fileSize: TestVFSCallFileSize
      case .delete: TestVFSCallDelete
      case .access: TestVFSCallAccess
      }
    }

    var description: String {
      switch self {
      case .open: "open"
      case .read: "read"
      case .write: "write"
      case .sync: "sync"
      case .truncate: "truncate"
      case .lock: "lock"
      case .shm: "shm"
      case .fileSize: "file size"
      case .delete: "delete"
      case .access: "access"
      }
    }
  }

  /// What a power cut does to each file's writes since its last sync.
  enum PowerCut: CaseIterable, CustomStringConvertible, Sendable {
    /// None reached the disk.
    case dropAll
    /// All did: the process died and the operating system flushed its cache.
    case keepAll
    /// Each was kept, dropped, or kept in part (whole sectors of a prefix).
    case tear

    var raw: TestVFSPowerCut {
      switch self {
      case .dropAll: TestVFSPowerCutDropAll
      case .keepAll: TestVFSPowerCutKeepAll
      case .tear: TestVFSPowerCutTear
      }
    }

    var description: String {
      switch self {
      case .dropAll: "drop unsynced writes"
      case .keepAll: "keep unsynced writes"
      case .tear: "tear unsynced writes"
      }
    }
  }

  struct RegistrationFailed: Error {}

  /// The name a configuration's `vfsName` opens the file through.
  let name: String
  private let handle: OpaquePointer

  init() throws {
    name = "test-vfs-\(UUID().uuidString)"
    guard let handle = testvfs_create(name) else { throw RegistrationFailed() }
    self.handle = handle
  }

  deinit {
    testvfs_destroy(handle)
  }

  /// Fails the `k`-th call of `call` from now (k ≥ 1) with `code`, or the call's own
  /// `SQLITE_IOERR_*` code when nil; every later one too when `persistent`.
  func armFault(_ call: Call, at k: Int, code: Int32? = nil, persistent: Bool = false) {
    testvfs_arm_fault(handle, call.raw, Int64(k), code ?? 0, persistent ? 1 : 0)
  }

  /// Cuts the power just before the `n`-th sync from now (n ≥ 1).
  func armPowerCut(atSync n: Int, _ cut: PowerCut, seed: UInt32 = 1) {
    testvfs_arm_power_cut(handle, Int64(n), cut.raw, seed)
  }

  /// Kills the process, as far as its files can tell, at the `n`-th call from now (n ≥ 1) of
  /// any kind: that call and every later one fails, and the files keep every write made before
  /// it, as a process killed with SIGKILL leaves them. ``isDead`` says whether it happened.
  func armKill(atCall n: Int) { testvfs_arm_kill(handle, Int64(n)) }

  /// Cuts the power now: the files are left as the disk would hold them.
  func cutPower(_ cut: PowerCut, seed: UInt32 = 1) throws {
    let error = testvfs_cut_power(handle, cut.raw, seed)
    guard error == 0 else { throw POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO) }
  }

  /// Disarms everything and resets the counts.
  func disarm() { testvfs_disarm(handle) }

  /// Whether every database file opens read-only, as one whose permissions refuse this
  /// process writing it does (the tests run as root, which permissions do not stop).
  func setReadOnlyOpens(_ readOnly: Bool) { testvfs_set_read_only_opens(handle, readOnly ? 1 : 0) }

  /// The calls of `call` since the last arm or disarm.
  func calls(_ call: Call) -> Int { Int(testvfs_calls(handle, call.raw)) }

  /// How many calls failed because of an armed fault since the last arm or disarm.
  var faultsInjected: Int { Int(testvfs_faults_injected(handle)) }

  /// Whether the power was cut, or the process killed.
  var isDead: Bool { testvfs_is_dead(handle) != 0 }

  /// Calls `hook(context)` in place of each sleep asked of this VFS (SQLite's busy handler, the
  /// library's waits), without waiting; nil restores real sleeps. It runs on the thread that
  /// would have slept: a test scripts what another process does while this one waits for it.
  func replaceSleeps(
    with hook: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?,
    context: UnsafeMutableRawPointer? = nil
  ) {
    testvfs_set_sleep_hook(handle, hook, context)
  }

  /// How many sleeps were asked of this VFS since it was created.
  var sleeps: Int { Int(testvfs_sleeps(handle)) }

  /// Takes what is on disk now as durable when each file is next opened.
  func forgetFiles() { testvfs_forget_files(handle) }
}
