/* ideal.h: the lower bound. One buffer, reserved up front and touched by the
 * warm-up repetition;
 * allocation bumps a pointer, free does nothing, reset is one store. What a
 * workload costs under `ideal` is what its container work costs alone. */
#ifndef AM_IDEAL_H
#define AM_IDEAL_H

#include "types.h"

#define ideal_FREE_REUSES 0
#define ideal_RESET_FREES_LIVE 1
#define ideal_THREAD_SAFE 0

#ifndef AM_IDEAL_DEFAULT_BYTES
#define AM_IDEAL_DEFAULT_BYTES ((size_t)1 << 30) /* address space; pages come as touched */
#endif

typedef struct ideal_heap {
    am_counters counters;
    char *cur, *end;
    char *base;
    size_t size;
    size_t high; /* highest offset reached: the part of the buffer in use */
} ideal_heap;

ideal_heap *ideal_create(const am_options *o);
void ideal_destroy(ideal_heap *h);
void *ideal_alloc_aligned(ideal_heap *h, size_t n, size_t align);
void ideal_free_aligned(ideal_heap *h, void *p, size_t n, size_t align);
void *ideal_realloc(ideal_heap *h, void *p, size_t old_n, size_t new_n);
void ideal_reset(ideal_heap *h);
void ideal_usage(const ideal_heap *h, size_t *reserved, size_t *reserved_peak);

AM_INLINE void *ideal_alloc(ideal_heap *h, size_t n) {
    size_t room = (size_t)(h->end - h->cur);
    size_t need = AM_ALIGN_UP(n, AM_MIN_ALIGN);
    if (AM_UNLIKELY(need > room)) return NULL; /* the buffer is the whole heap */
    void *p = h->cur;
    h->cur += need;
    return p;
}

AM_INLINE void ideal_free(ideal_heap *h, void *p, size_t n) { (void)h; (void)p; (void)n; }

#endif
