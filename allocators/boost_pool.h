/* boost_pool.h: the engine under the pool and fast_pool strategies, Boost.Pool's
 * pool<> in C: blocks of equal chunks taken from malloc, an intrusive free list,
 * unordered malloc/free (O(1)) and ordered malloc(n)/free(n) (O(free list)).
 * It is not a strategy: pool.h and fast_pool.h are, and differ only in which
 * of these calls they make and in who owns the pools.
 *
 * Modelled on boost/pool/pool.hpp and simple_segregated_storage.hpp; where it
 * deviates: a block's bookkeeping is a header, not a trailer; next_size starts
 * clamped to the cap; pools are keyed by chunk size (8-byte steps), so sizes
 * that round to the same chunk share a pool; release_memory() is not provided;
 * under a byte limit a new block is shrunk to what the limit leaves (Boost
 * halves it once when malloc fails), and a failed request leaves next_size as
 * it was (Boost keeps the size it asked for).
 *
 * Under AddressSanitizer every chunk not handed out is poisoned, its free-list
 * link too: the link is unpoisoned only around each read and write. Chunks come
 * back from bp_malloc / bp_ordered_malloc still poisoned; the caller unpoisons
 * the bytes it hands out (bp_handout). */
#ifndef AM_BOOST_POOL_H
#define AM_BOOST_POOL_H

#include <stdlib.h>
#include <string.h>
#include "types.h"
#include "sanitize.h"

#define BP_START_SIZE 32     /* Boost's default next_size, in chunks */
#define BP_MIN_PARTITION 8   /* Boost's min_alloc_size, lcm(sizeof(void *), sizeof(size_t)) on LP64 */
#define BP_MAX_PARTITION 1024 /* larger chunks: straight to malloc, see bp_big_alloc */
#define BP_CLASSES (BP_MAX_PARTITION / BP_MIN_PARTITION + 1)

#define BP_NEXT(chunk) (*(void **)(chunk))

/* Bytes taken from the system for blocks and big requests, shared by the pools
 * of one owner and checked against its limit (0 = none) before each malloc.
 * The owner's descriptors (bp_set, ~7 KB) are not counted: they are the pool
 * objects themselves (static storage or a member in Boost), as no strategy
 * counts its heap struct, and a limit of a few hundred bytes still works. */
typedef struct bp_budget {
    size_t limit, reserved, peak;
} bp_budget;

/* bytes from malloc, counted, the limit checked by the caller; NULL when
 * malloc fails */
AM_FORCE_INLINE void *bp_budget_malloc(bp_budget *b, size_t bytes) {
    void *p = malloc(bytes);
    if (!p) return NULL;
    b->reserved += bytes;
    if (b->reserved > b->peak) b->peak = b->reserved;
    return p;
}

/* bytes from malloc, counted; NULL past the limit or when malloc fails */
AM_INLINE void *bp_budget_take(bp_budget *b, size_t bytes) {
    if (b->limit && bytes > b->limit - b->reserved) return NULL;
    return bp_budget_malloc(b, bytes);
}

AM_INLINE void bp_budget_give(bp_budget *b, void *p, size_t bytes) {
    am_unpoison(p, bytes); /* the range may be handed out by malloc again */
    b->reserved -= bytes;
    free(p);
}

/* The blocks of Boost's own pools (boost_lib.cc, boost_fast_lib.cc: their
 * user allocator), counted as this engine's are, so that the model and the
 * library count alike; each carries its size in front, to be given back when
 * Boost frees it. NULL when malloc fails, or when the limit refuses the block,
 * which also sets *refused; a block given back clears it. Inline: in C++ the
 * compiler sees that nothing here throws. */
#define BP_BUDGET_BLOCK_HDR AM_MIN_ALIGN

AM_INLINE void *bp_budget_block(bp_budget *b, int *refused, size_t bytes) {
    if (bytes > SIZE_MAX - BP_BUDGET_BLOCK_HDR) return NULL;
    size_t total = bytes + BP_BUDGET_BLOCK_HDR;
    if (b->limit && (total > b->limit || b->reserved > b->limit - total)) {
        *refused = 1;
        return NULL;
    }
    char *raw = (char *)bp_budget_malloc(b, total);
    if (!raw) return NULL;
    memcpy(raw, &total, sizeof total);
    return raw + BP_BUDGET_BLOCK_HDR;
}

AM_INLINE void bp_budget_block_free(bp_budget *b, int *refused, void *block) {
    char *raw = (char *)block - BP_BUDGET_BLOCK_HDR;
    size_t total;
    memcpy(&total, raw, sizeof total);
    *refused = 0;
    bp_budget_give(b, raw, total);
}

typedef struct bp_big bp_big;

/* A block: this header, then its chunks, AM_MIN_ALIGN-aligned like malloc's result. */
typedef struct bp_block {
    struct bp_block *next;
    size_t bytes; /* the whole malloc: header and chunks */
} bp_block;
#define BP_BLOCK_HDR AM_ALIGN_UP(sizeof(bp_block), AM_MIN_ALIGN)

