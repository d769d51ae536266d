/* fast_pool.h: boost::fast_pool_allocator as a strategy. Single objects are an
 * unordered pop and push on a process-wide pool per chunk size (O(1)); arrays
 * of n > 1 are ordered_malloc(n), a walk of the free list for n chunks in a
 * row, but frees stay unordered: each freed array goes back as a run at the
 * front, split again by the next smaller requests, so the list fills with short
 * runs that every ordered_malloc(n) walks past, and a new block (twice the
 * last) is taken only when no run is long enough. The list never shrinks: the
 * cost of growing a vector rises with the pool's age (thrash_pool_sort at 910
 * leaves about 3.4 more runs a repetition). That is the pathology the 2009
 * Boost monotonic comparison measured (fast_pool 10x-118x slower sorting
 * growing vectors, in one process that had run every smaller size first). A
 * fresh cell process measures a young pool; `am-cell --age N` measures the
 * pool a program has after N repetitions (docs/measurements.md). Kept
 * on purpose, with its cost in memory: without a limit or max_chunk a long
 * vector-heavy run reserves tens of MB (19.8 MB after 2,000 repetitions).
 *
 * Heaps are handles onto the one set of pools (Boost's singleton_pool):
 * fast_pool_HEAPS_SHARE_STATE. Without AM_FAST_POOL_MUTEX even separate heaps
 * must not be used from two threads at once (Boost's null_mutex build); reset
 * through any handle purges the pools for all, other handles' live blocks
 * included (Boost's purge_memory). Deviations: the pools are purged when the
 * last handle is destroyed (Boost never frees them); the limit and max_chunk of
 * the first handle bind the shared pools and a later handle's are ignored (the
 * descriptors are not counted, see bp_budget); with the mutex, one lock guards
 * all sizes (Boost has one per singleton). Chunk sizes, the 1024-byte ceiling
 * and over-aligned requests are as in pool.h. */
#ifndef AM_FAST_POOL_H
#define AM_FAST_POOL_H

#include "boost_pool.h"

#ifndef AM_FAST_POOL_MUTEX
#define AM_FAST_POOL_MUTEX 0
#endif

#define fast_pool_FREE_REUSES 1
#define fast_pool_RESET_FREES_LIVE 1
#define fast_pool_THREAD_SAFE AM_FAST_POOL_MUTEX
#define fast_pool_HAS_ARRAY 1
#define fast_pool_ASAN_POISONS 1
/* heaps share state, so heap-per-thread is no escape (see allocator.h) */
#define fast_pool_HEAPS_SHARE_STATE 1

typedef struct fast_pool_shared {
    bp_set set;
    size_t handles;
    am_mutex *lock; /* AM_FAST_POOL_MUTEX only */
} fast_pool_shared;

extern fast_pool_shared fast_pool_singletons;

typedef struct fast_pool_heap {
    am_counters counters;
} fast_pool_heap;

fast_pool_heap *fast_pool_create(const am_options *o);
void fast_pool_destroy(fast_pool_heap *h);
AM_NOINLINE void *fast_pool_alloc_slow(fast_pool_heap *h, size_t n, size_t align);
AM_NOINLINE void fast_pool_free_slow(fast_pool_heap *h, void *p);
void *fast_pool_alloc_aligned(fast_pool_heap *h, size_t n, size_t align);
void fast_pool_free_aligned(fast_pool_heap *h, void *p, size_t n, size_t align);
void *fast_pool_realloc(fast_pool_heap *h, void *p, size_t old_n, size_t new_n);
void *fast_pool_alloc_array(fast_pool_heap *h, size_t count, size_t elem);
void fast_pool_free_array(fast_pool_heap *h, void *p, size_t count, size_t elem);
void *fast_pool_realloc_array(fast_pool_heap *h, void *p, size_t old_count, size_t new_count, size_t elem);
void fast_pool_reset(fast_pool_heap *h);
void fast_pool_usage(const fast_pool_heap *h, size_t *reserved, size_t *reserved_peak);

#if AM_FAST_POOL_MUTEX
#define FAST_POOL_LOCK() am_mutex_lock(fast_pool_singletons.lock)
#define FAST_POOL_UNLOCK() am_mutex_unlock(fast_pool_singletons.lock)
#else
#define FAST_POOL_LOCK() ((void)0)
#define FAST_POOL_UNLOCK() ((void)0)
#endif

AM_INLINE void *fast_pool_alloc(fast_pool_heap *h, size_t n) {
    size_t part = BP_OBJECT_PARTITION(n); /* wraps near SIZE_MAX: test n */
    if (AM_UNLIKELY(n > BP_MAX_PARTITION)) return fast_pool_alloc_slow(h, n, AM_MIN_ALIGN);
    bp_pool *p = bp_set_pool(&fast_pool_singletons.set, part);
    FAST_POOL_LOCK();
    void *c = bp_malloc(p);
    FAST_POOL_UNLOCK();
    return bp_handout(c, n);
}

AM_INLINE void fast_pool_free(fast_pool_heap *h, void *c, size_t n) {
    size_t part = BP_OBJECT_PARTITION(n);
    if (AM_UNLIKELY(c == NULL)) return;
    if (AM_UNLIKELY(n > BP_MAX_PARTITION)) { fast_pool_free_slow(h, c); return; }
    bp_pool *p = bp_set_pool(&fast_pool_singletons.set, part);
    FAST_POOL_LOCK();
    bp_free(p, c);
    FAST_POOL_UNLOCK();
}

#endif
