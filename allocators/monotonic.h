/* monotonic.h: a bump arena, the monotonic allocator of the 2009 Boost
 * monotonic comparison (C++'s monotonic_buffer_resource). Blocks are cut from chunks taken from malloc, each
 * chunk twice the one before; free gives bytes back only for the last block
 * handed out, and reset rewinds and keeps every chunk, as the comparison's
 * storage::reset() rewound each link of its chain: the next repetition fills
 * the same chunks again, oldest first, before it takes a new one. Not a
 * general allocator: a block freed in the middle is reused only after reset.
 *
 * Built with -DAM_MONOTONIC_LOCAL=1 (the monotonic-local row, the comparison's
 * "local" column, whose storage was on the stack), a heap created without
 * am_options.buffer starts from a buffer of AM_MONOTONIC_LOCAL_BYTES in the
 * creating thread's thread-local storage. One heap per thread at a time uses
 * it (later heaps start from malloc); that heap must be destroyed by its thread
 * before the thread ends, as a stack buffer would. In every build a caller's
 * am_options.buffer is used first and never freed.
 *
 * Reserved bytes count every byte the heap cuts blocks from, the first buffer
 * included, so that the monotonic and monotonic-local rows compare equally;
 * am_options.limit bounds the same count. */
#ifndef AM_MONOTONIC_H
#define AM_MONOTONIC_H

#include "bump.h"

#define monotonic_FREE_REUSES 0
#define monotonic_RESET_FREES_LIVE 1
#define monotonic_THREAD_SAFE 0
#define monotonic_ASAN_POISONS 1

#ifndef AM_MONOTONIC_DEFAULT_CHUNK
#define AM_MONOTONIC_DEFAULT_CHUNK ((size_t)64 << 10)
#endif
#ifndef AM_MONOTONIC_LOCAL
#define AM_MONOTONIC_LOCAL 0
#endif
#ifndef AM_MONOTONIC_LOCAL_BYTES
#define AM_MONOTONIC_LOCAL_BYTES ((size_t)1 << 20)
#endif

typedef struct monotonic_chunk monotonic_chunk;

typedef struct monotonic_heap {
    am_counters counters;
    am_bump bump;
    /* The first chunk: a buffer (first_chunk NULL) or the oldest malloc chunk. */
    char *first, *first_end;
    monotonic_chunk *first_chunk;
    monotonic_chunk *chunks;   /* malloc chunks after the first filled since reset, newest first */
    monotonic_chunk *kept;     /* malloc chunks kept by reset and not filled since, oldest first */
    size_t next_size;          /* bytes of the next malloc chunk, header included */
    size_t max_chunk, limit;
    size_t reserved, reserved_peak;
    int *local_claim;          /* the thread's "buffer in use" flag, if this heap holds it */
    char *first_poisoned;      /* ASan builds: poison reached this far in the first chunk */
} monotonic_heap;

monotonic_heap *monotonic_create(const am_options *o);
void monotonic_destroy(monotonic_heap *h);
AM_NOINLINE void *monotonic_alloc_slow(monotonic_heap *h, size_t n, size_t align);
void *monotonic_alloc_aligned(monotonic_heap *h, size_t n, size_t align);
void monotonic_free_aligned(monotonic_heap *h, void *p, size_t n, size_t align);
AM_NOINLINE void *monotonic_realloc_slow(monotonic_heap *h, void *p, size_t old_n, size_t new_n);
void monotonic_reset(monotonic_heap *h);
void monotonic_usage(const monotonic_heap *h, size_t *reserved, size_t *reserved_peak);

/* For tests and reports: malloc chunks held now (the first included when it
 * came from malloc rather than a buffer). */
size_t monotonic_chunk_count(const monotonic_heap *h);

AM_INLINE void *monotonic_alloc(monotonic_heap *h, size_t n) {
    void *p = am_bump_alloc(&h->bump, n);
    if (AM_UNLIKELY(p == NULL)) return monotonic_alloc_slow(h, n, AM_MIN_ALIGN);
    return p;
}

AM_INLINE void monotonic_free(monotonic_heap *h, void *p, size_t n) {
    am_bump_free(&h->bump, p, n);
}

AM_INLINE void *monotonic_realloc(monotonic_heap *h, void *p, size_t old_n, size_t new_n) {
    if (p == NULL) return monotonic_alloc(h, new_n);
    void *q = am_bump_resize(&h->bump, p, old_n, new_n);
    if (AM_LIKELY(q != NULL)) return q;
    return monotonic_realloc_slow(h, p, old_n, new_n);
}

#endif
