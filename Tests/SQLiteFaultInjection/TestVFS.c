// See SQLiteFaultInjection.h. Every file the wrapped VFS opens gets a TestFile in front of the real
// one; every call counts, may fail, and (for writes, truncations and syncs) keeps the model of
// what a power cut would leave on the disk.
//
// The durability model is SQLite's crash test's: what was in a file when it was first opened
// and every write before that file's last successful sync is durable; later writes are only in
// the operating system's cache, and a power cut keeps each, drops it, or keeps whole sectors of
// a prefix of it. Deletions are taken as durable at once (SQLite syncs the directory where it
// matters). The -shm file is never modelled: SQLite rebuilds it from the log after a crash.
#include "SQLiteFaultInjection.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SectorSize = 512 };

// One write or truncation not yet synced. `size` < 0 is a truncation to `offset`.
typedef struct Pending {
  sqlite3_int64 offset;
  sqlite3_int64 size;
  unsigned char *data;
  struct Pending *next;
} Pending;

// What the disk durably holds of one path, and what is only in the cache.
typedef struct Tracked {
  char *path;
  unsigned char *image;
  sqlite3_int64 imageSize;
  Pending *head;
  Pending *tail;
  // Removed through the VFS with its directory synced, and not opened since: the removal is
  // durable, and a power cut leaves no file there.
  int deleted;
  struct Tracked *next;
} Tracked;

struct TestVFS {
  sqlite3_vfs base;  // first: SQLite hands this pointer back to every VFS method
  sqlite3_vfs *real;
  char *name;
  pthread_mutex_t mutex;  // guards everything below
  int64_t calls[TestVFSCallCount];
  int armedCall;  // -1: no fault armed
  int64_t armedK;
  int armedCode;
  int persistent;
  int64_t injected;
  int64_t powerCutAtSync;  // 0: none armed
  int powerCutKind;
  uint32_t powerCutSeed;
  int dead;
  int64_t killAtCall;  // 0: no kill armed
  int64_t callsSinceKillArmed;
  int readOnlyOpens;  // non-zero: a read-write open of a database is read-only, as permissions make it
  Tracked *tracked;
  void (*sleepHook)(void *);  // non-NULL: xSleep calls it instead of sleeping
  void *sleepContext;
  int64_t sleeps;
};

typedef struct TestFile {
  sqlite3_file base;  // first: SQLite's pointer to the file is a pointer to this
  TestVFS *vfs;
  Tracked *tracked;  // NULL for files the model ignores (temporary files)
  sqlite3_file *real;
} TestFile;

static int defaultCode(TestVFSCall call) {
  switch (call) {
    case TestVFSCallOpen: return SQLITE_CANTOPEN;
    case TestVFSCallRead: return SQLITE_IOERR_READ;
    case TestVFSCallWrite: return SQLITE_IOERR_WRITE;
    case TestVFSCallSync: return SQLITE_IOERR_FSYNC;
    case TestVFSCallTruncate: return SQLITE_IOERR_TRUNCATE;
    case TestVFSCallLock: return SQLITE_IOERR_LOCK;
    case TestVFSCallShm: return SQLITE_IOERR_SHMMAP;
    case TestVFSCallFileSize: return SQLITE_IOERR_FSTAT;
    case TestVFSCallDelete: return SQLITE_IOERR_DELETE;
    case TestVFSCallAccess: return SQLITE_IOERR_ACCESS;
    default: return SQLITE_IOERR;
  }
}

// Counts one call and says how it must fail: 0, or the code to return.
static int intercept(TestVFS *vfs, TestVFSCall call) {
  int code = 0;
  pthread_mutex_lock(&vfs->mutex);
  int64_t index = ++vfs->calls[call];
  if (vfs->killAtCall != 0 && ++vfs->callsSinceKillArmed == vfs->killAtCall) {
    // The process is gone: every write it made stays on the disk as it is (the operating
    // system keeps them), and no call after this one reaches a file.
    vfs->dead = 1;
  }
  if (vfs->dead) {
    code = defaultCode(call);
  } else if (vfs->armedCall == (int)call
             && (index == vfs->armedK || (vfs->persistent && index > vfs->armedK))) {
    code = vfs->armedCode != 0 ? vfs->armedCode : defaultCode(call);
    vfs->injected += 1;
  }
  pthread_mutex_unlock(&vfs->mutex);
  return code;
}

