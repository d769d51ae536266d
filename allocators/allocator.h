/* allocator.h: the contract every allocmark strategy meets, and the am_* names
 * that containers and workloads call. It is not a vtable: one strategy is chosen
 * at compile time (-DAM_STRATEGY=pool -DAM_STRATEGY_H='"pool.h"'), so each
 * am_alloc / am_free call inlines that strategy's fast path, as a C++ template
 * allocator would. One executable per strategy.
 *
 * A strategy S provides, in allocators/S.h (fast paths static inline) and S.c:
 *
 *   typedef struct S_heap S_heap;          must contain a member `am_counters counters`
 *   S_heap *S_create(const am_options *o); NULL when the options cannot be met
 *   void    S_destroy(S_heap *h);          returns everything it took from the system
 *   void   *S_alloc(S_heap *h, size_t n);  n >= 1; aligned to AM_MIN_ALIGN (for n < AM_MIN_ALIGN,
 *           to the largest power of two <= n suffices, as with malloc); NULL when out of memory
 *   void    S_free(S_heap *h, void *p, size_t n);   n is the size asked for (sized free)
 *   void   *S_alloc_aligned(S_heap *h, size_t n, size_t align); power-of-two align; NULL if it cannot
 *   void    S_free_aligned(S_heap *h, void *p, size_t n, size_t align);
 *   void   *S_realloc(S_heap *h, void *p, size_t old_n, size_t new_n);
 *           keeps min(old_n, new_n) bytes; p == NULL acts as alloc; NULL on failure leaves p intact
 *   void    S_reset(S_heap *h);            every block released at once (see S_RESET_FREES_LIVE)
 *   void    S_usage(const S_heap *h, size_t *reserved, size_t *reserved_peak);
 *           bytes taken from the system now and at most (0 where the strategy cannot know)
 *
 * Slow paths: each inline fast path branches out, for everything it does not
 * handle itself (an empty free list, a new chunk, a request too big for the
 * pool, a byte limit), to one function named after it with _slow appended:
 * S_alloc -> S_alloc_slow, S_free -> S_free_slow, S_realloc -> S_realloc_slow
 * (an engine under several strategies uses its own prefix: bp_malloc ->
 * bp_malloc_slow). It is declared AM_NOINLINE in S.h and defined in S.c.
 *
 * Optionally, for strategies that care about the element type of an array (a
 * Boost pool_allocator<T> serves vector<T> with ordered_malloc(count) from the
 * pool of sizeof(T) chunks), S_HAS_ARRAY 1 and:
 *   void *S_alloc_array(S_heap *h, size_t count, size_t elem);
 *   void  S_free_array(S_heap *h, void *p, size_t count, size_t elem);
 *   void *S_realloc_array(S_heap *h, void *p, size_t old_count, size_t new_count, size_t elem);
 * Elsewhere am_*_array fall back to the byte-sized calls.
 *
 * and these compile-time traits:
 *   S_FREE_REUSES      1 if a freed block can be handed out again before reset
 *   S_RESET_FREES_LIVE 1 if reset also releases blocks not freed (0: system malloc)
 *   S_THREAD_SAFE      1 if one heap may be used by several threads at once
 *   S_ASAN_POISONS     1 if, under AddressSanitizer, bytes not handed out are
 *                      poisoned (optional; 0 when absent)
 *   S_RESET_EACH_REPETITION 1 if the cell resets the heap after every
 *                      repetition even though free reuses (optional; the
 *                      cell always resets rows whose free reuses nothing)
 *   S_ONE_SIZE         1 if a heap serves one block size fast and sends the
 *                      others to malloc (concurrent_pool): a workload of many
 *                      sizes gives it a heap per size class, as its users do
 *                      (optional; 0 when absent)
 *   S_HEAPS_SHARE_STATE 1 if heaps are handles onto one process-wide state
 *                      (Boost's singleton pools): a reset through one purges
 *                      the blocks of all, the first heap's limit binds all, and
 *                      without S_THREAD_SAFE no two heaps may be used from two
 *                      threads at once (optional; 0 when absent)
 *   S_POOLS_GROW_APART 1 if each block size has a pool of its own that takes
 *                      chunks of many blocks from the system as it fills, at
 *                      sizes the strategy does not fit to the limit (std::pmr's
 *                      pool resources): under a byte limit one size may run out
 *                      while a block of another still fits, and the first block
 *                      of a size may take more than a small limit leaves
 *                      (optional; 0 when absent)
 *   S_FAILED_GROWTH_STICKS 1 if, once a request for a new chunk failed, the
 *                      strategy may keep asking for one that large (Boost.Pool's
 *                      next_size, which purge_memory leaves as it is when the
 *                      pool holds no block: the boost-pool row; optional)
 *
 * AddressSanitizer sees only malloc's blocks. A strategy that carves blocks out
 * of its own memory (pools, arenas, size classes) makes its bugs visible to
 * ASan by calling sanitize.h's am_poison/am_unpoison, which cost nothing in
 * other builds: poison memory when it is carved from the system and when a
 * block is freed; unpoison exactly the n bytes asked for when a block is
 * handed out; poison again on reset. A free list kept inside free blocks is
 * unpoisoned around the reads and writes of its link. Such a strategy defines
 * S_ASAN_POISONS 1, which turns on the ASan detection tests for its row.
 *
 * With AM_VIRTUAL=1 (the <row>@virtual rows) the same strategy is reached at
 * run time instead: every allocate, free, resize and reset call goes through a
 * table of function pointers (am_vtable, below), as C++ containers reach a
 * std::pmr::memory_resource. The table's pointer is volatile, so no compiler
 * can see which functions it holds: one indirect call per operation, the cost
 * those rows measure; each function behind it inlines the strategy's fast path.
 *
 * With AM_DEBUG=1 (make DEBUG=1) the am_* calls below reach the strategy through
 * debug.h (AM_BELOW): each block gets a header and a canary and every free is
 * checked. Strategies need nothing for it; they see enlarged sizes, consistently.
 *
 * The per-operation statistics (bytes requested, live, peak, allocation and
 * free counts) are kept here, once for all strategies, and only when AM_STATS is
 * 1: the measured builds compile them out so that they cost nothing. In those
 * builds, once am_counting_start() has run, every call goes through the
 * counting wrapper (counting.h: per-owner counts, block headers). */
