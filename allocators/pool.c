/* pool.c: the pool strategy's out-of-line calls: arrays (ordered_malloc(n) on
 * the element's pool), resizes by allocate-copy-free, and the heap's life. */
#include "pool.h"
#include <stdlib.h>

pool_heap *pool_create(const am_options *o) {
    pool_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    bp_set_init(&h->set, o);
    return h;
}

void pool_destroy(pool_heap *h) {
    if (!h) return;
    bp_set_purge(&h->set);
    free(h);
}

/* a request too big for any pool */
void *pool_alloc_slow(pool_heap *h, size_t n) { return bp_big_alloc(&h->set, n, AM_MIN_ALIGN); }

/* a block above BP_MAX_PARTITION: one malloc of its own */
void pool_free_slow(pool_heap *h, void *p) { bp_big_free(&h->set, p); }

void *pool_alloc_aligned(pool_heap *h, size_t n, size_t align) {
    return bp_big_alloc(&h->set, n, align);
}

void pool_free_aligned(pool_heap *h, void *p, size_t n, size_t align) {
    (void)n; (void)align;
    bp_big_free(&h->set, p);
}

void *pool_realloc(pool_heap *h, void *p, size_t old_n, size_t new_n) {
    void *q = pool_alloc(h, new_n);
    if (bp_moved(q, p, old_n, new_n)) pool_free(h, p, old_n);
    return q;
}

void *pool_alloc_array(pool_heap *h, size_t count, size_t elem) {
    if (elem && count > SIZE_MAX / elem) return NULL;
    size_t part = BP_ARRAY_PARTITION(elem ? elem : 1);
    if (elem > BP_MAX_PARTITION) return bp_big_alloc(&h->set, count * elem, AM_MIN_ALIGN);
    return bp_handout(bp_ordered_malloc(bp_set_pool(&h->set, part), bp_chunks_for(count * elem, part)),
                      count * elem);
}

void pool_free_array(pool_heap *h, void *p, size_t count, size_t elem) {
    size_t part = BP_ARRAY_PARTITION(elem ? elem : 1);
    if (!p) return;
    if (elem > BP_MAX_PARTITION) bp_big_free(&h->set, p);
    else bp_ordered_free_n(bp_set_pool(&h->set, part), p, bp_chunks_for(count * elem, part));
}

/* a vector never grows in place under pool_allocator */
void *pool_realloc_array(pool_heap *h, void *p, size_t old_count, size_t new_count, size_t elem) {
    void *q = pool_alloc_array(h, new_count, elem);
    if (bp_moved(q, p, old_count * elem, new_count * elem)) pool_free_array(h, p, old_count, elem);
    return q;
}

void pool_reset(pool_heap *h) { bp_set_purge(&h->set); }

void pool_usage(const pool_heap *h, size_t *reserved, size_t *reserved_peak) {
    *reserved = h->set.budget.reserved;
    *reserved_peak = h->set.budget.peak;
}