// ---- The durability model (callers hold the mutex) ----

static uint32_t nextRandom(uint32_t *state) {
  // xorshift32: reproducible from the seed, which is all a test needs.
  uint32_t x = *state != 0 ? *state : 0x9e3779b9u;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return x;
}

static void freePending(Tracked *tracked) {
  Pending *pending = tracked->head;
  while (pending != NULL) {
    Pending *next = pending->next;
    free(pending->data);
    free(pending);
    pending = next;
  }
  tracked->head = NULL;
  tracked->tail = NULL;
}

// Applies one pending change to an image. Returns 0, or ENOMEM.
static int applyPending(unsigned char **image, sqlite3_int64 *size, const Pending *pending,
                        sqlite3_int64 keep) {
  if (pending->size < 0) {
    if (pending->offset < *size) *size = pending->offset;
    return 0;
  }
  sqlite3_int64 end = pending->offset + keep;
  if (end > *size) {
    unsigned char *grown = realloc(*image, (size_t)end);
    if (grown == NULL && end > 0) return ENOMEM;
    memset(grown + *size, 0, (size_t)(end - *size));
    *image = grown;
    *size = end;
  }
  memcpy(*image + pending->offset, pending->data, (size_t)keep);
  return 0;
}

// Makes every pending change of `tracked` durable (a successful sync).
static int foldPending(Tracked *tracked) {
  for (Pending *pending = tracked->head; pending != NULL; pending = pending->next) {
    int error = applyPending(&tracked->image, &tracked->imageSize, pending, pending->size);
    if (error != 0) return error;
  }
  freePending(tracked);
  return 0;
}

static int appendPending(Tracked *tracked, sqlite3_int64 offset, sqlite3_int64 size,
                         const void *data) {
  Pending *pending = calloc(1, sizeof(Pending));
  if (pending == NULL) return SQLITE_NOMEM;
  pending->offset = offset;
  pending->size = size;
  if (size > 0) {
    pending->data = malloc((size_t)size);
    if (pending->data == NULL) {
      free(pending);
      return SQLITE_NOMEM;
    }
    memcpy(pending->data, data, (size_t)size);
  }
  if (tracked->tail != NULL) tracked->tail->next = pending;
  else tracked->head = pending;
  tracked->tail = pending;
  return SQLITE_OK;
}

// Reads what is on disk at `path` now: the durable state when the model first meets a file.
static int readWholeFile(const char *path, unsigned char **image, sqlite3_int64 *size) {
  *image = NULL;
  *size = 0;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return errno == ENOENT ? 0 : errno;
  sqlite3_int64 capacity = 0;
  for (;;) {
    if (*size == capacity) {
      capacity = capacity == 0 ? 65536 : capacity * 2;
      unsigned char *grown = realloc(*image, (size_t)capacity);
      if (grown == NULL) {
        close(fd);
        return ENOMEM;
      }
      *image = grown;
    }
    ssize_t got = read(fd, *image + *size, (size_t)(capacity - *size));
    if (got < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      close(fd);
      return error;
    }
    if (got == 0) break;
    *size += got;
  }
  close(fd);
  return 0;
}

static Tracked *findTracked(TestVFS *vfs, const char *path) {
  for (Tracked *tracked = vfs->tracked; tracked != NULL; tracked = tracked->next) {
    if (strcmp(tracked->path, path) == 0) return tracked;
  }
  return NULL;
}

