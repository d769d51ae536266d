/* ideal.c: creating and touching the one buffer; the rest is in ideal.h. */
#include "ideal.h"
#include <stdlib.h>
#include <string.h>

ideal_heap *ideal_create(const am_options *o) {
    size_t size = o && o->initial_bytes ? o->initial_bytes : AM_IDEAL_DEFAULT_BYTES;
    if (o && o->limit && size > o->limit) size = o->limit;
    ideal_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    size_t usable = size; /* a limit below a page still holds */
    size = AM_ALIGN_UP(size, am_page_size());
    h->base = am_vm_reserve(size);
    if (!h->base) { free(h); return NULL; }
    /* Not touched here: reset rewinds to the same pages, so the warm-up
     * repetition touches exactly the pages a workload uses, before any sample. */
    h->size = size;
    h->cur = h->base;
    h->end = h->base + usable;
    h->poisoned = h->base;
    return h;
}

void ideal_destroy(ideal_heap *h) {
    if (!h) return;
    /* the address range may be mapped again, by anyone */
    am_unpoison(h->base, (size_t)(h->poisoned - h->base));
    am_vm_release(h->base, h->size);
    free(h);
}

void *ideal_alloc_aligned(ideal_heap *h, size_t n, size_t align) {
    char *p = (char *)AM_ALIGN_UP((uintptr_t)h->cur, align);
    if (p > h->end || n > (size_t)(h->end - p)) return NULL;
    h->cur = p + AM_ALIGN_UP(n, AM_MIN_ALIGN);
    AM_IDEAL_ASAN_HANDOUT(h, p, n);
    return p;
}

void ideal_free_aligned(ideal_heap *h, void *p, size_t n, size_t align) {
    (void)align;
    ideal_free(h, p, n);
}

void *ideal_realloc(ideal_heap *h, void *p, size_t old_n, size_t new_n) {
    if (p && (char *)p + AM_ALIGN_UP(old_n, AM_MIN_ALIGN) == h->cur) {
        /* the last block grows or shrinks where it is */
        size_t need = AM_ALIGN_UP(new_n, AM_MIN_ALIGN);
        if (need > (size_t)(h->end - (char *)p)) return NULL;
        h->cur = (char *)p + need;
        am_poison(p, AM_ALIGN_UP(old_n, AM_MIN_ALIGN));
        AM_IDEAL_ASAN_HANDOUT(h, p, new_n);
        return p;
    }
    void *q = ideal_alloc(h, new_n);
    if (q && p) {
        memcpy(q, p, old_n < new_n ? old_n : new_n);
        ideal_free(h, p, old_n);
    }
    return q;
}

void ideal_reset(ideal_heap *h) {
    size_t used = (size_t)(h->cur - h->base);
    if (used > h->high) h->high = used;
    am_poison(h->base, used);
    h->cur = h->base;
}

void ideal_poison_ahead(ideal_heap *h) {
    size_t step = (size_t)1 << 20;
    char *to = (size_t)(h->end - h->cur) > step ? h->cur + step : h->end;
    if (to > h->poisoned) {
        am_poison(h->poisoned, (size_t)(to - h->poisoned));
        h->poisoned = to;
    }
}

/* The buffer is address space; what counts is the part ever handed out. */
void ideal_usage(const ideal_heap *h, size_t *reserved, size_t *reserved_peak) {
    size_t used = (size_t)(h->cur - h->base);
    size_t high = used > h->high ? used : h->high;
    *reserved = AM_ALIGN_UP(high, am_page_size());
    *reserved_peak = *reserved;
}