#ifndef AM_ALLOCATOR_H
#define AM_ALLOCATOR_H

#include "types.h"
#include "sanitize.h"
#include "counting.h"

#ifndef AM_DEBUG
#define AM_DEBUG 0
#endif

#if defined(AM_STRATEGY) && defined(AM_STRATEGY_H)

#define AM_CAT_(a, b) a##b
#define AM_CAT(a, b) AM_CAT_(a, b)
#define AM_S(f) AM_CAT(AM_STRATEGY, f)
#define AM_STR_(x) #x
#define AM_STR(x) AM_STR_(x)

#include <string.h>
#include AM_STRATEGY_H

typedef AM_S(_heap) am_heap;
#define AM_FREE_REUSES AM_S(_FREE_REUSES)
#define AM_RESET_FREES_LIVE AM_S(_RESET_FREES_LIVE)
#define AM_THREAD_SAFE AM_S(_THREAD_SAFE)
#define AM_ASAN_POISONS AM_S(_ASAN_POISONS)
#if AM_S(_FAILED_GROWTH_STICKS)
#define AM_FAILED_GROWTH_STICKS 1
#else
#define AM_FAILED_GROWTH_STICKS 0
#endif
#if AM_S(_POOLS_GROW_APART)
#define AM_POOLS_GROW_APART 1
#else
#define AM_POOLS_GROW_APART 0
#endif
#if AM_S(_FREE_WALKS)
#define AM_FREE_WALKS 1
#else
#define AM_FREE_WALKS 0
#endif
#if AM_S(_HEAPS_SHARE_STATE)
#define AM_HEAPS_SHARE_STATE 1
#else
#define AM_HEAPS_SHARE_STATE 0
#endif

#ifndef AM_ROW_NAME
#define AM_ROW_NAME AM_STR(AM_STRATEGY)
#endif