static Tracked *trackedFor(TestVFS *vfs, const char *path) {
  Tracked *tracked = findTracked(vfs, path);
  if (tracked != NULL) {
    tracked->deleted = 0;
    return tracked;
  }
  tracked = calloc(1, sizeof(Tracked));
  if (tracked == NULL) return NULL;
  tracked->path = strdup(path);
  if (tracked->path == NULL || readWholeFile(path, &tracked->image, &tracked->imageSize) != 0) {
    free(tracked->path);
    free(tracked->image);
    free(tracked);
    return NULL;
  }
  tracked->next = vfs->tracked;
  vfs->tracked = tracked;
  return tracked;
}

static int writeWholeFile(const char *path, const unsigned char *image, sqlite3_int64 size) {
  // O_TRUNC, not a fresh file: SQLite's open descriptors must keep pointing at this inode.
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return errno;
  sqlite3_int64 written = 0;
  while (written < size) {
    ssize_t put = pwrite(fd, image + written, (size_t)(size - written), (off_t)written);
    if (put < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      close(fd);
      return error;
    }
    written += put;
  }
  int error = fsync(fd) == 0 ? 0 : errno;
  close(fd);
  return error;
}

// Leaves on disk what a power cut would, and kills the VFS. Callers hold the mutex.
static int cutPowerLocked(TestVFS *vfs, TestVFSPowerCut cut, uint32_t seed) {
  uint32_t random = seed;
  int result = 0;
  vfs->dead = 1;
  for (Tracked *tracked = vfs->tracked; tracked != NULL; tracked = tracked->next) {
    if (tracked->deleted) continue;
    unsigned char *image = NULL;
    sqlite3_int64 size = tracked->imageSize;
    if (size > 0) {
      image = malloc((size_t)size);
      if (image == NULL) return ENOMEM;
      memcpy(image, tracked->image, (size_t)size);
    }
    int error = 0;
    for (Pending *pending = tracked->head; pending != NULL && error == 0;
         pending = pending->next) {
      sqlite3_int64 keep = pending->size;
      if (cut == TestVFSPowerCutDropAll) continue;
      if (cut == TestVFSPowerCutTear) {
        uint32_t roll = nextRandom(&random) % 3;
        if (roll == 0) continue;
        if (roll == 2 && pending->size > SectorSize) {
          sqlite3_int64 sectors = pending->size / SectorSize;
          keep = (sqlite3_int64)(nextRandom(&random) % (uint32_t)sectors) * SectorSize;
        }
      }
      error = applyPending(&image, &size, pending, keep);
    }
    if (error == 0) error = writeWholeFile(tracked->path, image, size);
    free(image);
    if (error != 0 && result == 0) result = error;
  }
  return result;
}

// ---- sqlite3_io_methods ----

static int fileClose(sqlite3_file *file) {
  TestFile *test = (TestFile *)file;
  // Always closes the real file, dead or not: the descriptor and its locks must go.
  return test->real->pMethods->xClose(test->real);
}

static int fileRead(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
  TestFile *test = (TestFile *)file;
  int code = intercept(test->vfs, TestVFSCallRead);
  if (code != 0) return code;
  return test->real->pMethods->xRead(test->real, buffer, amount, offset);
}

static int fileWrite(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
  TestFile *test = (TestFile *)file;
  TestVFS *vfs = test->vfs;
  int code = intercept(vfs, TestVFSCallWrite);
  if (code != 0) return code;
  pthread_mutex_lock(&vfs->mutex);
  int rc = test->real->pMethods->xWrite(test->real, buffer, amount, offset);
  if (rc == SQLITE_OK && test->tracked != NULL) {
    rc = appendPending(test->tracked, offset, amount, buffer);
  }
  pthread_mutex_unlock(&vfs->mutex);
  return rc;
}

static int fileTruncate(sqlite3_file *file, sqlite3_int64 size) {
  TestFile *test = (TestFile *)file;
  TestVFS *vfs = test->vfs;
  int code = intercept(vfs, TestVFSCallTruncate);
  if (code != 0) return code;
  pthread_mutex_lock(&vfs->mutex);
  int rc = test->real->pMethods->xTruncate(test->real, size);
  if (rc == SQLITE_OK && test->tracked != NULL) rc = appendPending(test->tracked, size, -1, NULL);
  pthread_mutex_unlock(&vfs->mutex);
  return rc;
}

