/* system.h: the C library's malloc, free and realloc as a strategy. Linked
 * against jemalloc, tcmalloc, mimalloc, oneTBB's tbbmalloc or Scudo instead of
 * glibc, the same code gives the system-<library> rows (and, with make
 * EXTERNAL=name:/path/libfoo.so, system-<name> for any other).
 *
 * AM_SYSTEM_SIZED chooses the free: plain free(p) (0, the default), or the
 * library's sized free, which is what C++ sized delete (operator delete(p, n))
 * reaches: jemalloc's sdallocx (AM_SIZED_JEMALLOC), gperftools' tc_free_sized
 * (AM_SIZED_TCMALLOC), mimalloc's mi_free_size (AM_SIZED_MIMALLOC); the
 * *-sized rows. Aligned blocks are freed with plain free in every build. */
#ifndef AM_SYSTEM_H
#define AM_SYSTEM_H

#include <stdatomic.h>
#include <stdlib.h>
#include "types.h"

#define AM_SIZED_JEMALLOC 1
#define AM_SIZED_TCMALLOC 2
#define AM_SIZED_MIMALLOC 3
#ifndef AM_SYSTEM_SIZED
#define AM_SYSTEM_SIZED 0
#endif
#if AM_SYSTEM_SIZED == AM_SIZED_JEMALLOC
#include <jemalloc/jemalloc.h>
#elif AM_SYSTEM_SIZED == AM_SIZED_TCMALLOC
#include <gperftools/tcmalloc.h>
#elif AM_SYSTEM_SIZED == AM_SIZED_MIMALLOC
#include <mimalloc.h>
#elif AM_SYSTEM_SIZED != 0
#error "AM_SYSTEM_SIZED: 0 or one of AM_SIZED_JEMALLOC, AM_SIZED_TCMALLOC, AM_SIZED_MIMALLOC"
#endif

/* free(p), or the sized free this build chose (those want no NULL) */
AM_INLINE void system_sized_free(void *p, size_t n) {
#if AM_SYSTEM_SIZED == AM_SIZED_JEMALLOC
    if (p) sdallocx(p, n, 0);
#elif AM_SYSTEM_SIZED == AM_SIZED_TCMALLOC
    if (p) tc_free_sized(p, n);
#elif AM_SYSTEM_SIZED == AM_SIZED_MIMALLOC
    if (p) mi_free_size(p, n);
#else
    (void)n;
    free(p);
#endif
}

#define system_FREE_REUSES 1
#define system_RESET_FREES_LIVE 0 /* malloc cannot free what it was not handed back */
#define system_THREAD_SAFE 1
#define system_ASAN_POISONS 1 /* ASan replaces malloc and poisons what it does not hand out */

typedef struct system_heap {
    am_counters counters;
    size_t limit; /* 0: no byte limit, and the fast path never looks further */
    _Atomic size_t live;  /* bytes live, kept only when limit is set */
    _Atomic size_t live_peak;
} system_heap;

system_heap *system_create(const am_options *o);
void system_destroy(system_heap *h);
AM_NOINLINE void *system_alloc_slow(system_heap *h, size_t n);
AM_NOINLINE void system_free_slow(system_heap *h, void *p, size_t n);
void *system_alloc_aligned(system_heap *h, size_t n, size_t align);
void system_free_aligned(system_heap *h, void *p, size_t n, size_t align);
void *system_realloc(system_heap *h, void *p, size_t old_n, size_t new_n);
void system_reset(system_heap *h);
void system_usage(const system_heap *h, size_t *reserved, size_t *reserved_peak);

AM_INLINE void *system_alloc(system_heap *h, size_t n) {
    if (AM_UNLIKELY(h->limit != 0)) return system_alloc_slow(h, n);
    return malloc(n);
}

AM_INLINE void system_free(system_heap *h, void *p, size_t n) {
    if (AM_UNLIKELY(h->limit != 0)) { system_free_slow(h, p, n); return; }
    system_sized_free(p, n);
}

#endif