/* a heap that threads share has its counters under the statistics lock */
#if AM_STATS && AM_THREAD_SAFE
#define AM_STATS_LOCK() am_stats_lock()
#define AM_STATS_UNLOCK() am_stats_unlock()
#else
#define AM_STATS_LOCK() ((void)0)
#define AM_STATS_UNLOCK() ((void)0)
#endif

AM_INLINE void am_count_alloc(am_heap *h, size_t n) {
#if AM_STATS
    AM_STATS_LOCK();
    am_counters *c = &h->counters;
    c->requested += n;
    c->live += n;
    c->allocs++;
    if (c->live > c->peak) c->peak = c->live;
    AM_STATS_UNLOCK();
#else
    (void)h; (void)n;
#endif
}

AM_INLINE void am_count_free(am_heap *h, size_t n) {
#if AM_STATS
    AM_STATS_LOCK();
    h->counters.live -= n;
    h->counters.frees++;
    AM_STATS_UNLOCK();
#else
    (void)h; (void)n;
#endif
}

/* what the am_* calls and the counting wrapper call: the strategy, or the
 * debug layer in front of it */
#if AM_DEBUG
#include "debug.h"
#define AM_BELOW(f) AM_CAT(am_dbg, f)
#else
#define AM_BELOW(f) AM_S(f)
#endif

#ifndef AM_VIRTUAL
#define AM_VIRTUAL 0
#endif

/* what the am_* calls below reach for an operation (alloc, free, ...): the
 * layer under them directly, or, in the run-time bound build, through the table */
#if AM_VIRTUAL
typedef struct am_vtable {
    void *(*alloc)(am_heap *h, size_t n);
    void (*free)(am_heap *h, void *p, size_t n);
    void *(*alloc_aligned)(am_heap *h, size_t n, size_t align);
    void (*free_aligned)(am_heap *h, void *p, size_t n, size_t align);
    void *(*realloc)(am_heap *h, void *p, size_t old_n, size_t new_n);
#if AM_S(_HAS_ARRAY)
    void *(*alloc_array)(am_heap *h, size_t count, size_t elem);
    void (*free_array)(am_heap *h, void *p, size_t count, size_t elem);
    void *(*realloc_array)(am_heap *h, void *p, size_t old_count, size_t new_count, size_t elem);
#endif
    void (*reset)(am_heap *h);
} am_vtable;
/* defined in allocator.c; volatile: read at every call, never known */
extern const am_vtable *volatile am_bound_vtable;
#define AM_CALL(op) (am_bound_vtable->op)
#define AM_CALL_RESET (am_bound_vtable->reset)
#else
#define AM_CALL(op) AM_BELOW(AM_CAT(_, op))
#define AM_CALL_RESET AM_S(_reset) /* the debug layer keeps no state of its own to reset */
#endif

#if AM_STATS
/* The counting wrapper: each block is AM_COUNT_HDR bytes (or, aligned, the
 * alignment's multiple above that) further on in a larger block of the
 * strategy's. A resize is a new block, a copy and a free. */
#define AM_COUNTED(call) do { if (AM_UNLIKELY(am_counting_active)) { call; } } while (0)

AM_INLINE void *am_counted_alloc(am_heap *h, size_t n) {
    if (n > SIZE_MAX / 2 - AM_COUNT_HDR) return NULL;
    char *b = AM_BELOW(_alloc)(h, n + AM_COUNT_HDR);
    if (!b) return NULL;
    am_counted_track(b + AM_COUNT_HDR, n, h);
    am_count_alloc(h, n);
    return b + AM_COUNT_HDR;
}

AM_INLINE void am_counted_free(am_heap *h, void *p, size_t n) {
    size_t size;
    if (!p || am_counted_untrack(p, n, &size) != 0) return;
    AM_BELOW(_free)(h, (char *)p - AM_COUNT_HDR, size + AM_COUNT_HDR);
    am_count_free(h, size);
}

AM_INLINE void *am_counted_alloc_aligned(am_heap *h, size_t n, size_t align) {
    size_t off = AM_ALIGN_UP(AM_COUNT_HDR, align);
    if (n > SIZE_MAX / 4 || align > SIZE_MAX / 4) return NULL;
    char *b = AM_BELOW(_alloc_aligned)(h, n + off, align);
    if (!b) return NULL;
    am_counted_track(b + off, n, h);
    am_count_alloc(h, n);
    return b + off;
}