static int fileSync(sqlite3_file *file, int flags) {
  TestFile *test = (TestFile *)file;
  TestVFS *vfs = test->vfs;
  int code = intercept(vfs, TestVFSCallSync);
  if (code != 0) return code;
  pthread_mutex_lock(&vfs->mutex);
  if (vfs->powerCutAtSync != 0 && vfs->calls[TestVFSCallSync] == vfs->powerCutAtSync) {
    cutPowerLocked(vfs, (TestVFSPowerCut)vfs->powerCutKind, vfs->powerCutSeed);
    pthread_mutex_unlock(&vfs->mutex);
    return SQLITE_IOERR_FSYNC;
  }
  int rc = test->real->pMethods->xSync(test->real, flags);
  if (rc == SQLITE_OK && test->tracked != NULL && foldPending(test->tracked) != 0) {
    rc = SQLITE_NOMEM;
  }
  pthread_mutex_unlock(&vfs->mutex);
  return rc;
}

static int fileFileSize(sqlite3_file *file, sqlite3_int64 *size) {
  TestFile *test = (TestFile *)file;
  int code = intercept(test->vfs, TestVFSCallFileSize);
  if (code != 0) return code;
  return test->real->pMethods->xFileSize(test->real, size);
}

static int fileLock(sqlite3_file *file, int level) {
  TestFile *test = (TestFile *)file;
  int code = intercept(test->vfs, TestVFSCallLock);
  if (code != 0) return code;
  return test->real->pMethods->xLock(test->real, level);
}

static int fileUnlock(sqlite3_file *file, int level) {
  TestFile *test = (TestFile *)file;
  return test->real->pMethods->xUnlock(test->real, level);
}

static int fileCheckReservedLock(sqlite3_file *file, int *result) {
  TestFile *test = (TestFile *)file;
  return test->real->pMethods->xCheckReservedLock(test->real, result);
}

static int fileFileControl(sqlite3_file *file, int op, void *argument) {
  TestFile *test = (TestFile *)file;
  return test->real->pMethods->xFileControl(test->real, op, argument);
}

static int fileSectorSize(sqlite3_file *file) {
  TestFile *test = (TestFile *)file;
  return test->real->pMethods->xSectorSize(test->real);
}

static int fileDeviceCharacteristics(sqlite3_file *file) {
  TestFile *test = (TestFile *)file;
  return test->real->pMethods->xDeviceCharacteristics(test->real);
}

static int fileShmMap(sqlite3_file *file, int region, int size, int extend,
                      void volatile **pointer) {
  TestFile *test = (TestFile *)file;
  int code = intercept(test->vfs, TestVFSCallShm);
  if (code != 0) return code;
  return test->real->pMethods->xShmMap(test->real, region, size, extend, pointer);
}

static int fileShmLock(sqlite3_file *file, int offset, int count, int flags) {
  TestFile *test = (TestFile *)file;
  if (flags & SQLITE_SHM_LOCK) {
    int code = intercept(test->vfs, TestVFSCallShm);
    if (code != 0) return code == SQLITE_IOERR_SHMMAP ? SQLITE_IOERR_SHMLOCK : code;
  }
  return test->real->pMethods->xShmLock(test->real, offset, count, flags);
}

static void fileShmBarrier(sqlite3_file *file) {
  TestFile *test = (TestFile *)file;
  test->real->pMethods->xShmBarrier(test->real);
}

static int fileShmUnmap(sqlite3_file *file, int deleteFlag) {
  TestFile *test = (TestFile *)file;
  return test->real->pMethods->xShmUnmap(test->real, deleteFlag);
}

static int fileFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
  TestFile *test = (TestFile *)file;
  // No memory-mapped reads: every read must pass through xRead to be counted and failed.
  (void)test;
  (void)offset;
  (void)amount;
  *pointer = NULL;
  return SQLITE_OK;
}

