/* pmr.h: the C++ standard library's memory resources as a strategy, the real
 * thing rather than a model: std::pmr::monotonic_buffer_resource (pmr-monotonic),
 * and, chosen by AM_PMR_KIND, unsynchronized_pool_resource (pmr-pool) and
 * synchronized_pool_resource (pmr-sync-pool). A C++ row: pmr.cc, compiled as
 * C++17, holds the resource; this header and pmr.c are the C side.
 *
 * The fast paths (pmr_alloc, pmr_free) are extern "C" functions in pmr.cc that
 * call the resource through its final C++ type, so that do_allocate is a direct
 * call, not a virtual one. The build compiles this row's units with link-time
 * optimisation (-flto) so that they inline into the C containers as a template
 * allocator's would; with -fexceptions on the C side, since they catch
 * std::bad_alloc (out of memory is NULL, never an exception through C).
 * Every block is asked for with alignment AM_MIN_ALIGN and given back with the
 * size and alignment it was asked with (sized deallocate); the pool kinds
 * round the size up to a multiple of the alignment, without which libstdc++'s
 * pools of 24-byte blocks hand out blocks aligned to 8.
 *
 * The upstream is the default resource (new/delete) seen through a counting
 * resource of pmr.cc: it keeps the reserved bytes and refuses past
 * am_options.limit (one virtual call per chunk the resource takes, not per
 * block). The pool resources' own tables come from it too, counted and never
 * refused, with room for them kept under the limit (pmr.cc says why). reset
 * is release(). */
#ifndef AM_PMR_H
#define AM_PMR_H

#include "types.h"

#define AM_PMR_MONOTONIC 1
#define AM_PMR_POOL 2
#define AM_PMR_SYNC_POOL 3
#ifndef AM_PMR_KIND
#define AM_PMR_KIND AM_PMR_MONOTONIC
#endif

#define pmr_FREE_REUSES (AM_PMR_KIND != AM_PMR_MONOTONIC)
#define pmr_RESET_FREES_LIVE 1
#define pmr_THREAD_SAFE (AM_PMR_KIND == AM_PMR_SYNC_POOL)
#define pmr_ASAN_POISONS 0
/* a pool per size class, each taking chunks of at least 16 blocks, twice as
 * many each time, whatever the limit leaves */
#define pmr_POOLS_GROW_APART (AM_PMR_KIND != AM_PMR_MONOTONIC)

typedef struct pmr_heap {
    am_counters counters;
    void *resource;  /* the C++ resource, of pmr.cc's final type */
    size_t limit;    /* 0: none */
    size_t reserved, reserved_peak; /* kept by the counting upstream */
    size_t largest_table; /* the pool resources' largest table yet (pmr.cc), also kept there */
} pmr_heap;

/* pmr.cc: the resource's life and its calls */
void *pmr_resource_new(pmr_heap *h, const am_options *o);
void pmr_resource_delete(void *resource);
void pmr_release(pmr_heap *h);
void *pmr_alloc(pmr_heap *h, size_t n);
void pmr_free(pmr_heap *h, void *p, size_t n);
void *pmr_alloc_aligned(pmr_heap *h, size_t n, size_t align);
void pmr_free_aligned(pmr_heap *h, void *p, size_t n, size_t align);

/* pmr.c */
pmr_heap *pmr_create(const am_options *o);
void pmr_destroy(pmr_heap *h);
void *pmr_realloc(pmr_heap *h, void *p, size_t old_n, size_t new_n);
void pmr_reset(pmr_heap *h);
void pmr_usage(const pmr_heap *h, size_t *reserved, size_t *reserved_peak);

#endif