typedef struct bp_pool {
    void *first;        /* free list; the link lives in the free chunk */
    bp_block *blocks;
    size_t partition;   /* chunk size in bytes */
    size_t next_size;   /* chunks in the next block; doubles per block */
    size_t start_size;  /* what purge goes back to */
    size_t max_size;    /* cap on next_size in chunks; 0 = none */
    bp_budget *budget;
} bp_pool;

/* One pool per chunk size, the blocks too big for any of them, one budget. */
typedef struct bp_set {
    bp_budget budget;
    bp_big *bigs;
    bp_pool pools[BP_CLASSES];
} bp_set;

void bp_pool_init(bp_pool *p, size_t partition, size_t max_bytes, bp_budget *b);
AM_NOINLINE void *bp_malloc_slow(bp_pool *p);
void *bp_ordered_malloc(bp_pool *p, size_t n);
void bp_free_n(bp_pool *p, void *chunks, size_t n);
/* a walk of the free list, a call wherever it is made (no slow path: its
 * definition is kept out of line in boost_pool.c): Boost's ordered_free stays
 * one in a clang++ 14 std::list<int, pool_allocator<int>>, and the boost-pool
 * row calls it so with either compiler */
void bp_ordered_free_n(bp_pool *p, void *chunks, size_t n);
void bp_purge(bp_pool *p);
size_t bp_free_count(const bp_pool *p); /* for tests: the free list's length */

void bp_set_init(bp_set *s, const am_options *o);
void bp_set_purge(bp_set *s);
/* Above BP_MAX_PARTITION, or aligned past AM_MIN_ALIGN: one malloc each, kept
 * on a list so that purge and destroy can return them. */
void *bp_big_alloc(bp_set *s, size_t n, size_t align);
void bp_big_free(bp_set *s, void *p);

/* Boost's max_size, a pool's cap on next_size in chunks, from the model's cap
 * in bytes (am_options.max_chunk; 0: none), never below one chunk */
AM_INLINE size_t bp_max_size(size_t max_bytes, size_t partition) {
    return max_bytes ? (max_bytes / partition ? max_bytes / partition : 1) : 0;
}

/* Chunk sizes: single objects are aligned to AM_MIN_ALIGN; arrays only to
 * what their element needs, which a multiple of the element size rounded to 8
 * from a 16-aligned block always is (up to 16). */
#define BP_OBJECT_PARTITION(n) AM_ALIGN_UP((n), AM_MIN_ALIGN)
#define BP_ARRAY_PARTITION(elem) AM_ALIGN_UP((elem), BP_MIN_PARTITION)

AM_INLINE bp_pool *bp_set_pool(bp_set *s, size_t partition) {
    return &s->pools[partition / BP_MIN_PARTITION];
}

/* chunks that hold `bytes`: Boost's ceil(n * requested_size / partition_size) */
AM_INLINE size_t bp_chunks_for(size_t bytes, size_t partition) {
    return bytes ? (bytes + partition - 1) / partition : 1;
}

/* A free chunk's link, read and written through its poisoning (plain
 * loads and stores outside ASan builds). */
AM_INLINE void *bp_next(void *chunk) {
    am_unpoison(chunk, sizeof(void *));
    void *next = BP_NEXT(chunk);
    am_poison(chunk, sizeof(void *));
    return next;
}

AM_INLINE void bp_set_next(void *chunk, void *next) {
    am_unpoison(chunk, sizeof(void *));
    BP_NEXT(chunk) = next;
    am_poison(chunk, sizeof(void *));
}

/* Makes the n bytes handed out from a chunk (or run) addressable. */
AM_INLINE void *bp_handout(void *c, size_t n) {
    if (c) am_unpoison(c, n);
    return c;
}

/* std::allocator has no realloc: a container allocates, copies and frees. Copies
 * what fits of p's old_n bytes into q, the new block (NULL when none could be
 * had: p stays as it was); nonzero when p is then to be freed. */
AM_INLINE int bp_moved(void *q, const void *p, size_t old_n, size_t new_n) {
    if (!q || !p) return 0;
    memcpy(q, p, old_n < new_n ? old_n : new_n);
    return 1;
}

/* Boost's pool::malloc(): pop, or a new block when the list is empty. */
AM_INLINE void *bp_malloc(bp_pool *p) {
    void *c = p->first;
    if (AM_UNLIKELY(c == NULL)) return bp_malloc_slow(p);
    p->first = bp_next(c);
    return c;
}

/* Boost's pool::free(): push, wherever the chunk lies. Under ASan the chunk
 * becomes unaddressable, so a second free or a use after free is seen. */
AM_INLINE void bp_free(bp_pool *p, void *c) {
    am_unpoison(c, sizeof(void *));
    BP_NEXT(c) = p->first;
    am_poison(c, p->partition);
    p->first = c;
}

#endif