static int fileUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
  (void)file;
  (void)offset;
  (void)pointer;
  return SQLITE_OK;
}

static const sqlite3_io_methods testFileMethods = {
  3,
  fileClose,
  fileRead,
  fileWrite,
  fileTruncate,
  fileSync,
  fileFileSize,
  fileLock,
  fileUnlock,
  fileCheckReservedLock,
  fileFileControl,
  fileSectorSize,
  fileDeviceCharacteristics,
  fileShmMap,
  fileShmLock,
  fileShmBarrier,
  fileShmUnmap,
  fileFetch,
  fileUnfetch,
};

// ---- sqlite3_vfs ----

static int vfsOpen(sqlite3_vfs *base, sqlite3_filename name, sqlite3_file *file, int flags,
                   int *outFlags) {
  TestVFS *vfs = (TestVFS *)base;
  TestFile *test = (TestFile *)file;
  test->base.pMethods = NULL;
  test->vfs = vfs;
  test->tracked = NULL;
  test->real = (sqlite3_file *)(test + 1);
  int code = intercept(vfs, TestVFSCallOpen);
  if (code != 0) return code;
  int modelled = name != NULL
    && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) != 0;
  if (modelled) {
    pthread_mutex_lock(&vfs->mutex);
    test->tracked = trackedFor(vfs, name);
    pthread_mutex_unlock(&vfs->mutex);
    if (test->tracked == NULL) return SQLITE_NOMEM;
  }
  pthread_mutex_lock(&vfs->mutex);
  int readOnly = vfs->readOnlyOpens && (flags & SQLITE_OPEN_MAIN_DB) != 0;
  pthread_mutex_unlock(&vfs->mutex);
  if (readOnly) {
    // What the unix VFS does when open(2) refuses O_RDWR and grants O_RDONLY: the file opens,
    // and SQLite learns from the flags handed back that it cannot write it.
    flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY;
  }
  int rc = vfs->real->xOpen(vfs->real, name, test->real, flags, outFlags);
  if (rc != SQLITE_OK) {
    // The real file may want its xClose even after a failure; give it here and report none.
    if (test->real->pMethods != NULL) test->real->pMethods->xClose(test->real);
    return rc;
  }
  test->base.pMethods = &testFileMethods;
  return SQLITE_OK;
}

void testvfs_set_read_only_opens(TestVFS *vfs, int readOnly) {
  pthread_mutex_lock(&vfs->mutex);
  vfs->readOnlyOpens = readOnly;
  pthread_mutex_unlock(&vfs->mutex);
}

static int vfsDelete(sqlite3_vfs *base, const char *name, int syncDirectory) {
  TestVFS *vfs = (TestVFS *)base;
  int code = intercept(vfs, TestVFSCallDelete);
  if (code != 0) return code;
  int rc = vfs->real->xDelete(vfs->real, name, syncDirectory);
  if (rc == SQLITE_OK) {
    pthread_mutex_lock(&vfs->mutex);
    Tracked *tracked = findTracked(vfs, name);
    if (tracked != NULL) {
      freePending(tracked);
      tracked->imageSize = 0;
      tracked->deleted = syncDirectory != 0;
    }
    pthread_mutex_unlock(&vfs->mutex);
  }
  return rc;
}

static int vfsAccess(sqlite3_vfs *base, const char *name, int flags, int *result) {
  TestVFS *vfs = (TestVFS *)base;
  int code = intercept(vfs, TestVFSCallAccess);
  if (code != 0) return code;
  return vfs->real->xAccess(vfs->real, name, flags, result);
}

static int vfsFullPathname(sqlite3_vfs *base, const char *name, int size, char *out) {
  TestVFS *vfs = (TestVFS *)base;
  return vfs->real->xFullPathname(vfs->real, name, size, out);
}

static void *vfsDlOpen(sqlite3_vfs *base, const char *name) {
  TestVFS *vfs = (TestVFS *)base;
  return vfs->real->xDlOpen(vfs->real, name);
}

