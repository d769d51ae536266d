/* boost_lib.c: the C side of the boost-pool row (boost_lib.h): the heap's
 * life, aligned blocks (the model's big mallocs) and resizes by
 * allocate-copy-free, as pool.c does them. The pools are in boost_lib.cc. */
#include "boost_lib.h"
#include <stdlib.h>

boost_lib_heap *boost_lib_create(const am_options *o) {
    boost_lib_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    bp_set_init(&h->big, o);
    h->pools = boost_lib_pools_new(h, o);
    if (!h->pools) { free(h); return NULL; }
    return h;
}

void boost_lib_destroy(boost_lib_heap *h) {
    if (!h) return;
    boost_lib_pools_delete(h);
    bp_set_purge(&h->big);
    free(h);
}

void *boost_lib_alloc_aligned(boost_lib_heap *h, size_t n, size_t align) {
    if (h->refused || n > SIZE_MAX / 2) return NULL; /* as bp_big_alloc would, seen by the inliner */
    return bp_big_alloc(&h->big, n, align);
}

void boost_lib_free_aligned(boost_lib_heap *h, void *p, size_t n, size_t align) {
    (void)n; (void)align;
    bp_big_free(&h->big, p);
}

void *boost_lib_realloc(boost_lib_heap *h, void *p, size_t old_n, size_t new_n) {
    void *q = boost_lib_alloc(h, new_n);
    if (bp_moved(q, p, old_n, new_n)) boost_lib_free(h, p, old_n);
    return q;
}

void *boost_lib_realloc_array(boost_lib_heap *h, void *p, size_t old_count, size_t new_count, size_t elem) {
    void *q = boost_lib_alloc_array(h, new_count, elem);
    if (bp_moved(q, p, old_count * elem, new_count * elem)) boost_lib_free_array(h, p, old_count, elem);
    return q;
}

void boost_lib_reset(boost_lib_heap *h) {
    boost_lib_purge(h);
    bp_set_purge(&h->big);
    h->refused = 0;
}

void boost_lib_usage(const boost_lib_heap *h, size_t *reserved, size_t *reserved_peak) {
    *reserved = h->big.budget.reserved;
    *reserved_peak = h->big.budget.peak;
}
