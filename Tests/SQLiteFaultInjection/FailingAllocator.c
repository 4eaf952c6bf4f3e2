// See SQLiteFaultInjection.h. SQLite's allocator is replaced before main runs, while nothing has
// started SQLite yet (sqlite3_config is only allowed then); it forwards to SQLite's default
// allocator and fails the armed allocations of the arming thread.
#include "SQLiteFaultInjection.h"

#include <sqlite3.h>
#include <stddef.h>

static sqlite3_mem_methods defaultMethods;
static int installed;

// Per thread: one test arms and makes its writes on its own thread.
static _Thread_local int64_t calls;
static _Thread_local int64_t failAt;  // 0: disarmed
static _Thread_local int failPersistently;
static _Thread_local int64_t injected;

static int shouldFail(void) {
  if (failAt == 0) return 0;
  calls += 1;
  if (calls == failAt || (failPersistently && calls > failAt)) {
    injected += 1;
    return 1;
  }
  return 0;
}

static void *failingMalloc(int size) {
  return shouldFail() ? NULL : defaultMethods.xMalloc(size);
}

static void *failingRealloc(void *pointer, int size) {
  return shouldFail() ? NULL : defaultMethods.xRealloc(pointer, size);
}

__attribute__((constructor)) static void installFailingAllocator(void) {
  if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &defaultMethods) != SQLITE_OK) return;
  sqlite3_mem_methods methods = defaultMethods;
  methods.xMalloc = failingMalloc;
  methods.xRealloc = failingRealloc;
  installed = sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) == SQLITE_OK;
}

void testalloc_arm(int64_t k, int persistent) {
  calls = 0;
  injected = 0;
  failPersistently = persistent;
  failAt = k;
}

void testalloc_disarm(void) {
  failAt = 0;
  calls = 0;
  injected = 0;
}

int64_t testalloc_calls(void) { return calls; }

int64_t testalloc_faults_injected(void) { return injected; }

int testalloc_is_installed(void) { return installed; }
