/* concurrent_pool.h: bdlma::ConcurrentPool as a strategy. Fixed-size blocks on a
 * lock-free free list; a mutex is taken only to grow the chunk list (chunks of
 * 1, 2, 4, ... blocks up to a cap, or constant), and reset frees every chunk.
 * Built with -DAM_CP_LOCKED=1 it is the `locked_pool` row: the same pool, but
 * every operation runs under the one mutex (what a shared pool costs without
 * the lock-free list).
 *
 * The block size is am_options.block_size, or else the first request of at
 * most CP_AUTO_MAX bytes, rounded up to AM_MIN_ALIGN. Requests of up to the
 * block size take a whole block; larger or over-aligned ones fall back to one
 * malloc each (with a header, on a list, under the mutex; counted in
 * `fallbacks`), so the pool meets the whole contract but is fast only for its
 * one size, as a ConcurrentPool is.
 *
 * ABA: the head is one 64-bit word, a 32-bit generation above a 32-bit block
 * index (chunk number << slot bits | slot), bumped by every push and pop. The
 * link lives in a 16-byte header in front of each block, outside the caller's
 * bytes (BDE keeps a Link there too), so a stale pop reads an atomic word, never
 * the caller's data. Under ASan the headers stay poisoned (see cp_next).
 * C11 <stdatomic.h>: MSVC needs VS 2022 17.5+ with /experimental:c11atomics. */
#ifndef AM_CONCURRENT_POOL_H
#define AM_CONCURRENT_POOL_H

#include <stdatomic.h>
#include "sanitize.h"
#include "types.h"

#ifndef AM_CP_LOCKED
#define AM_CP_LOCKED 0
#endif

#define concurrent_pool_FREE_REUSES 1
#define concurrent_pool_RESET_FREES_LIVE 1
#define concurrent_pool_THREAD_SAFE 1
#define concurrent_pool_ASAN_POISONS 1
#define concurrent_pool_ONE_SIZE 1

#define CP_AUTO_MAX 4096          /* larger first requests do not choose the block size */
#define CP_DEFAULT_CAP_BLOCKS 32 /* growth stops at this many blocks a chunk (BDE's default) */
#ifndef AM_CP_CONSTANT
#define AM_CP_CONSTANT 0 /* 1: every chunk has the cap's blocks (BSLS_CONSTANT) */
#endif
#define CP_NIL 0xFFFFFFFFu
#define CP_HDR AM_ALIGN_UP(sizeof(cp_link), AM_MIN_ALIGN)

/* In front of every pool block; never written by the caller. */
typedef struct cp_link {
    _Atomic uint32_t next; /* index of the next free block, CP_NIL at the end */
    uint32_t self;         /* this block's index, set once when its chunk is made */
} cp_link;

/* Chunk bases by chunk number. Grown by copying under the mutex; old tables are
 * kept until reset, so a reader holding one never sees it freed. */
typedef struct cp_chunk {
    char *base;
    size_t blocks;
} cp_chunk;

typedef struct cp_table {
    struct cp_table *older;
    size_t cap;
    cp_chunk chunk[1]; /* cap entries */
} cp_table;

typedef struct cp_big cp_big;

typedef struct concurrent_pool_heap {
    am_counters counters;
    _Atomic uint64_t head;         /* generation << 32 | index of the first free block */
    _Atomic size_t block_size;     /* 0 until the first pool-sized request */
    _Atomic(cp_table *) table;
    size_t stride;                 /* header + block, AM_MIN_ALIGN multiple */
    unsigned slot_bits;            /* index = chunk << slot_bits | slot */
    uint32_t chunks;               /* chunks made since the last reset */
    size_t next_blocks, cap_blocks;/* growth: next chunk's blocks, and the cap */
    size_t max_chunk;              /* am_options.max_chunk: the cap in bytes (0: default) */
    am_mutex *lock;
    /* guarded by lock */
    cp_big *bigs;
    size_t limit, reserved, reserved_peak;
    uint64_t fallbacks;            /* requests served by malloc, not the pool */
} concurrent_pool_heap;

concurrent_pool_heap *concurrent_pool_create(const am_options *o);
void concurrent_pool_destroy(concurrent_pool_heap *h);
AM_NOINLINE void *concurrent_pool_alloc_slow(concurrent_pool_heap *h, size_t n);
AM_NOINLINE void concurrent_pool_free_slow(concurrent_pool_heap *h, void *p);
void *concurrent_pool_alloc_aligned(concurrent_pool_heap *h, size_t n, size_t align);
void concurrent_pool_free_aligned(concurrent_pool_heap *h, void *p, size_t n, size_t align);
void *concurrent_pool_realloc(concurrent_pool_heap *h, void *p, size_t old_n, size_t new_n);
void concurrent_pool_reset(concurrent_pool_heap *h);
void concurrent_pool_usage(const concurrent_pool_heap *h, size_t *reserved, size_t *reserved_peak);
/* for tests: free blocks on the list now (not safe while others pop or push) */
size_t cp_free_count(concurrent_pool_heap *h);

