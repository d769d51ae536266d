/* test_pool_semantics.c: the pool and fast_pool rows through the am_* calls
 * containers use (vectors, reset, and fast_pool-mutex from two threads). Built
 * for every row; other rows have no tests here and report a skip. The engine
 * itself is tested in tests/unit/test_boost_pool.c. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "allocator.h"

#if defined(pool_HAS_ARRAY) || defined(fast_pool_HAS_ARRAY)
#define AM_VEC_NAME ps_vec
#define AM_VEC_T uint32_t
#include "vector.h"

static void test_vectors_grow_and_return_everything(void) {
    am_heap *h = am_create(NULL);
    CHECK(h != NULL);
    size_t base, peak;
    AM_S(_usage)(h, &base, &peak);
    ps_vec v[3];
    for (int k = 0; k < 3; k++) ps_vec_init(&v[k], h);
    for (uint32_t i = 0; i < 3000; i++)
        for (int k = 0; k < 3; k++) CHECK(ps_vec_push_back(&v[k], i * 7u + (uint32_t)k) == 0);
    for (uint32_t i = 0; i < 3000; i++)
        for (int k = 0; k < 3; k++) CHECK(v[k].data[i] == i * 7u + (uint32_t)k);
    am_stats s;
    am_get_stats(h, &s);
    CHECK(s.bytes_live == 3 * 4096 * sizeof(uint32_t)); /* capacities 1, 2, 4, ... 4096 */
    CHECK(s.allocs == 3 * 13 && s.frees == 3 * 12);
    for (int k = 0; k < 3; k++) ps_vec_destroy(&v[k]);
    am_get_stats(h, &s);
    CHECK(s.bytes_live == 0 && s.bytes_reserved > base);
    am_reset(h);
    am_get_stats(h, &s);
    CHECK(s.bytes_reserved == base);
    am_destroy(h);
}

static void test_reset_releases_live_blocks(void) {
    am_heap *h = am_create(NULL);
    CHECK(h != NULL);
    for (int i = 0; i < 1000; i++) CHECK(am_alloc(h, (size_t)(i % 300) + 1) != NULL);
    CHECK(am_alloc_array(h, 5000, 12) != NULL);
    CHECK(am_alloc(h, 100000) != NULL);
    am_stats s;
    am_get_stats(h, &s);
    size_t before = s.bytes_reserved;
    am_reset(h);
    am_get_stats(h, &s);
    CHECK(s.bytes_live == 0 && s.bytes_reserved < before);
    CHECK(s.reserved_peak >= before);
    am_destroy(h);
}
#endif

#if defined(fast_pool_HAS_ARRAY) && AM_FAST_POOL_MUTEX
#include <stdatomic.h>
#include "platform.h"

static atomic_int started; /* both threads start churning together */

typedef struct worker {
    am_heap *heap;
    uint32_t id;
    int bad;
} worker;

/* Each thread keeps a window of blocks stamped with its id and checks them on
 * free: a lost update in the shared free lists hands one chunk to both. */
static void churn(void *arg) {
    worker *w = arg;
    enum { WINDOW = 16, ROUNDS = 3000000 };
    uint32_t *slot[WINDOW] = {0};
    size_t size[WINDOW] = {0};
    uint64_t rng = w->id + 1;
    atomic_fetch_add(&started, 1);
    while (atomic_load(&started) < 2) {}
    for (int r = 0; r < ROUNDS; r++) {
        int i = r % WINDOW;
        if (slot[i]) {
            for (size_t k = 0; k < size[i] / 4; k++)
                if (slot[i][k] != (w->id << 16 | (uint32_t)i)) w->bad = 1;
            /* the S_ calls: AM_STATS counters are not shared-safe, the pools are */
            fast_pool_free(w->heap, slot[i], size[i]);
        }
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        size[i] = 16 + (size_t)((rng >> 40) % 2) * 16;
        slot[i] = fast_pool_alloc(w->heap, size[i]);
        if (!slot[i]) { w->bad = 1; return; }
        for (size_t k = 0; k < size[i] / 4; k++) slot[i][k] = w->id << 16 | (uint32_t)i;
    }
    for (int i = 0; i < WINDOW; i++) fast_pool_free(w->heap, slot[i], size[i]);
}

static void test_mutex_heap_shared_by_two_threads(void) {
    am_heap *h = am_create(NULL);
    CHECK(h != NULL && AM_THREAD_SAFE);
    worker w[2] = {{h, 1, 0}, {h, 2, 0}};
    atomic_store(&started, 0);
    am_thread *t0 = am_thread_start(churn, &w[0]);
    am_thread *t1 = am_thread_start(churn, &w[1]);
    CHECK(t0 && t1);
    am_thread_join(t0);
    am_thread_join(t1);
    CHECK(!w[0].bad && !w[1].bad);
    am_destroy(h);
}
#endif

int main(int argc, char **argv) {
    static const am_test tests[] = {
#if defined(pool_HAS_ARRAY) || defined(fast_pool_HAS_ARRAY)
        {"vectors_grow_and_return_everything", test_vectors_grow_and_return_everything},
        {"reset_releases_live_blocks", test_reset_releases_live_blocks},
#endif
#if defined(fast_pool_HAS_ARRAY) && AM_FAST_POOL_MUTEX
        {"mutex_heap_shared_by_two_threads", test_mutex_heap_shared_by_two_threads},
#endif
        {NULL, NULL}};
    return am_run_tests("pool_semantics/" AM_ROW_NAME, tests, argc, argv);
}
