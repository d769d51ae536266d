/* ideal.h: the lower bound for one thread: the least work an allocator can do
 * for a container and still hand back what it is given. Blocks are bumped
 * through one buffer, reserved up front and touched by the warm-up; the last
 * block bumped grows in place (a vector's). A freed block of up to
 * AM_IDEAL_SMALL bytes goes on a LIFO list of its exact size (16-byte steps)
 * and is the next one handed out at that size, hot in the cache; a larger one
 * gives its bytes back when it is the last, else waits for an exact-size
 * request. The cell resets the heap after every repetition
 * (ideal_RESET_EACH_REPETITION), so each repetition starts from an empty,
 * rewound buffer, as the rows whose free reuses nothing do.
 *
 * Free is a real push: a compiler cannot delete a container's teardown walk
 * for this row, as it could when free did nothing. Not thread-safe, and no
 * bound for threaded cells (one heap per thread, no sharing). */
#ifndef AM_IDEAL_H
#define AM_IDEAL_H

#include <string.h>
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

/* blocks of up to AM_IDEAL_SMALL bytes (container nodes, the alloc_* blocks,
 * contention's 345 bytes): a list per 16-byte step, inline */
#define AM_IDEAL_SMALL ((size_t)512)
#define AM_IDEAL_CLASSES (AM_IDEAL_SMALL / AM_MIN_ALIGN)
/* larger blocks: a list per power of two, searched for the exact size */
#define AM_IDEAL_LARGE_LISTS 64

typedef struct ideal_heap {
    am_counters counters;
    am_bump bump;
    void *small[AM_IDEAL_CLASSES];          /* class k: blocks of (k + 1) * 16 bytes, linked through their first word */
    /* bit k: list k may be non-empty. Set where a block of class k is bumped
     * or grows into it (a list gets blocks only of classes handed out so),
     * not on free: reset clears only these lists, and the alloc/free pair of
     * a reused block pays nothing for it */
    uint64_t small_used;
    struct ideal_large *large[AM_IDEAL_LARGE_LISTS]; /* by bit width of the rounded size; each block holds its size */
    int large_used;                         /* some large list may be non-empty: search them */
    char *base;
    size_t size;
    size_t high; /* highest offset reached: the part of the buffer in use */
} ideal_heap;

ideal_heap *ideal_create(const am_options *o);
void ideal_destroy(ideal_heap *h);
AM_NOINLINE void *ideal_alloc_slow(ideal_heap *h, size_t n);
AM_NOINLINE void ideal_free_slow(ideal_heap *h, void *p, size_t n);
AM_NOINLINE void *ideal_realloc_slow(ideal_heap *h, void *p, size_t old_n, size_t new_n);
void *ideal_alloc_aligned(ideal_heap *h, size_t n, size_t align);
void ideal_free_aligned(ideal_heap *h, void *p, size_t n, size_t align);
void ideal_usage(const ideal_heap *h, size_t *reserved, size_t *reserved_peak);

/* Before the bump pointer moves back (a rollback, a shrink, a reset): the
 * most of the buffer ever in use, for ideal_usage. */
AM_INLINE void ideal_note_high(ideal_heap *h) {
    size_t used = (size_t)(h->bump.cur - h->base);
    if (used > h->high) h->high = used;
}

/* the class of an n-byte request, n >= 1; AM_IDEAL_CLASSES or more: large */
AM_INLINE size_t ideal_class(size_t n) { return (n - 1) / AM_MIN_ALIGN; }

AM_INLINE void *ideal_alloc(ideal_heap *h, size_t n) {
    size_t k = ideal_class(n);
    if (AM_UNLIKELY(k >= AM_IDEAL_CLASSES)) {
        if (AM_UNLIKELY(h->large_used)) return ideal_alloc_slow(h, n);
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

AM_INLINE void ideal_free(ideal_heap *h, void *p, size_t n) {
    if (AM_UNLIKELY(p == NULL)) return;
    size_t k = ideal_class(n);
    if (AM_UNLIKELY(k >= AM_IDEAL_CLASSES)) {
        /* the last block bumped gives its bytes back; others are kept */
        if (AM_UNLIKELY(!am_bump_is_last(&h->bump, p, n))) { ideal_free_slow(h, p, n); return; }
        ideal_note_high(h);
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
AM_INLINE void *ideal_realloc(ideal_heap *h, void *p, size_t old_n, size_t new_n) {
    if (p == NULL) return ideal_alloc(h, new_n);
    if (new_n >= old_n) {
        void *q = am_bump_resize(&h->bump, p, old_n, new_n);
        size_t k = ideal_class(new_n);
        if (k < AM_IDEAL_CLASSES) h->small_used |= (uint64_t)1 << k;
        if (AM_LIKELY(q != NULL)) return q;
    }
    return ideal_realloc_slow(h, p, old_n, new_n);
}

/* Every block released at once, inline: the cell does it after every
 * repetition, and a repetition may last only nanoseconds. */
AM_INLINE void ideal_reset(ideal_heap *h) {
    ideal_note_high(h);
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
