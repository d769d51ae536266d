/* blocks.h: blocks whose every byte is a function of (key, offset), taken
 * from and given back to a heap, for the contract tests of allocators/
 * allocator.h (test_allocator.c, test_heap_accounting.c; test_tls_size_class.c
 * takes its heaps and statistics): a block that
 * another overlaps, or a copy that lost bytes, is seen. */
#ifndef AM_TEST_BLOCKS_H
#define AM_TEST_BLOCKS_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "workload.h" /* am_rand */

/* ---- block patterns: every byte written is a function of (key, offset), so
 * a block that another block overlaps, or a copy that lost bytes, is seen ---- */

AM_INLINE uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

AM_INLINE uint64_t key_of(const void *p, size_t n) {
    return mix64((uint64_t)(uintptr_t)p ^ ((uint64_t)n << 40) ^ 0x5bd1e995u);
}

#define STEP 0x9E3779B97F4A7C15ull

AM_INLINE void fill(void *p, size_t n, uint64_t key) {
    unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = key + i * STEP;
        memcpy(b + i, &w, 8);
    }
    if (i < n) {
        uint64_t w = key + i * STEP;
        memcpy(b + i, &w, n - i);
    }
}

/* the first n bytes still hold fill(p, >= n, key) */
AM_INLINE int intact(const void *p, size_t n, uint64_t key) {
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = key + i * STEP;
        if (memcmp(b + i, &w, 8) != 0) return 0;
    }
    if (i < n) {
        uint64_t w = key + i * STEP;
        if (memcmp(b + i, &w, n - i) != 0) return 0;
    }
    return 1;
}

AM_INLINE int aligned_to(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

/* What an n-byte block must be aligned to: AM_MIN_ALIGN, or less for blocks too
 * small to hold an object that needs it (the C23 rule for malloc; jemalloc,
 * tcmalloc and mimalloc hand out 8-byte-aligned blocks for n <= 8). */
AM_INLINE size_t min_align_of(size_t n) {
    size_t a = AM_MIN_ALIGN;
    while (a > n) a /= 2;
    return a;
}

AM_INLINE am_heap *new_heap(size_t limit) {
    am_options o;
    am_options_default(&o);
    o.limit = limit;
    return am_create(&o);
}

AM_INLINE am_stats stats_of(am_heap *h) {
    am_stats s;
    am_get_stats(h, &s);
    return s;
}

typedef struct block {
    unsigned char *p;
    size_t n;
    uint64_t key;
} block;

/* Allocates and fills one block; 0 when the heap said NULL. */
AM_INLINE int take(am_heap *h, block *b, size_t n) {
    b->p = am_alloc(h, n);
    if (!b->p) return 0;
    b->n = n;
    b->key = key_of(b->p, n);
    fill(b->p, n, b->key);
    return 1;
}

/* Checks and frees one block; 0 when its contents had changed. */
AM_INLINE int give(am_heap *h, block *b) {
    int ok = intact(b->p, b->n, b->key);
    am_free(h, b->p, b->n);
    b->p = NULL;
    return ok;
}

/* Gives every block back so that the heap is empty: by free, then reset, so
 * the same code serves strategies whose reset does or does not free live blocks. */
AM_INLINE int give_all(am_heap *h, block *b, size_t count) {
    int ok = 1;
    for (size_t i = 0; i < count; i++)
        if (b[i].p) ok &= give(h, &b[i]);
    am_reset(h);
    return ok;
}

/* ---- a heap filled and reset ---- */

AM_INLINE size_t fill_heap(am_heap *h, block *b, size_t count, uint64_t seed, size_t max_size) {
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        size_t n = 1 + (size_t)am_rand_below(&seed, max_size);
        if (!take(h, &b[i], n)) return i;
        bytes += n;
    }
    (void)bytes;
    return count;
}

/* reset, freeing first where the strategy's reset leaves live blocks alone */
AM_INLINE int reset_heap(am_heap *h, block *b, size_t count) {
    int ok = 1;
    if (!AM_RESET_FREES_LIVE) return give_all(h, b, count);
    for (size_t i = 0; i < count; i++) {
        if (b[i].p) ok &= intact(b[i].p, b[i].n, b[i].key);
        b[i].p = NULL;
    }
    am_reset(h);
    return ok;
}


#endif
