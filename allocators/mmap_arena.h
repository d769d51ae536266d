/* mmap_arena.h: OSRM's mmap allocator (a data facade backed by mmap) as a bump arena. Like
 * monotonic (free gives bytes back only for the last block), but every chunk
 * is its own mapping, and reset keeps all of them and rewinds to the first:
 * the chunks after it are reused in order before any new one is mapped, so a
 * round after reset touches pages already there. Anonymous
 * memory in the mmap_arena row, and in the mmap_file row (-DAM_MMAP_FILE=1) a
 * file mapped shared, so the kernel can write pages back and drop them under
 * memory pressure, as OSRM's mmap'd dataset does. Not a general allocator.
 *
 * mmap_file's files are created in am_options.path (a directory), else
 * $AM_TMPDIR, else /tmp, named am-mmap-*.map. On POSIX each file is unlinked
 * as soon as it is mapped (the mapping and the open descriptor keep it alive;
 * an interrupted run leaves nothing behind); elsewhere it is removed on
 * destroy. Either way it is gone once the heap is destroyed.
 *
 * For workloads that evict pages (OSRM's runs under memory pressure):
 * mmap_arena_regions lists the chunks in the order they are used, and mmap_arena_evict
 * drops a range of one of them from memory, writing file pages back first.
 * The contents survive eviction: file pages are re-read from the file, and
 * anonymous pages come back from swap (MADV_PAGEOUT; without swap the kernel
 * may keep them resident). A workload written for any strategy can test
 * `#if AM_S(_HAS_REGIONS)`, which is 0 for strategies that lack it.
 *
 * am_options.limit bounds the bytes mapped, in whole pages; a limit below one
 * page maps one page and hands out (and counts) only the limit's bytes of it. */
#ifndef AM_MMAP_ARENA_H
#define AM_MMAP_ARENA_H

#include "bump.h"

#ifndef AM_MMAP_FILE
#define AM_MMAP_FILE 0
#endif

#define mmap_arena_FREE_REUSES 0
#define mmap_arena_RESET_FREES_LIVE 1
#define mmap_arena_THREAD_SAFE 0
#define mmap_arena_HAS_REGIONS 1
#define mmap_arena_ASAN_POISONS 1

#ifndef AM_MMAP_ARENA_DEFAULT_CHUNK
#define AM_MMAP_ARENA_DEFAULT_CHUNK ((size_t)64 << 10)
#endif

typedef struct mmap_arena_chunk mmap_arena_chunk;

typedef struct mmap_arena_heap {
    am_counters counters;
    am_bump bump;
    mmap_arena_chunk *first;   /* the chunks, in the order they are used */
    mmap_arena_chunk *current; /* after it: the spares a reset left */
    size_t next_size;          /* bytes of the next new mapping */
    size_t max_chunk, limit;
    size_t reserved, reserved_peak;
    char *dir; /* mmap_file: where the files go */
    unsigned files_made;
} mmap_arena_heap;

mmap_arena_heap *mmap_arena_create(const am_options *o);
void mmap_arena_destroy(mmap_arena_heap *h);
AM_NOINLINE void *mmap_arena_alloc_slow(mmap_arena_heap *h, size_t n, size_t align);
void *mmap_arena_alloc_aligned(mmap_arena_heap *h, size_t n, size_t align);
void mmap_arena_free_aligned(mmap_arena_heap *h, void *p, size_t n, size_t align);
AM_NOINLINE void *mmap_arena_realloc_slow(mmap_arena_heap *h, void *p, size_t old_n, size_t new_n);
void mmap_arena_reset(mmap_arena_heap *h);
void mmap_arena_usage(const mmap_arena_heap *h, size_t *reserved, size_t *reserved_peak);

/* Calls fn once per chunk, in the order they are used: its mapping
 * [base, base + size) and how many bytes from base have been handed out since
 * the last reset (0 for a spare not reached yet). */
typedef void (*mmap_arena_region_fn)(void *ctx, void *base, size_t size, size_t used);
void mmap_arena_regions(const mmap_arena_heap *h, mmap_arena_region_fn fn, void *ctx);

/* Drops the pages of [p, p + bytes) from memory; the range is widened to whole
 * pages and clipped to the chunk that holds p. 0 on success, -1 when p is in
 * no chunk or the system refused. */
int mmap_arena_evict(mmap_arena_heap *h, void *p, size_t bytes);

/* The backing file's descriptor (mmap_file) or -1, for tests and reports. */
intptr_t mmap_arena_file_handle(const mmap_arena_heap *h, const void *p);

AM_INLINE void *mmap_arena_alloc(mmap_arena_heap *h, size_t n) {
    void *p = am_bump_alloc(&h->bump, n);
    if (AM_UNLIKELY(p == NULL)) return mmap_arena_alloc_slow(h, n, AM_MIN_ALIGN);
    return p;
}

AM_INLINE void mmap_arena_free(mmap_arena_heap *h, void *p, size_t n) {
    am_bump_free(&h->bump, p, n);
}

AM_INLINE void *mmap_arena_realloc(mmap_arena_heap *h, void *p, size_t old_n, size_t new_n) {
    if (p == NULL) return mmap_arena_alloc(h, new_n);
    void *q = am_bump_resize(&h->bump, p, old_n, new_n);
    if (AM_LIKELY(q != NULL)) return q;
    return mmap_arena_realloc_slow(h, p, old_n, new_n);
}

#endif