AM_INLINE void am_counted_free_aligned(am_heap *h, void *p, size_t n, size_t align) {
    size_t size, off = AM_ALIGN_UP(AM_COUNT_HDR, align);
    if (!p || am_counted_untrack(p, n, &size) != 0) return;
    AM_BELOW(_free_aligned)(h, (char *)p - off, size + off, align);
    am_count_free(h, size);
}

AM_INLINE void *am_counted_realloc(am_heap *h, void *p, size_t old_n, size_t new_n) {
    void *q = am_counted_alloc(h, new_n);
    if (!q || !p) return q;
    memcpy(q, p, old_n < new_n ? old_n : new_n);
    am_counted_free(h, p, old_n);
    return q;
}

/* arrays: whole extra elements in front hold the header, so the element's
 * alignment is kept */
#define AM_COUNT_HDR_ELEMS(elem) ((AM_COUNT_HDR + (elem) - 1) / (elem))

#if AM_S(_HAS_ARRAY)
AM_INLINE void *am_counted_alloc_array(am_heap *h, size_t count, size_t elem) {
    size_t k = AM_COUNT_HDR_ELEMS(elem);
    if (count > SIZE_MAX / 4 / elem) return NULL;
    char *b = AM_BELOW(_alloc_array)(h, count + k, elem);
    if (!b) return NULL;
    am_counted_track(b + k * elem, count * elem, h);
    am_count_alloc(h, count * elem);
    return b + k * elem;
}

AM_INLINE void am_counted_free_array(am_heap *h, void *p, size_t count, size_t elem) {
    size_t size, k = AM_COUNT_HDR_ELEMS(elem);
    if (!p || am_counted_untrack(p, count * elem, &size) != 0) return;
    AM_BELOW(_free_array)(h, (char *)p - k * elem, size / elem + k, elem);
    am_count_free(h, size);
}

AM_INLINE void *am_counted_realloc_array(am_heap *h, void *p, size_t old_count, size_t new_count, size_t elem) {
    void *q = am_counted_alloc_array(h, new_count, elem);
    if (!q || !p) return q;
    memcpy(q, p, (old_count < new_count ? old_count : new_count) * elem);
    am_counted_free_array(h, p, old_count, elem);
    return q;
}
#endif
#else
#define AM_COUNTED(call) ((void)0)
#endif

/* blocks still live when their heap goes are forgotten by the counting wrapper:
 * counted as freed where the strategy releases them */
AM_INLINE void am_destroy(am_heap *h) {
    AM_COUNTED(am_counted_forget_heap(h, AM_RESET_FREES_LIVE));
    AM_S(_destroy)(h);
}

/* Under ASan, giving back a block whose first byte is poisoned is a double
 * free (or a foreign pointer): said here for every strategy that poisons. */
void am_asan_bad_free(void *p, size_t n);
#define AM_ASAN_CHECK_FREE(p, n) \
    do { if (AM_ASAN && (p) && am_is_poisoned(p)) am_asan_bad_free((p), (n)); } while (0)

AM_INLINE am_heap *am_create(const am_options *o) { return AM_BELOW(_create)(o); }

AM_INLINE void *am_alloc(am_heap *h, size_t n) {
    AM_COUNTED(return am_counted_alloc(h, n));
    void *p = AM_CALL(alloc)(h, n);
    if (AM_LIKELY(p != NULL)) am_count_alloc(h, n);
    return p;
}

AM_INLINE void am_free(am_heap *h, void *p, size_t n) {
    AM_ASAN_CHECK_FREE(p, n);
    AM_COUNTED(am_counted_free(h, p, n); return);
    AM_CALL(free)(h, p, n);
    am_count_free(h, n);
}

AM_INLINE void *am_alloc_aligned(am_heap *h, size_t n, size_t align) {
    AM_COUNTED(if (align > AM_MIN_ALIGN) return am_counted_alloc_aligned(h, n, align); return am_counted_alloc(h, n));
    void *p = align <= AM_MIN_ALIGN ? AM_CALL(alloc)(h, n) : AM_CALL(alloc_aligned)(h, n, align);
    if (p) am_count_alloc(h, n);
    return p;
}

