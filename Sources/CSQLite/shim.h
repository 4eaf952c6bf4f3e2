#ifndef ENTITLEMENT_CACHE_CSQLITE_SHIM_H
#define ENTITLEMENT_CACHE_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT and SQLITE_STATIC are macros casting integers to function pointers,
// which Swift cannot import; these give them names Swift can see.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type csqlite_static(void) { return SQLITE_STATIC; }

// sqlite3_db_config is variadic, which Swift cannot call; this fixes the argument list of the
// options that take an int and an optional int* result.
static inline int csqlite_db_config_int(sqlite3 *db, int op, int value) {
  return sqlite3_db_config(db, op, value, (int *)0);
}

#endif
