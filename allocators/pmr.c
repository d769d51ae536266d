/* pmr.c: the C side of the pmr rows (pmr.h): the heap's life and what the
 * memory resources have no call for (a resize is allocate, copy, deallocate,
 * as a container's growth). The resource and its fast paths are in pmr.cc. */
#include "pmr.h"
#include <stdlib.h>
#include <string.h>

pmr_heap *pmr_create(const am_options *o) {
    pmr_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->limit = o ? o->limit : 0;
    h->resource = pmr_resource_new(h, o);
    if (!h->resource) { free(h); return NULL; }
    return h;
}

void pmr_destroy(pmr_heap *h) {
    if (!h) return;
    pmr_resource_delete(h->resource);
    free(h);
}

void *pmr_realloc(pmr_heap *h, void *p, size_t old_n, size_t new_n) {
    void *q = pmr_alloc(h, new_n);
    if (!q || !p) return q;
    memcpy(q, p, old_n < new_n ? old_n : new_n);
    pmr_free(h, p, old_n);
    return q;
}

void pmr_reset(pmr_heap *h) { pmr_release(h); }

void pmr_usage(const pmr_heap *h, size_t *reserved, size_t *reserved_peak) {
    *reserved = h->reserved;
    *reserved_peak = h->reserved_peak;
}
