/* tls_size_class.h: OSRM's query heap pool (a thread-local PoolAllocator), with classes in
 * bytes: a request of n bytes takes a block of 2^k bytes, k = ceil(log2(n))
 * (16 bytes at least), from the free list of class k; an empty class carves
 * one block from the heap's current malloc block, and when that is too small
 * a new block of max(2^k, 64 KiB) is taken and the rest of the old one is
 * abandoned. Freed blocks go back on their class's list (LIFO); memory goes
 * back to the system only when the heap's thread ends or the heap is
 * destroyed (or reset). Not for requests above 2^31 bytes (NULL).
 *
 * Threads. A heap belongs to the thread that creates it: the thread's record,
 * reached through a thread-local pointer, lists its heaps, and a thread-exit
 * hook (am_thread_exit_hook) frees their blocks when the thread ends. The rule:
 * a heap is used only by the thread that created it. A free or allocation from
 * another thread would touch the owner's lists without any synchronisation, a
 * data race; that was OSRM's bug when TBB copied a heap "exemplar" into each
 * thread (each thread must create its own heap). Builds with -DAM_DEBUG assert
 * the rule on every call. The one exception: once the creating thread has
 * ended (e.g. been joined), another thread may read the heap's usage and
 * destroy it; its blocks are already gone.
 *
 * OSRM shares one pool among all allocators of a thread; here every heap has
 * its own pool (free lists, blocks, byte limit), because the contract keeps
 * two heaps apart (resetting one must not free the other's blocks). With one
 * heap per thread, as workloads use it, the two are the same.
 *
 * Under ASan a block handed out has exactly its n bytes addressable (the rest
 * of its class block, and a step past the carve pointer, are poisoned when it
 * is carved), and a freed block is poisoned whole; the free-list link in a
 * free block's first word is unpoisoned only around its read or write. */
#ifndef AM_TLS_SIZE_CLASS_H
#define AM_TLS_SIZE_CLASS_H

#include <string.h>
#include "types.h"
#include "sanitize.h"
#if AM_DEBUG
#include <assert.h>
#endif

#define tls_size_class_FREE_REUSES 1
#define tls_size_class_RESET_FREES_LIVE 1
#define tls_size_class_THREAD_SAFE 0 /* one heap per thread is the design */
#define tls_size_class_ASAN_POISONS 1

#define AM_TSC_CLASSES 32
#ifndef AM_TSC_BLOCK_BYTES
#define AM_TSC_BLOCK_BYTES ((size_t)64 << 10)
#endif

typedef struct tls_size_class_block tls_size_class_block;
typedef struct tls_size_class_thread tls_size_class_thread;

typedef struct tls_size_class_heap {
    am_counters counters;
    void *free_list[AM_TSC_CLASSES]; /* class k: blocks of 2^k bytes, linked through their first word */
    char *cur, *end;                 /* the uncarved rest of the newest block */
    char *poisoned;                  /* ASan builds: [cur, poisoned) is poisoned */
    tls_size_class_block *blocks;    /* every malloc block, newest first */
    size_t block_bytes, limit;
    size_t reserved, reserved_peak;
    tls_size_class_thread *owner;    /* the creating thread's record; NULL once it has ended */
    struct tls_size_class_heap *prev, *next; /* the owner's other heaps */
} tls_size_class_heap;

tls_size_class_heap *tls_size_class_create(const am_options *o);
void tls_size_class_destroy(tls_size_class_heap *h);
AM_NOINLINE void *tls_size_class_alloc_slow(tls_size_class_heap *h, unsigned k, size_t n);
void *tls_size_class_alloc_aligned(tls_size_class_heap *h, size_t n, size_t align);
void tls_size_class_free_aligned(tls_size_class_heap *h, void *p, size_t n, size_t align);
void tls_size_class_reset(tls_size_class_heap *h);
void tls_size_class_usage(const tls_size_class_heap *h, size_t *reserved, size_t *reserved_peak);

/* 1 when the calling thread is the one that created h (what AM_DEBUG asserts). */
int tls_size_class_owned(const tls_size_class_heap *h);

#if AM_DEBUG
#define AM_TSC_CHECK_OWNER(h) assert(tls_size_class_owned(h))
#else
#define AM_TSC_CHECK_OWNER(h) ((void)0)
#endif

/* The class of an n-byte request, n >= 1: ceil(log2(n)), at least log2(AM_MIN_ALIGN). */
AM_INLINE unsigned tls_size_class_class(size_t n) {
    return am_bit_width((n - 1) | (AM_MIN_ALIGN - 1));
}

AM_INLINE void *tls_size_class_alloc(tls_size_class_heap *h, size_t n) {
    unsigned k = tls_size_class_class(n);
    AM_TSC_CHECK_OWNER(h);
    if (AM_LIKELY(k < AM_TSC_CLASSES)) {
        void *b = h->free_list[k];
        if (AM_LIKELY(b != NULL)) {
            am_unpoison(b, sizeof(void *));
            h->free_list[k] = *(void **)b;
            am_poison(b, sizeof(void *)); /* so that a block of n < 8 bytes gets exactly n */
            am_unpoison(b, n);
            return b;
        }
    }
    return tls_size_class_alloc_slow(h, k, n);
}

AM_INLINE void tls_size_class_free(tls_size_class_heap *h, void *p, size_t n) {
    if (AM_UNLIKELY(p == NULL)) return;
    unsigned k = tls_size_class_class(n);
    AM_TSC_CHECK_OWNER(h);
    am_unpoison(p, sizeof(void *));
    *(void **)p = h->free_list[k];
    h->free_list[k] = p;
    am_poison(p, (size_t)1 << k);
}

/* Within its class a block already has the room; across classes it moves. */
AM_INLINE void *tls_size_class_realloc(tls_size_class_heap *h, void *p, size_t old_n, size_t new_n) {
    if (p == NULL) return tls_size_class_alloc(h, new_n);
    if (tls_size_class_class(old_n) == tls_size_class_class(new_n)) {
        am_poison(p, (size_t)1 << tls_size_class_class(old_n));
        am_unpoison(p, new_n);
        return p;
    }
    void *q = tls_size_class_alloc(h, new_n);
    if (q == NULL) return NULL;
    memcpy(q, p, old_n < new_n ? old_n : new_n);
    tls_size_class_free(h, p, old_n);
    return q;
}

#endif
