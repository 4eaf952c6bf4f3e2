// Relaxed atomic loads, stores and exchanges of one 64-bit word, for the cache's read paths.
//
// Synchronization's Atomic does this in Swift, but only from iOS 18 and macOS 15; the compiler
// builtins below work at every deployment target the package supports, and at -O Swift inlines
// these static inline functions into their callers, so the hot read still pays one plain load.
//
// The word lives in memory the Swift side allocates, initializes before sharing and frees once
// no thread can reach it; in between it is read and written only through these functions.
#ifndef ENTITLEMENT_CACHE_ATOMICS_H
#define ENTITLEMENT_CACHE_ATOMICS_H

#include <stdint.h>

/// The word's value, with no ordering against other memory.
static inline uint64_t ec_atomic_load_relaxed(const uint64_t *word) {
  return __atomic_load_n(word, __ATOMIC_RELAXED);
}

/// Sets the word to `value`, with no ordering against other memory.
static inline void ec_atomic_store_relaxed(uint64_t *word, uint64_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELAXED);
}

/// Sets the word to `value` and returns what it held, with no ordering against other memory:
/// of several threads exchanging at once, each sees what the one before it stored.
static inline uint64_t ec_atomic_exchange_relaxed(uint64_t *word, uint64_t value) {
  return __atomic_exchange_n(word, value, __ATOMIC_RELAXED);
}

#endif
