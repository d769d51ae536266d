/* pool.h: boost::pool_allocator as a strategy. Every allocation is
 * ordered_malloc(n) and every free ordered_free(p, n) on the pool of the
 * element's chunk size, so frees walk the free list to keep it sorted and
 * arrays search it for n contiguous chunks: O(free list) per call, by design.
 *
 * Deviations from Boost: the pools belong to the heap, not to process-wide
 * singletons, and the heap's destroy/reset purge them (Boost never frees
 * singleton_pool memory); single objects are rounded to AM_MIN_ALIGN chunks
 * (Boost uses sizeof(T)); chunks above BP_MAX_PARTITION bytes (1024), and
 * alignments above AM_MIN_ALIGN, are one malloc each, counted in the reserved
 * bytes and returned by reset; am_options.max_chunk caps a block's bytes (Boost's
 * max_size, in bytes rather than chunks); am_options.limit counts the blocks and
 * the big mallocs, not the heap's own ~7 KB of pool descriptors (see bp_budget). */
#ifndef AM_POOL_H
#define AM_POOL_H

#include "boost_pool.h"

#define pool_FREE_REUSES 1
#define pool_RESET_FREES_LIVE 1
#define pool_THREAD_SAFE 0
#define pool_HAS_ARRAY 1
#define pool_ASAN_POISONS 1
/* a free walks the free list to its place (ordered_free): O(free chunks) */
#define pool_FREE_WALKS 1

typedef struct pool_heap {
    am_counters counters;
    bp_set set;
} pool_heap;

pool_heap *pool_create(const am_options *o);
void pool_destroy(pool_heap *h);
AM_NOINLINE void *pool_alloc_slow(pool_heap *h, size_t n);
AM_NOINLINE void pool_free_slow(pool_heap *h, void *p);
void *pool_alloc_aligned(pool_heap *h, size_t n, size_t align);
void pool_free_aligned(pool_heap *h, void *p, size_t n, size_t align);
void *pool_realloc(pool_heap *h, void *p, size_t old_n, size_t new_n);
void *pool_alloc_array(pool_heap *h, size_t count, size_t elem);
void pool_free_array(pool_heap *h, void *p, size_t count, size_t elem);
void *pool_realloc_array(pool_heap *h, void *p, size_t old_count, size_t new_count, size_t elem);
void pool_reset(pool_heap *h);
void pool_usage(const pool_heap *h, size_t *reserved, size_t *reserved_peak);

/* ordered_malloc(1), a call into the engine as Boost's is: g++ 12 and
 * clang++ 14 both leave pool::ordered_malloc(n) out of line in a
 * std::list<int, pool_allocator<int>>, so a single object costs a walk's
 * call even though it takes the head of the list. A request above
 * BP_MAX_PARTITION takes the slow path. */
AM_INLINE void *pool_alloc(pool_heap *h, size_t n) {
    size_t part = BP_OBJECT_PARTITION(n); /* wraps near SIZE_MAX: test n */
    if (AM_UNLIKELY(n > BP_MAX_PARTITION)) return pool_alloc_slow(h, n);
    return bp_handout(bp_ordered_malloc(bp_set_pool(&h->set, part), 1), n);
}

/* ordered_free: a walk of the free list, out of line in the engine */
AM_INLINE void pool_free(pool_heap *h, void *p, size_t n) {
    size_t part = BP_OBJECT_PARTITION(n);
    if (AM_UNLIKELY(p == NULL)) return;
    if (AM_UNLIKELY(n > BP_MAX_PARTITION)) pool_free_slow(h, p);
    else bp_ordered_free_n(bp_set_pool(&h->set, part), p, 1);
}

#endif
