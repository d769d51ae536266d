/* minimal.h: the least work an allocator can do for a container and still
 * hand back what it is given: a floor row, not a lower bound of time (a
 * malloc that places nodes better can make the same container faster, and
 * did in default runs: docs/measurements.md, "ideal as a lower bound", the
 * row's former name). Blocks are bumped
 * through one buffer, reserved up front and touched by the warm-up; the last
 * block bumped grows in place (a vector's). A freed block of up to
 * AM_MINIMAL_SMALL bytes goes on a LIFO list of its exact size (16-byte steps)
 * and is the next one handed out at that size, hot in the cache; a larger one
 * gives its bytes back when it is the last, else waits for an exact-size
 * request. The cell resets the heap after every repetition
 * (minimal_RESET_EACH_REPETITION), so each repetition starts from an empty,
 * rewound buffer, as the rows whose free reuses nothing do.
 *
 * Free is a real push: a compiler cannot delete a container's teardown walk
 * for this row, as it could when free did nothing. Not thread-safe: for threaded
 * cells, one heap per thread, no sharing. */
#ifndef AM_MINIMAL_H
#define AM_MINIMAL_H

#include <string.h>
#include "types.h"
#include "sanitize.h"
#include "bump.h"

#define minimal_FREE_REUSES 1
#define minimal_RESET_FREES_LIVE 1
#define minimal_THREAD_SAFE 0
#define minimal_ASAN_POISONS 1
#define minimal_RESET_EACH_REPETITION 1

#ifndef AM_MINIMAL_DEFAULT_BYTES
#define AM_MINIMAL_DEFAULT_BYTES ((size_t)1 << 30) /* address space; pages come as touched */
#endif

/* blocks of up to AM_MINIMAL_SMALL bytes (container nodes, the alloc_* blocks,
 * contention's 345 bytes): a list per 16-byte step, inline */
#define AM_MINIMAL_SMALL ((size_t)512)
#define AM_MINIMAL_CLASSES (AM_MINIMAL_SMALL / AM_MIN_ALIGN)
/* larger blocks: a list per power of two, searched for the exact size */
#define AM_MINIMAL_LARGE_LISTS 64

typedef struct minimal_heap {
    am_counters counters;
    am_bump bump;
    void *small[AM_MINIMAL_CLASSES];          /* class k: blocks of (k + 1) * 16 bytes, linked through their first word */
    /* bit k: list k may be non-empty. Set where a block of class k is bumped
     * or grows into it (a list gets blocks only of classes handed out so),
     * not on free: reset clears only these lists, and the alloc/free pair of
     * a reused block pays nothing for it */
    uint64_t small_used;
    struct minimal_large *large[AM_MINIMAL_LARGE_LISTS]; /* by bit width of the rounded size; each block holds its size */
    int large_used;                         /* some large list may be non-empty: search them */
    char *base;
    size_t size;
    size_t high; /* highest offset reached: the part of the buffer in use */
} minimal_heap;

minimal_heap *minimal_create(const am_options *o);
void minimal_destroy(minimal_heap *h);
AM_NOINLINE void *minimal_alloc_slow(minimal_heap *h, size_t n);
AM_NOINLINE void minimal_free_slow(minimal_heap *h, void *p, size_t n);
AM_NOINLINE void *minimal_realloc_slow(minimal_heap *h, void *p, size_t old_n, size_t new_n);
void *minimal_alloc_aligned(minimal_heap *h, size_t n, size_t align);
void minimal_free_aligned(minimal_heap *h, void *p, size_t n, size_t align);
void minimal_usage(const minimal_heap *h, size_t *reserved, size_t *reserved_peak);

/* Before the bump pointer moves back (a rollback, a shrink, a reset): the
 * most of the buffer ever in use, for minimal_usage. */
AM_INLINE void minimal_note_high(minimal_heap *h) {
    size_t used = (size_t)(h->bump.cur - h->base);
    if (used > h->high) h->high = used;
}

/* the class of an n-byte request, n >= 1; AM_MINIMAL_CLASSES or more: large */
AM_INLINE size_t minimal_class(size_t n) { return (n - 1) / AM_MIN_ALIGN; }

AM_INLINE void *minimal_alloc(minimal_heap *h, size_t n) {
    size_t k = minimal_class(n);
    if (AM_UNLIKELY(k >= AM_MINIMAL_CLASSES)) {
        if (AM_UNLIKELY(h->large_used)) return minimal_alloc_slow(h, n);
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
    h->small_used |= (uint64_t)1 << k;
    return am_bump_alloc(&h->bump, n);
}

AM_INLINE void minimal_free(minimal_heap *h, void *p, size_t n) {
    if (AM_UNLIKELY(p == NULL)) return;
    size_t k = minimal_class(n);
    if (AM_UNLIKELY(k >= AM_MINIMAL_CLASSES)) {
        /* the last block bumped gives its bytes back; others are kept */
        if (AM_UNLIKELY(!am_bump_is_last(&h->bump, p, n))) { minimal_free_slow(h, p, n); return; }
        minimal_note_high(h);
        am_bump_free(&h->bump, p, n);
        return;
    }
    am_unpoison(p, sizeof(void *));
    *(void **)p = h->small[k];
    h->small[k] = p;
    am_poison(p, (k + 1) * AM_MIN_ALIGN);
}

/* A new block, or the last one growing in place (a vector's, most often);
 * a shrink, or a block that has to move, out of line. */
AM_INLINE void *minimal_realloc(minimal_heap *h, void *p, size_t old_n, size_t new_n) {
    if (p == NULL) return minimal_alloc(h, new_n);
    if (new_n >= old_n) {
        void *q = am_bump_resize(&h->bump, p, old_n, new_n);
        size_t k = minimal_class(new_n);
        if (k < AM_MINIMAL_CLASSES) h->small_used |= (uint64_t)1 << k;
        if (AM_LIKELY(q != NULL)) return q;
    }
    return minimal_realloc_slow(h, p, old_n, new_n);
}

/* Every block released at once, inline: the cell does it after every
 * repetition, and a repetition may last only nanoseconds. */
AM_INLINE void minimal_reset(minimal_heap *h) {
    minimal_note_high(h);
    am_poison(h->base, (size_t)(h->bump.cur - h->base));
    h->bump.cur = h->base;
    for (uint64_t bits = h->small_used; bits; bits &= bits - 1)
        h->small[am_bit_width(bits & (0 - bits)) - 1] = NULL; /* the lowest bit's list */
    h->small_used = 0;
    if (AM_UNLIKELY(h->large_used)) {
        memset(h->large, 0, sizeof h->large);
        h->large_used = 0;
    }
}

#endif
