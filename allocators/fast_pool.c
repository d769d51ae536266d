/* fast_pool.c: the shared pools' life (first handle sets them up, last one
 * purges them), arrays, and the calls that go around the pools. */
#include "fast_pool.h"
#include <stdlib.h>

fast_pool_shared fast_pool_singletons;

#if AM_FAST_POOL_MUTEX
#include "spin_guard.h"
/* guards the handle count: the mutex itself is created by the first handle */
static atomic_flag handles_guard = AM_SPIN_GUARD_INIT;
static void guard_enter(void) { am_spin_enter(&handles_guard); }
static void guard_leave(void) { am_spin_leave(&handles_guard); }
#else
static void guard_enter(void) {}
static void guard_leave(void) {}
#endif

fast_pool_heap *fast_pool_create(const am_options *o) {
    fast_pool_shared *s = &fast_pool_singletons;
    fast_pool_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    guard_enter();
    if (s->handles == 0) {
        int ok = 1;
        bp_set_init(&s->set, o);
#if AM_FAST_POOL_MUTEX
        ok = (s->lock = am_mutex_create()) != NULL;
#endif
        if (!ok) { guard_leave(); free(h); return NULL; }
    }
    s->handles++;
    guard_leave();
    return h;
}

void fast_pool_destroy(fast_pool_heap *h) {
    fast_pool_shared *s = &fast_pool_singletons;
    if (!h) return;
    guard_enter();
    if (--s->handles == 0) {
        bp_set_purge(&s->set);
#if AM_FAST_POOL_MUTEX
        am_mutex_destroy(s->lock);
        s->lock = NULL;
#endif
    }
    guard_leave();
    free(h);
}

void *fast_pool_alloc_slow(fast_pool_heap *h, size_t n, size_t align) {
    (void)h;
    FAST_POOL_LOCK();
    void *p = bp_big_alloc(&fast_pool_singletons.set, n, align);
    FAST_POOL_UNLOCK();
    return p;
}

void fast_pool_free_slow(fast_pool_heap *h, void *p) {
    (void)h;
    FAST_POOL_LOCK();
    bp_big_free(&fast_pool_singletons.set, p);
    FAST_POOL_UNLOCK();
}

void *fast_pool_alloc_aligned(fast_pool_heap *h, size_t n, size_t align) {
    return fast_pool_alloc_slow(h, n, align);
}

void fast_pool_free_aligned(fast_pool_heap *h, void *p, size_t n, size_t align) {
    (void)n; (void)align;
    fast_pool_free_slow(h, p);
}

void *fast_pool_realloc(fast_pool_heap *h, void *p, size_t old_n, size_t new_n) {
    void *q = fast_pool_alloc(h, new_n);
    if (bp_moved(q, p, old_n, new_n)) fast_pool_free(h, p, old_n);
    return q;
}

/* fast_pool_allocator::allocate(n): malloc() for one, ordered_malloc(n) else */
void *fast_pool_alloc_array(fast_pool_heap *h, size_t count, size_t elem) {
    if (elem && count > SIZE_MAX / elem) return NULL;
    size_t part = BP_ARRAY_PARTITION(elem ? elem : 1);
    if (elem > BP_MAX_PARTITION) return fast_pool_alloc_slow(h, count * elem, AM_MIN_ALIGN);
    bp_pool *p = bp_set_pool(&fast_pool_singletons.set, part);
    size_t chunks = bp_chunks_for(count * elem, part);
    FAST_POOL_LOCK();
    void *c = count <= 1 ? bp_malloc(p) : bp_ordered_malloc(p, chunks);
    FAST_POOL_UNLOCK();
    return bp_handout(c, count * elem);
}

/* deallocate(p, n): free() or free(p, n), both unordered */
void fast_pool_free_array(fast_pool_heap *h, void *c, size_t count, size_t elem) {
    size_t part = BP_ARRAY_PARTITION(elem ? elem : 1);
    if (!c) return;
    if (elem > BP_MAX_PARTITION) { fast_pool_free_slow(h, c); return; }
    bp_pool *p = bp_set_pool(&fast_pool_singletons.set, part);
    size_t chunks = bp_chunks_for(count * elem, part);
    FAST_POOL_LOCK();
    if (count <= 1) bp_free(p, c);
    else bp_free_n(p, c, chunks);
    FAST_POOL_UNLOCK();
}

void *fast_pool_realloc_array(fast_pool_heap *h, void *p, size_t old_count, size_t new_count, size_t elem) {
    void *q = fast_pool_alloc_array(h, new_count, elem);
    if (bp_moved(q, p, old_count * elem, new_count * elem)) fast_pool_free_array(h, p, old_count, elem);
    return q;
}

void fast_pool_reset(fast_pool_heap *h) {
    (void)h;
    FAST_POOL_LOCK();
    bp_set_purge(&fast_pool_singletons.set);
    FAST_POOL_UNLOCK();
}

void fast_pool_usage(const fast_pool_heap *h, size_t *reserved, size_t *reserved_peak) {
    (void)h;
    FAST_POOL_LOCK();
    *reserved = fast_pool_singletons.set.budget.reserved;
    *reserved_peak = fast_pool_singletons.set.budget.peak;
    FAST_POOL_UNLOCK();
}
