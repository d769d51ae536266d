/* ideal.h: the lower bound. One buffer, reserved up front and touched by the
 * warm-up repetition;
 * allocation bumps a pointer, free does nothing, reset is one store. What a
 * workload costs under `ideal` is what its container work costs alone. */
#ifndef AM_IDEAL_H
#define AM_IDEAL_H

#include "types.h"
#include "sanitize.h"

#define ideal_FREE_REUSES 0
#define ideal_RESET_FREES_LIVE 1
#define ideal_THREAD_SAFE 0
#define ideal_ASAN_POISONS 1

#ifndef AM_IDEAL_DEFAULT_BYTES
#define AM_IDEAL_DEFAULT_BYTES ((size_t)1 << 30) /* address space; pages come as touched */
#endif

typedef struct ideal_heap {
    am_counters counters;
    char *cur, *end;
    char *base;
    size_t size;
    size_t high; /* highest offset reached: the part of the buffer in use */
    char *poisoned; /* ASan builds: [cur, poisoned) is poisoned, kept ahead of cur */
} ideal_heap;

ideal_heap *ideal_create(const am_options *o);
void ideal_destroy(ideal_heap *h);
void *ideal_alloc_aligned(ideal_heap *h, size_t n, size_t align);
void ideal_free_aligned(ideal_heap *h, void *p, size_t n, size_t align);
void *ideal_realloc(ideal_heap *h, void *p, size_t old_n, size_t new_n);
void ideal_reset(ideal_heap *h);
void ideal_usage(const ideal_heap *h, size_t *reserved, size_t *reserved_peak);
void ideal_poison_ahead(ideal_heap *h);

/* ASan builds only: the bytes past the bump pointer are poisoned a step at a
 * time (all of a 1 GiB buffer would be 128 MiB of shadow), then the n bytes
 * handed out are unpoisoned; padding and the rest stay poisoned. */
#if AM_ASAN
#define AM_IDEAL_ASAN_HANDOUT(h, p, n)                                          \
    do {                                                                        \
        if ((h)->poisoned - (h)->cur < 64) ideal_poison_ahead(h);                \
        am_unpoison((p), (n));                                                  \
    } while (0)
#else
#define AM_IDEAL_ASAN_HANDOUT(h, p, n) ((void)0)
#endif

AM_INLINE void *ideal_alloc(ideal_heap *h, size_t n) {
    size_t room = (size_t)(h->end - h->cur);
    size_t need = AM_ALIGN_UP(n, AM_MIN_ALIGN);
    /* the buffer is the whole heap; n >= 1, so need is 0 only when the
     * rounding wrapped, and need - 1 then fails the comparison too */
    if (AM_UNLIKELY(need - 1 >= room)) return NULL;
    void *p = h->cur;
    h->cur += need;
    AM_IDEAL_ASAN_HANDOUT(h, p, n);
    return p;
}

/* nothing to free; under ASan the block becomes unaddressable */
AM_INLINE void ideal_free(ideal_heap *h, void *p, size_t n) {
    (void)h;
    if (p) am_poison(p, AM_ALIGN_UP(n, AM_MIN_ALIGN));
}

#endif