/* Under ASan every header stays poisoned for good and a block's own bytes are
 * poisoned while it is free (from the carve on), so an overflow into the next
 * block's header, a use after free and a double free are all seen. The link
 * is then read and written only here, uninstrumented: a pop may read the link
 * of a block that another thread has just popped, and unpoisoning around that
 * read would race with the other thread's accesses. Without ASan these are the
 * plain atomic accesses. */
#if AM_ASAN
#define CP_LINK_ACCESS AM_INLINE AM_NO_SANITIZE_ADDRESS
#else
#define CP_LINK_ACCESS AM_INLINE
#endif
CP_LINK_ACCESS uint32_t cp_next(cp_link *l) { return atomic_load_explicit(&l->next, memory_order_relaxed); }
CP_LINK_ACCESS void cp_set_next(cp_link *l, uint32_t next) {
    atomic_store_explicit(&l->next, next, memory_order_relaxed);
}
CP_LINK_ACCESS uint32_t cp_self(const cp_link *l) { return l->self; }
CP_LINK_ACCESS void cp_link_init(cp_link *l, uint32_t self, uint32_t next) {
    l->self = self;
    atomic_init(&l->next, next);
}

AM_INLINE cp_link *cp_link_at(concurrent_pool_heap *h, uint32_t index) {
    cp_table *t = atomic_load_explicit(&h->table, memory_order_acquire);
    uint32_t mask = ((uint32_t)1 << h->slot_bits) - 1;
    return (cp_link *)(t->chunk[index >> h->slot_bits].base + (size_t)(index & mask) * h->stride);
}

AM_INLINE uint64_t cp_head_word(uint64_t old, uint32_t index) {
    return ((old >> 32) + 1) << 32 | index;
}

#if AM_CP_LOCKED
/* locked_pool: plain list operations, one mutex around each */
AM_FORCE_INLINE void *cp_pop(concurrent_pool_heap *h) {
    am_mutex_lock(h->lock);
    uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
    uint32_t index = (uint32_t)head;
    void *p = NULL;
    if (index != CP_NIL) {
        cp_link *l = cp_link_at(h, index);
        atomic_store_explicit(&h->head, cp_head_word(head, cp_next(l)), memory_order_relaxed);
        p = (char *)l + CP_HDR;
    }
    am_mutex_unlock(h->lock);
    return p;
}

AM_FORCE_INLINE void cp_push(concurrent_pool_heap *h, cp_link *l) {
    am_mutex_lock(h->lock);
    uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
    cp_set_next(l, (uint32_t)head);
    atomic_store_explicit(&h->head, cp_head_word(head, cp_self(l)), memory_order_relaxed);
    am_mutex_unlock(h->lock);
}
#else
AM_FORCE_INLINE void *cp_pop(concurrent_pool_heap *h) {
    uint64_t head = atomic_load_explicit(&h->head, memory_order_acquire);
    for (;;) {
        uint32_t index = (uint32_t)head;
        if (index == CP_NIL) return NULL;
        cp_link *l = cp_link_at(h, index);
        /* may be stale if another thread took this block meanwhile: then the
         * generation differs and the exchange fails */
        uint32_t next = cp_next(l);
        if (atomic_compare_exchange_weak_explicit(&h->head, &head, cp_head_word(head, next),
                                                  memory_order_acquire, memory_order_acquire))
            return (char *)l + CP_HDR;
    }
}

AM_FORCE_INLINE void cp_push(concurrent_pool_heap *h, cp_link *l) {
    uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
    do {
        cp_set_next(l, (uint32_t)head);
    } while (!atomic_compare_exchange_weak_explicit(&h->head, &head, cp_head_word(head, cp_self(l)),
                                                    memory_order_release, memory_order_relaxed));
}
#endif

AM_FORCE_INLINE void *concurrent_pool_alloc(concurrent_pool_heap *h, size_t n) {
    if (AM_UNLIKELY(n > atomic_load_explicit(&h->block_size, memory_order_relaxed)))
        return concurrent_pool_alloc_slow(h, n);
    void *p = cp_pop(h);
    if (AM_UNLIKELY(p == NULL)) return concurrent_pool_alloc_slow(h, n);
    am_unpoison(p, n); /* after the pop: the block is this thread's alone now */
    return p;
}

AM_FORCE_INLINE void concurrent_pool_free(concurrent_pool_heap *h, void *p, size_t n) {
    if (AM_UNLIKELY(p == NULL)) return;
    size_t bs = atomic_load_explicit(&h->block_size, memory_order_relaxed);
    if (AM_UNLIKELY(n > bs)) {
        concurrent_pool_free_slow(h, p);
        return;
    }
    am_poison(p, bs); /* before the push: after it another thread may own the block */
    cp_link *l = (cp_link *)((char *)p - CP_HDR);
    cp_push(h, l);
    if (AM_FUZZ_HOOK(push_again, 0, cp_self(l))) cp_push(h, l);
}

#endif
