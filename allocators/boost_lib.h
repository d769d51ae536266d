/* boost_lib.h: Boost.Pool itself as a strategy (the boost-pool row), the
 * library the C model `pool` (pool.h) imitates: a boost::pool<> per chunk size,
 * every allocation ordered_malloc(n) and every free ordered_free(p, n), as
 * boost::pool_allocator makes them. A C++ row: boost_lib.cc, compiled as
 * C++17 against the Boost headers (libboost-dev), holds the pools; this header
 * and boost_lib.c are the C side.
 *
 * It keeps the C model's choices where the model deviates from Boost, so that
 * the two differ only in the pool's own code: the pools belong to the heap (no
 * singleton_pool, no mutex), single objects take chunks of their size rounded
 * to AM_MIN_ALIGN and arrays chunks of the element's size rounded to 8, and a
 * block above BP_MAX_PARTITION bytes (or aligned past AM_MIN_ALIGN) is one
 * malloc of the model's engine (bp_big_alloc). Boost's blocks come from a
 * user allocator of boost_lib.cc that counts them against am_options.limit.
 *
 * The fast paths are extern "C" functions in boost_lib.cc, inlined into the C
 * containers by link-time optimisation as pmr.h's are; Boost's walks of the
 * free list (ordered_malloc(n), ordered_free(p, n)) stay calls. Before each
 * pool call they store the heap's budget where the user allocator finds it
 * (one thread-local store: Boost's user allocator has static functions only).
 *
 * Under a limit, Boost asks once for a smaller block when a new one is refused
 * (the model shrinks it to what is left), so up to half a block may remain;
 * once a block is refused, the big blocks are refused too, until memory goes
 * back (a purge), so that a heap out of memory stays out of memory. */
#ifndef AM_BOOST_LIB_H
#define AM_BOOST_LIB_H

#include "boost_pool.h"

#define boost_lib_FREE_REUSES 1
#define boost_lib_RESET_FREES_LIVE 1
#define boost_lib_THREAD_SAFE 0
#define boost_lib_HAS_ARRAY 1
#define boost_lib_ASAN_POISONS 0
/* a free walks the free list to its place (ordered_free): O(free chunks) */
#define boost_lib_FREE_WALKS 1
#define boost_lib_FAILED_GROWTH_STICKS 1 /* Boost keeps next_size after a failed block */

typedef struct boost_lib_heap {
    am_counters counters;
    void *pools;  /* boost_lib.cc's pools, one a chunk size in BP_MIN_PARTITION steps */
    bp_set big;   /* the model's engine, for its big blocks and its budget only */
    int refused;  /* a block was refused for the limit and no memory went back since */
} boost_lib_heap;

/* boost_lib.cc */
void *boost_lib_pools_new(boost_lib_heap *h, const am_options *o);
void boost_lib_pools_delete(boost_lib_heap *h);
void boost_lib_purge(boost_lib_heap *h);
void *boost_lib_alloc(boost_lib_heap *h, size_t n);
void boost_lib_free(boost_lib_heap *h, void *p, size_t n);
void *boost_lib_alloc_array(boost_lib_heap *h, size_t count, size_t elem);
void boost_lib_free_array(boost_lib_heap *h, void *p, size_t count, size_t elem);

/* boost_lib.c */
boost_lib_heap *boost_lib_create(const am_options *o);
void boost_lib_destroy(boost_lib_heap *h);
void *boost_lib_alloc_aligned(boost_lib_heap *h, size_t n, size_t align);
void boost_lib_free_aligned(boost_lib_heap *h, void *p, size_t n, size_t align);
void *boost_lib_realloc(boost_lib_heap *h, void *p, size_t old_n, size_t new_n);
void *boost_lib_realloc_array(boost_lib_heap *h, void *p, size_t old_count, size_t new_count, size_t elem);
void boost_lib_reset(boost_lib_heap *h);
void boost_lib_usage(const boost_lib_heap *h, size_t *reserved, size_t *reserved_peak);

#endif
