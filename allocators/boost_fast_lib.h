/* boost_fast_lib.h: Boost.Pool itself as boost::fast_pool_allocator uses it
 * (the boost-fast_pool and boost-fast_pool-mutex rows), the library the C model
 * `fast_pool` (fast_pool.h) imitates: process-wide pools, one a chunk size,
 * each a singleton_pool's pool_type (the pool and its mutex in one object);
 * single objects are malloc()/free(p), unordered; arrays of n > 1 are
 * ordered_malloc(n) and free(p, n), as fast_pool_allocator::allocate(n) and
 * deallocate(p, n) call them. A C++ row: boost_fast_lib.cc, compiled as C++17
 * against the Boost headers (libboost-dev), holds the pools; this header and
 * boost_fast_lib.c are the C side.
 *
 * The mutex is Boost's: null_mutex, or with AM_BOOST_FAST_MUTEX=1 Boost's
 * default (details::pool::default_mutex, std::mutex here), one per pool as
 * singleton_pool has (the model's fast_pool-mutex has one for all sizes).
 *
 * It keeps the C model's choices where the model deviates from Boost, so that
 * the two differ only in the pool's own code: single objects take chunks of
 * their size rounded to AM_MIN_ALIGN and arrays chunks of the element's size
 * rounded to 8, a pool per chunk size shared by both; a block above
 * BP_MAX_PARTITION bytes (or aligned past AM_MIN_ALIGN) is one malloc of the
 * model's engine (bp_big_alloc); the pools are built by the first handle
 * (with its limit and max_chunk) and purged and taken down by the last, where
 * singleton_pool builds them before main and never frees them, and builds
 * each on its first call (a test of a flag each call, which these pools
 * have not). Boost's blocks come from a user allocator of boost_fast_lib.cc
 * that counts them against the shared budget; with the mutex, that budget
 * has a lock of its own, since pools of different sizes grow at once.
 *
 * The fast paths are extern "C" functions in boost_fast_lib.cc, inlined into
 * the C containers by link-time optimisation as boost_lib.h's are; Boost's
 * ordered_malloc(n) and free(p, n), walks of the list or of the run, stay
 * calls, as the model's are. Heaps are handles onto the one set of pools:
 * boost_fast_lib_HEAPS_SHARE_STATE, with fast_pool.h's rules. */
#ifndef AM_BOOST_FAST_LIB_H
#define AM_BOOST_FAST_LIB_H

#include "boost_pool.h"

#ifndef AM_BOOST_FAST_MUTEX
#define AM_BOOST_FAST_MUTEX 0
#endif

#define boost_fast_lib_FREE_REUSES 1
#define boost_fast_lib_RESET_FREES_LIVE 1
#define boost_fast_lib_THREAD_SAFE AM_BOOST_FAST_MUTEX
#define boost_fast_lib_HAS_ARRAY 1
#define boost_fast_lib_ASAN_POISONS 0
#define boost_fast_lib_HEAPS_SHARE_STATE 1
#define boost_fast_lib_FAILED_GROWTH_STICKS 1 /* Boost keeps next_size after a failed block */

/* what the pools share: the engine's big blocks and budget, and who holds them */
typedef struct boost_fast_lib_shared {
    bp_set big;     /* the model's engine, for its big blocks and its budget only */
    size_t handles;
    int refused;    /* a block was refused for the limit and no memory went back since */
    am_mutex *lock; /* AM_BOOST_FAST_MUTEX only: the budget's and the big blocks' */
} boost_fast_lib_shared;

extern boost_fast_lib_shared boost_fast_lib_singletons;

typedef struct boost_fast_lib_heap {
    am_counters counters;
} boost_fast_lib_heap;

#if AM_BOOST_FAST_MUTEX
#define BOOST_FAST_LIB_LOCK() am_mutex_lock(boost_fast_lib_singletons.lock)
#define BOOST_FAST_LIB_UNLOCK() am_mutex_unlock(boost_fast_lib_singletons.lock)
#else
#define BOOST_FAST_LIB_LOCK() ((void)0)
#define BOOST_FAST_LIB_UNLOCK() ((void)0)
#endif

/* boost_fast_lib.cc */
void boost_fast_lib_pools_build(const am_options *o);
void boost_fast_lib_pools_take_down(void);
void boost_fast_lib_purge(void);
void *boost_fast_lib_alloc(boost_fast_lib_heap *h, size_t n);
void boost_fast_lib_free(boost_fast_lib_heap *h, void *p, size_t n);
void *boost_fast_lib_alloc_array(boost_fast_lib_heap *h, size_t count, size_t elem);
void boost_fast_lib_free_array(boost_fast_lib_heap *h, void *p, size_t count, size_t elem);

/* boost_fast_lib.c */
boost_fast_lib_heap *boost_fast_lib_create(const am_options *o);
void boost_fast_lib_destroy(boost_fast_lib_heap *h);
void *boost_fast_lib_alloc_aligned(boost_fast_lib_heap *h, size_t n, size_t align);
void boost_fast_lib_free_aligned(boost_fast_lib_heap *h, void *p, size_t n, size_t align);
void *boost_fast_lib_realloc(boost_fast_lib_heap *h, void *p, size_t old_n, size_t new_n);
void *boost_fast_lib_realloc_array(boost_fast_lib_heap *h, void *p, size_t old_count, size_t new_count, size_t elem);
void boost_fast_lib_reset(boost_fast_lib_heap *h);
void boost_fast_lib_usage(const boost_fast_lib_heap *h, size_t *reserved, size_t *reserved_peak);

#endif