static void vfsDlError(sqlite3_vfs *base, int size, char *message) {
  TestVFS *vfs = (TestVFS *)base;
  vfs->real->xDlError(vfs->real, size, message);
}

static void (*vfsDlSym(sqlite3_vfs *base, void *handle, const char *symbol))(void) {
  TestVFS *vfs = (TestVFS *)base;
  return vfs->real->xDlSym(vfs->real, handle, symbol);
}

static void vfsDlClose(sqlite3_vfs *base, void *handle) {
  TestVFS *vfs = (TestVFS *)base;
  vfs->real->xDlClose(vfs->real, handle);
}

static int vfsRandomness(sqlite3_vfs *base, int size, char *out) {
  TestVFS *vfs = (TestVFS *)base;
  return vfs->real->xRandomness(vfs->real, size, out);
}

static int vfsSleep(sqlite3_vfs *base, int microseconds) {
  TestVFS *vfs = (TestVFS *)base;
  pthread_mutex_lock(&vfs->mutex);
  vfs->sleeps++;
  void (*hook)(void *) = vfs->sleepHook;
  void *context = vfs->sleepContext;
  pthread_mutex_unlock(&vfs->mutex);
  // Called without the mutex: the hook may use connections of this VFS.
  if (hook != NULL) {
    hook(context);
    return microseconds;
  }
  return vfs->real->xSleep(vfs->real, microseconds);
}

static int vfsCurrentTime(sqlite3_vfs *base, double *now) {
  TestVFS *vfs = (TestVFS *)base;
  return vfs->real->xCurrentTime(vfs->real, now);
}

static int vfsGetLastError(sqlite3_vfs *base, int size, char *message) {
  TestVFS *vfs = (TestVFS *)base;
  return vfs->real->xGetLastError(vfs->real, size, message);
}

static int vfsCurrentTimeInt64(sqlite3_vfs *base, sqlite3_int64 *now) {
  TestVFS *vfs = (TestVFS *)base;
  return vfs->real->xCurrentTimeInt64(vfs->real, now);
}

// ---- The public functions ----

TestVFS *testvfs_create(const char *name) {
  sqlite3_vfs *real = sqlite3_vfs_find(NULL);
  if (real == NULL || real->iVersion < 2) return NULL;
  TestVFS *vfs = calloc(1, sizeof(TestVFS));
  if (vfs == NULL) return NULL;
  vfs->name = strdup(name);
  if (vfs->name == NULL || pthread_mutex_init(&vfs->mutex, NULL) != 0) {
    free(vfs->name);
    free(vfs);
    return NULL;
  }
  vfs->real = real;
  vfs->armedCall = -1;
  vfs->base.iVersion = 2;
  vfs->base.szOsFile = (int)sizeof(TestFile) + real->szOsFile;
  vfs->base.mxPathname = real->mxPathname;
  vfs->base.zName = vfs->name;
  vfs->base.xOpen = vfsOpen;
  vfs->base.xDelete = vfsDelete;
  vfs->base.xAccess = vfsAccess;
  vfs->base.xFullPathname = vfsFullPathname;
  vfs->base.xDlOpen = vfsDlOpen;
  vfs->base.xDlError = vfsDlError;
  vfs->base.xDlSym = vfsDlSym;
  vfs->base.xDlClose = vfsDlClose;
  vfs->base.xRandomness = vfsRandomness;
  vfs->base.xSleep = vfsSleep;
  vfs->base.xCurrentTime = vfsCurrentTime;
  vfs->base.xGetLastError = vfsGetLastError;
  vfs->base.xCurrentTimeInt64 = vfsCurrentTimeInt64;
  if (sqlite3_vfs_register(&vfs->base, 0) != SQLITE_OK) {
    pthread_mutex_destroy(&vfs->mutex);
    free(vfs->name);
    free(vfs);
    return NULL;
  }
  return vfs;
}

