// Fault injection for the reliability tests, in C:
// - a VFS that wraps the platform's default VFS and, on request, fails the k-th call of one
//   kind, or cuts the power at the n-th sync (the shape of SQLite's src/test_vfs.c and its
//   crash tests);
// - an allocator under SQLite that fails the k-th allocation made on the arming thread (the
//   shape of SQLite's test/malloc_common.tcl).
//
// The header names no SQLite type, so Swift sees only this module's functions and the
// package's CSQLite module keeps the only import of sqlite3.h.
#ifndef SQLITE_FAULT_INJECTION_H
#define SQLITE_FAULT_INJECTION_H

#include <stdint.h>

/// The calls a fault can be armed on.
typedef enum TestVFSCall {
  TestVFSCallOpen = 0,  // xOpen of a file (database, write-ahead log, journal)
  TestVFSCallRead,      // xRead
  TestVFSCallWrite,     // xWrite
  TestVFSCallSync,      // xSync
  TestVFSCallTruncate,  // xTruncate
  TestVFSCallLock,      // xLock (never xUnlock, which SQLite may not fail)
  TestVFSCallShm,       // xShmMap, and xShmLock when it takes a lock
  TestVFSCallFileSize,  // xFileSize
  TestVFSCallDelete,    // xDelete
  TestVFSCallAccess,    // xAccess
  TestVFSCallCount
} TestVFSCall;

/// What a power cut does to the writes since each file's last sync.
typedef enum TestVFSPowerCut {
  TestVFSPowerCutDropAll = 0,  // none of them reached the disk
  TestVFSPowerCutKeepAll,      // all of them did (the process died, the OS flushed)
  TestVFSPowerCutTear          // each is kept, dropped, or kept only in part (whole sectors)
} TestVFSPowerCut;

typedef struct TestVFS TestVFS;

/// Registers a VFS named `name` over the default one; NULL when it cannot. Not the default:
/// only connections that name it use it.
TestVFS *_Nullable testvfs_create(const char *_Nonnull name);

/// Unregisters and frees it. Every connection that used it must be closed.
void testvfs_destroy(TestVFS *_Nonnull vfs);

/// Fails the `k`-th call of `call` from now (k >= 1) with `code` (0: the call's own
/// SQLITE_IOERR_* code), and every later one when `persistent` is non-zero. Resets the counts.
void testvfs_arm_fault(
  TestVFS *_Nonnull vfs, TestVFSCall call, int64_t k, int code, int persistent);

/// Opens every database file read-only while `readOnly` is non-zero, though SQLite asks to
/// write it: what a file whose permissions refuse this process writing gives, for tests that
/// run as root, which permissions do not stop.
void testvfs_set_read_only_opens(TestVFS *_Nonnull vfs, int readOnly);

/// Cuts the power just before the `n`-th sync from now (n >= 1), doing `cut` to each file's
/// unsynced writes with the pseudo-random `seed`. Resets the counts.
void testvfs_arm_power_cut(TestVFS *_Nonnull vfs, int64_t n, TestVFSPowerCut cut, uint32_t seed);

/// Kills the process, as far as its files can tell, at the `n`-th call from now (n >= 1) of
/// any kind above: that call and every later one fails, and the files keep every write made
/// before it, as the operating system keeps a killed process's writes. The VFS stays dead, as
/// after a power cut. Resets the counts.
void testvfs_arm_kill(TestVFS *_Nonnull vfs, int64_t n);

/// Cuts the power now. Returns 0, or an errno from rewriting the files.
int testvfs_cut_power(TestVFS *_Nonnull vfs, TestVFSPowerCut cut, uint32_t seed);

/// Disarms every fault and power cut, and resets the counts. A VFS whose power was cut stays
/// dead: every connection must be closed and the files reopened through another VFS.
void testvfs_disarm(TestVFS *_Nonnull vfs);

/// The calls of `call` since the last arm or disarm.
int64_t testvfs_calls(TestVFS *_Nonnull vfs, TestVFSCall call);

/// How many calls failed because a fault was armed, since the last arm or disarm.
int64_t testvfs_faults_injected(TestVFS *_Nonnull vfs);

/// Whether the power was cut: afterwards every call that could touch a file fails.
int testvfs_is_dead(TestVFS *_Nonnull vfs);

/// Forgets what it knows of the file at `path` and of its companions, so the next open reads
/// it as durable. For a test that changed files through another VFS between runs.
void testvfs_forget_files(TestVFS *_Nonnull vfs);

/// Calls `hook(context)` in place of every sleep asked of the VFS (SQLite's busy handler, the
/// library's waits), without waiting; NULL restores real sleeps. The hook runs on the
/// sleeping thread, outside the VFS's lock: a test scripts what another process does meanwhile.
void testvfs_set_sleep_hook(
  TestVFS *_Nonnull vfs, void (*_Nullable hook)(void *_Nullable), void *_Nullable context);

/// How many sleeps were asked of the VFS since it was created.
int64_t testvfs_sleeps(TestVFS *_Nonnull vfs);

/// Fails the `k`-th allocation SQLite makes on the calling thread from now (k >= 1), and every
/// later one on it when `persistent` is non-zero. Other threads are never failed, so tests
/// running in parallel are untouched. Resets this thread's counts.
void testalloc_arm(int64_t k, int persistent);

/// Disarms this thread's allocation fault and resets its counts.
void testalloc_disarm(void);

/// The allocations SQLite made on this thread since the last arm or disarm.
int64_t testalloc_calls(void);

/// How many of them failed because a fault was armed.
int64_t testalloc_faults_injected(void);

/// Whether the failing allocator is installed under SQLite (it is installed before `main`,
/// and cannot be once SQLite has started).
int testalloc_is_installed(void);

#endif
