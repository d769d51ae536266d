/* system.c: the system strategy's slow paths. The byte limit is counted here,
 * in requested bytes, since malloc does not say what it took from the OS. */
#include "system.h"
#include <string.h>
#if defined(_WIN32)
#include <malloc.h>
#endif

system_heap *system_create(const am_options *o) {
    system_heap *h = calloc(1, sizeof *h);
    if (h) h->limit = o ? o->limit : 0;
    return h;
}

void system_destroy(system_heap *h) { free(h); }

void *system_alloc_limited(system_heap *h, size_t n) {
    if (n > h->limit - h->live) return NULL;
    void *p = malloc(n);
    if (p) {
        h->live += n;
        if (h->live > h->live_peak) h->live_peak = h->live;
    }
    return p;
}

void system_free_limited(system_heap *h, void *p, size_t n) {
    if (!p) return;
    h->live -= n;
    free(p);
}

void *system_alloc_aligned(system_heap *h, size_t n, size_t align) {
    if (h->limit && n > h->limit - h->live) return NULL;
    /* aligned_alloc wants a size that is a multiple of the alignment */
#if defined(_WIN32)
    void *p = _aligned_malloc(n, align);
#else
    size_t want = AM_ALIGN_UP(n, align);
    void *p = aligned_alloc(align, want);
    /* mimalloc 2.0.9 (Debian 12) misaligns sizes that are multiples of 256,
     * 512 or 1024 up to 1 KiB (microsoft/mimalloc#700): ask again for more */
    for (int tries = 0; p && ((uintptr_t)p & (align - 1)); tries++) {
        free(p);
        want *= 2;
        p = tries < 8 ? aligned_alloc(align, want) : NULL;
    }
#endif
    if (p && h->limit) h->live += n;
    return p;
}

void system_free_aligned(system_heap *h, void *p, size_t n, size_t align) {
    (void)align;
    if (h->limit && p) h->live -= n;
#if defined(_WIN32)
    _aligned_free(p);
#else
    free(p);
#endif
}

void *system_realloc(system_heap *h, void *p, size_t old_n, size_t new_n) {
    if (!p) return system_alloc(h, new_n);
    if (h->limit && new_n > old_n && new_n - old_n > h->limit - h->live) return NULL;
    void *q = realloc(p, new_n);
    if (q && h->limit) {
        h->live = h->live - old_n + new_n;
        if (h->live > h->live_peak) h->live_peak = h->live;
    }
    return q;
}

void system_reset(system_heap *h) { (void)h; }

void system_usage(const system_heap *h, size_t *reserved, size_t *reserved_peak) {
    /* malloc's own reservations are not visible portably: report the limited
     * count where it is kept, else 0 (unknown); peak RSS tells the rest */
    *reserved = h->limit ? h->live : 0;
    *reserved_peak = h->limit ? h->live_peak : 0;
}