static void forgetLocked(TestVFS *vfs) {
  Tracked *tracked = vfs->tracked;
  while (tracked != NULL) {
    Tracked *next = tracked->next;
    freePending(tracked);
    free(tracked->image);
    free(tracked->path);
    free(tracked);
    tracked = next;
  }
  vfs->tracked = NULL;
}

void testvfs_destroy(TestVFS *vfs) {
  sqlite3_vfs_unregister(&vfs->base);
  forgetLocked(vfs);
  pthread_mutex_destroy(&vfs->mutex);
  free(vfs->name);
  free(vfs);
}

static void resetCountsLocked(TestVFS *vfs) {
  memset(vfs->calls, 0, sizeof(vfs->calls));
  vfs->injected = 0;
}

void testvfs_arm_fault(TestVFS *vfs, TestVFSCall call, int64_t k, int code, int persistent) {
  pthread_mutex_lock(&vfs->mutex);
  resetCountsLocked(vfs);
  vfs->armedCall = (int)call;
  vfs->armedK = k;
  vfs->armedCode = code;
  vfs->persistent = persistent;
  pthread_mutex_unlock(&vfs->mutex);
}

void testvfs_arm_power_cut(TestVFS *vfs, int64_t n, TestVFSPowerCut cut, uint32_t seed) {
  pthread_mutex_lock(&vfs->mutex);
  resetCountsLocked(vfs);
  vfs->powerCutAtSync = n;
  vfs->powerCutKind = (int)cut;
  vfs->powerCutSeed = seed;
  pthread_mutex_unlock(&vfs->mutex);
}

void testvfs_arm_kill(TestVFS *vfs, int64_t n) {
  pthread_mutex_lock(&vfs->mutex);
  resetCountsLocked(vfs);
  vfs->killAtCall = n;
  vfs->callsSinceKillArmed = 0;
  pthread_mutex_unlock(&vfs->mutex);
}

int testvfs_cut_power(TestVFS *vfs, TestVFSPowerCut cut, uint32_t seed) {
  pthread_mutex_lock(&vfs->mutex);
  int result = cutPowerLocked(vfs, cut, seed);
  pthread_mutex_unlock(&vfs->mutex);
  return result;
}

void testvfs_disarm(TestVFS *vfs) {
  pthread_mutex_lock(&vfs->mutex);
  resetCountsLocked(vfs);
  vfs->armedCall = -1;
  vfs->powerCutAtSync = 0;
  vfs->killAtCall = 0;
  pthread_mutex_unlock(&vfs->mutex);
}

int64_t testvfs_calls(TestVFS *vfs, TestVFSCall call) {
  pthread_mutex_lock(&vfs->mutex);
  int64_t calls = vfs->calls[call];
  pthread_mutex_unlock(&vfs->mutex);
  return calls;
}

int64_t testvfs_faults_injected(TestVFS *vfs) {
  pthread_mutex_lock(&vfs->mutex);
  int64_t injected = vfs->injected;
  pthread_mutex_unlock(&vfs->mutex);
  return injected;
}

int testvfs_is_dead(TestVFS *vfs) {
  pthread_mutex_lock(&vfs->mutex);
  int dead = vfs->dead;
  pthread_mutex_unlock(&vfs->mutex);
  return dead;
}

void testvfs_set_sleep_hook(TestVFS *vfs, void (*hook)(void *), void *context) {
  pthread_mutex_lock(&vfs->mutex);
  vfs->sleepHook = hook;
  vfs->sleepContext = context;
  pthread_mutex_unlock(&vfs->mutex);
}

int64_t testvfs_sleeps(TestVFS *vfs) {
  pthread_mutex_lock(&vfs->mutex);
  int64_t sleeps = vfs->sleeps;
  pthread_mutex_unlock(&vfs->mutex);
  return sleeps;
}

void testvfs_forget_files(TestVFS *vfs) {
  pthread_mutex_lock(&vfs->mutex);
  forgetLocked(vfs);
  pthread_mutex_unlock(&vfs->mutex);
}
