/* ideal.h: the lower bound for one thread: the least work an allocator can do
 * for a container and still hand back what it is given. Blocks are bumped
 * through one buffer, reserved up front and touched by the warm-up. A freed
 * block goes on a LIFO list of its exact size (16-byte steps) and is the next
 * one handed out at that size, hot in the cache; blocks above AM_IDEAL_SMALL
 * bytes also grow in place while they are the last one bumped. The cell resets
 * the heap after every repetition (ideal_RESET_EACH_REPETITION), so each
 * repetition starts from an empty, rewound buffer, as the rows whose free
 * reuses nothing do.
 *
 * Free is a real push: a compiler cannot delete a container's teardown walk
 * for this row, as it could when free did nothing. Not thread-safe, and no
 * bound for threaded cells (one heap per thread, no sharing). */
#ifndef AM_IDEAL_H
#define AM_IDEAL_H

#include "types.h"
#include "sanitize.h"
#include "bump.h"

#define ideal_FREE_REUSES 1
#define ideal_RESET_FREES_LIVE 1
#define ideal_THREAD_SAFE 0
#define ideal_ASAN_POISONS 1
#define ideal_RESET_EACH_REPETITION 1

#ifndef AM_IDEAL_DEFAULT_BYTES
#define AM_IDEAL_DEFAULT_BYTES ((size_t)1 << 30) /* address space; pages come as touched */
#endif

/* blocks of up to AM_IDEAL_SMALL bytes (container nodes, the alloc_* blocks):
 * a list per 16-byte step, inline; few enough that reset clears them all in
 * a few stores, so that free keeps no record of which lists it touched */
#define AM_IDEAL_SMALL ((size_t)256)
#define AM_IDEAL_CLASSES (AM_IDEAL_SMALL / AM_MIN_ALIGN)
/* larger blocks: a list per power of two, searched for the exact size */
#define AM_IDEAL_LARGE_LISTS 64

typedef struct ideal_heap {
    am_counters counters;
    am_bump bump;
    void *small[AM_IDEAL_CLASSES];          /* class k: blocks of (k + 1) * 16 bytes, linked through their first word */
    struct ideal_large *large[AM_IDEAL_LARGE_LISTS]; /* by bit width of the rounded size; each block holds its size */
    int large_used;                         /* some large list may be non-empty: search them */
    char *base;
    size_t size;
    size_t high; /* highest offset reached: the part of the buffer in use */
} ideal_heap;

ideal_heap *ideal_create(const am_options *o);
void ideal_destroy(ideal_heap *h);
AM_NOINLINE void *ideal_alloc_large(ideal_heap *h, size_t n);
AM_NOINLINE void ideal_free_large(ideal_heap *h, void *p, size_t n);
void *ideal_alloc_aligned(ideal_heap *h, size_t n, size_t align);
void ideal_free_aligned(ideal_heap *h, void *p, size_t n, size_t align);
void *ideal_realloc(ideal_heap *h, void *p, size_t old_n, size_t new_n);
void ideal_reset(ideal_heap *h);
void ideal_usage(const ideal_heap *h, size_t *reserved, size_t *reserved_peak);

/* the class of an n-byte request, n >= 1; AM_IDEAL_CLASSES or more: large */
AM_INLINE size_t ideal_class(size_t n) { return (n - 1) / AM_MIN_ALIGN; }

AM_INLINE void *ideal_alloc(ideal_heap *h, size_t n) {
    size_t k = ideal_class(n);
    if (AM_UNLIKELY(k >= AM_IDEAL_CLASSES)) {
        if (AM_UNLIKELY(h->large_used)) return ideal_alloc_large(h, n);
        return am_bump_alloc(&h->bump, n); /* a vector's block, most often */
    }
    void *b = h->small[k];
    if (b != NULL) {
        am_unpoison(b, sizeof(void *));
        h->small[k] = *(void **)b;
        am_poison(b, sizeof(void *)); /* so that a block of n < 8 bytes gets exactly n */
        am_unpoison(b, n);
        return b;
    }
    return am_bump_alloc(&h->bump, n);
}

AM_INLINE void ideal_free(ideal_heap *h, void *p, size_t n) {
    if (AM_UNLIKELY(p == NULL)) return;
    size_t k = ideal_class(n);
    if (AM_UNLIKELY(k >= AM_IDEAL_CLASSES)) { ideal_free_large(h, p, n); return; }
    am_unpoison(p, sizeof(void *));
    *(void **)p = h->small[k];
    h->small[k] = p;
    am_poison(p, (k + 1) * AM_MIN_ALIGN);
}

#endif