AM_INLINE void am_free_aligned(am_heap *h, void *p, size_t n, size_t align) {
    AM_ASAN_CHECK_FREE(p, n);
    AM_COUNTED(if (align > AM_MIN_ALIGN) am_counted_free_aligned(h, p, n, align); else am_counted_free(h, p, n); return);
    if (align <= AM_MIN_ALIGN) AM_CALL(free)(h, p, n);
    else AM_CALL(free_aligned)(h, p, n, align);
    am_count_free(h, n);
}

/* A resize counts as one free of the old block and one allocation of the new,
 * as the allocate-copy-deallocate it replaces would. */
AM_INLINE void *am_realloc(am_heap *h, void *p, size_t old_n, size_t new_n) {
    AM_ASAN_CHECK_FREE(p, old_n);
    AM_COUNTED(return am_counted_realloc(h, p, old_n, new_n));
    void *q = AM_CALL(realloc)(h, p, old_n, new_n);
    if (q) {
        if (p) am_count_free(h, old_n);
        am_count_alloc(h, new_n);
    }
    return q;
}

/* Arrays (vector storage, heap arrays): count elements of elem bytes each. */
#if AM_S(_HAS_ARRAY)
AM_INLINE void *am_alloc_array(am_heap *h, size_t count, size_t elem) {
    AM_COUNTED(return am_counted_alloc_array(h, count, elem));
    void *p = AM_CALL(alloc_array)(h, count, elem);
    if (p) am_count_alloc(h, count * elem);
    return p;
}
AM_INLINE void am_free_array(am_heap *h, void *p, size_t count, size_t elem) {
    AM_ASAN_CHECK_FREE(p, count * elem);
    AM_COUNTED(am_counted_free_array(h, p, count, elem); return);
    AM_CALL(free_array)(h, p, count, elem);
    am_count_free(h, count * elem);
}
AM_INLINE void *am_realloc_array(am_heap *h, void *p, size_t old_count, size_t new_count, size_t elem) {
    AM_ASAN_CHECK_FREE(p, old_count * elem);
    AM_COUNTED(return am_counted_realloc_array(h, p, old_count, new_count, elem));
    void *q = AM_CALL(realloc_array)(h, p, old_count, new_count, elem);
    if (q) {
        if (p) am_count_free(h, old_count * elem);
        am_count_alloc(h, new_count * elem);
    }
    return q;
}
#else
AM_INLINE void *am_alloc_array(am_heap *h, size_t count, size_t elem) {
    if (AM_DEBUG && elem && count > SIZE_MAX / elem) return NULL;
    return am_alloc(h, count * elem);
}
AM_INLINE void am_free_array(am_heap *h, void *p, size_t count, size_t elem) { am_free(h, p, count * elem); }
AM_INLINE void *am_realloc_array(am_heap *h, void *p, size_t old_count, size_t new_count, size_t elem) {
    if (AM_DEBUG && elem && new_count > SIZE_MAX / elem) return NULL;
    return am_realloc(h, p, old_count * elem, new_count * elem);
}
#endif

AM_INLINE void am_reset(am_heap *h) {
    AM_COUNTED(if (AM_RESET_FREES_LIVE) am_counted_forget_heap(h, 1));
    AM_CALL_RESET(h);
#if AM_STATS
    if (AM_RESET_FREES_LIVE) h->counters.live = 0;
#endif
}

/* Statistics of one heap: the counters above (zero unless AM_STATS) and what
 * the strategy reserved from the system. */
AM_INLINE void am_get_stats(const am_heap *h, am_stats *s) {
    AM_STATS_LOCK();
    s->bytes_requested = h->counters.requested;
    s->bytes_live = h->counters.live;
    s->bytes_peak = h->counters.peak;
    s->allocs = h->counters.allocs;
    s->frees = h->counters.frees;
    AM_STATS_UNLOCK();
    AM_S(_usage)(h, &s->bytes_reserved, &s->reserved_peak);
}

#endif /* AM_STRATEGY */
#endif
