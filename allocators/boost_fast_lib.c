/* boost_fast_lib.c: the C side of the boost-fast_pool rows (boost_fast_lib.h):
 * the shared pools' life (the first handle builds them, the last takes them
 * down), aligned and big blocks (the model's mallocs) and resizes by
 * allocate-copy-free, as fast_pool.c does them. The pools are in
 * boost_fast_lib.cc. */
#include "boost_fast_lib.h"
#include <stdlib.h>

boost_fast_lib_shared boost_fast_lib_singletons;

#if AM_BOOST_FAST_MUTEX
#include "spin_guard.h"
/* guards the handle count: the budget's mutex itself is created by the first handle */
static atomic_flag handles_guard = AM_SPIN_GUARD_INIT;
static void guard_enter(void) { am_spin_enter(&handles_guard); }
static void guard_leave(void) { am_spin_leave(&handles_guard); }
#else
static void guard_enter(void) {}
static void guard_leave(void) {}
#endif

boost_fast_lib_heap *boost_fast_lib_create(const am_options *o) {
    boost_fast_lib_shared *s = &boost_fast_lib_singletons;
    boost_fast_lib_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    guard_enter();
    if (s->handles == 0) {
#if AM_BOOST_FAST_MUTEX
        if (!(s->lock = am_mutex_create())) { guard_leave(); free(h); return NULL; }
#endif
        bp_set_init(&s->big, o);
        s->refused = 0;
        boost_fast_lib_pools_build(o);
    }
    s->handles++;
    guard_leave();
    return h;
}

void boost_fast_lib_destroy(boost_fast_lib_heap *h) {
    boost_fast_lib_shared *s = &boost_fast_lib_singletons;
    if (!h) return;
    guard_enter();
    if (--s->handles == 0) {
        boost_fast_lib_pools_take_down();
        bp_set_purge(&s->big);
#if AM_BOOST_FAST_MUTEX
        am_mutex_destroy(s->lock);
        s->lock = NULL;
#endif
    }
    guard_leave();
    free(h);
}

void *boost_fast_lib_alloc_aligned(boost_fast_lib_heap *h, size_t n, size_t align) {
    (void)h;
    if (n > SIZE_MAX / 2) return NULL; /* as bp_big_alloc would, seen by the inliner */
    BOOST_FAST_LIB_LOCK();
    void *p = boost_fast_lib_singletons.refused ? NULL : bp_big_alloc(&boost_fast_lib_singletons.big, n, align);
    BOOST_FAST_LIB_UNLOCK();
    return p;
}

void boost_fast_lib_free_aligned(boost_fast_lib_heap *h, void *p, size_t n, size_t align) {
    (void)h; (void)n; (void)align;
    BOOST_FAST_LIB_LOCK();
    bp_big_free(&boost_fast_lib_singletons.big, p);
    BOOST_FAST_LIB_UNLOCK();
}

void *boost_fast_lib_realloc(boost_fast_lib_heap *h, void *p, size_t old_n, size_t new_n) {
    void *q = boost_fast_lib_alloc(h, new_n);
    if (bp_moved(q, p, old_n, new_n)) boost_fast_lib_free(h, p, old_n);
    return q;
}

void *boost_fast_lib_realloc_array(boost_fast_lib_heap *h, void *p, size_t old_count, size_t new_count, size_t elem) {
    void *q = boost_fast_lib_alloc_array(h, new_count, elem);
    if (bp_moved(q, p, old_count * elem, new_count * elem)) boost_fast_lib_free_array(h, p, old_count, elem);
    return q;
}

/* purge_memory() of every pool, other handles' live blocks included */
void boost_fast_lib_reset(boost_fast_lib_heap *h) {
    (void)h;
    boost_fast_lib_purge();
    BOOST_FAST_LIB_LOCK();
    bp_set_purge(&boost_fast_lib_singletons.big);
    boost_fast_lib_singletons.refused = 0;
    BOOST_FAST_LIB_UNLOCK();
}

void boost_fast_lib_usage(const boost_fast_lib_heap *h, size_t *reserved, size_t *reserved_peak) {
    (void)h;
    BOOST_FAST_LIB_LOCK();
    *reserved = boost_fast_lib_singletons.big.budget.reserved;
    *reserved_peak = boost_fast_lib_singletons.big.budget.peak;
    BOOST_FAST_LIB_UNLOCK();
}
