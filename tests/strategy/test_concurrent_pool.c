/* test_concurrent_pool.c: the concurrent_pool and locked_pool rows through their
 * own calls: block size choice, geometric chunk growth, the malloc fallback,
 * and 2-4 threads churning one heap (no block held by two threads at once,
 * every block back on the list at the end). Other rows: no tests here. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "allocator.h"

#if defined(concurrent_pool_THREAD_SAFE)

static size_t total_blocks(concurrent_pool_heap *h) {
    size_t n = 0;
    cp_table *t = atomic_load(&h->table);
    for (uint32_t c = 0; t && c < h->chunks; c++) n += t->chunk[c].blocks;
    return n;
}

static void test_block_size_and_growth(void) {
    concurrent_pool_heap *h = concurrent_pool_create(NULL);
    CHECK(h != NULL);
    CHECK(concurrent_pool_alloc(h, 100000) != NULL); /* too big to choose the size: fallback */
    CHECK(atomic_load(&h->block_size) == 0 && h->fallbacks == 1);
    void *p[200];
    for (int i = 0; i < 200; i++) {
        p[i] = concurrent_pool_alloc(h, 345);
        CHECK(p[i] != NULL && ((uintptr_t)p[i] & (AM_MIN_ALIGN - 1)) == 0);
        memset(p[i], i, 345);
    }
    CHECK(atomic_load(&h->block_size) == AM_ALIGN_UP(345, AM_MIN_ALIGN));
    /* chunks of 1, 2, 4, 8, 16, 32, then 32 each: 200 blocks take 11 chunks */
    CHECK(h->chunks == 11);
    cp_table *t = atomic_load(&h->table);
    static const size_t want[11] = {1, 2, 4, 8, 16, 32, 32, 32, 32, 32, 32};
    for (int c = 0; c < 11; c++) CHECK(t->chunk[c].blocks == want[c]);
    CHECK(cp_free_count(h) == total_blocks(h) - 200);
    /* smaller sizes take a whole block, larger ones fall back to malloc */
    void *small = concurrent_pool_alloc(h, 8), *big = concurrent_pool_alloc(h, 353);
    CHECK(small && big && h->fallbacks == 2);
    concurrent_pool_free(h, small, 8);
    concurrent_pool_free(h, big, 353);
    for (int i = 0; i < 200; i++) {
        unsigned char *b = p[i];
        CHECK(b[0] == (unsigned char)i && b[344] == (unsigned char)i);
        concurrent_pool_free(h, p[i], 345);
    }
    CHECK(cp_free_count(h) == total_blocks(h));
    /* last in, first out */
    CHECK(concurrent_pool_alloc(h, 345) == p[199]);
    concurrent_pool_reset(h);
    size_t r, peak;
    concurrent_pool_usage(h, &r, &peak);
    CHECK(r == 0 && peak > 200 * 368);
    concurrent_pool_destroy(h);
}

static void test_block_size_from_options(void) {
    am_options o;
    am_options_default(&o);
    o.block_size = 40;
    o.max_chunk = 64 * 4; /* 48-byte blocks, 64 with the link: a cap of 4 a chunk */
    concurrent_pool_heap *h = concurrent_pool_create(&o);
    CHECK(h != NULL);
    void *p[20];
    for (int i = 0; i < 20; i++) CHECK((p[i] = concurrent_pool_alloc(h, 1 + i % 40)) != NULL);
    CHECK(h->fallbacks == 0 && atomic_load(&h->block_size) == 48);
    CHECK(h->chunks == 7); /* 1 + 2 + 4 + 4 + 4 + 4 + 4 >= 20 */
    for (int i = 0; i < 20; i++) concurrent_pool_free(h, p[i], 1 + i % 40);
    concurrent_pool_destroy(h);
}

enum { WINDOW = 24, ROUNDS = 200000, MAX_THREADS = 4 };

typedef struct worker {
    concurrent_pool_heap *heap;
    atomic_int *held; /* per block index: how many threads hold it now */
    atomic_int *go;
    uint32_t id;
    int bad, oom;
} worker;

/* Each thread keeps a window of blocks stamped with (thread, slot) and checks
 * the stamp when it frees: a block handed to two threads at once is seen by
 * the stamp or by the holder count of its index. */
static void churn(void *arg) {
    worker *w = arg;
    uint32_t *slot[WINDOW] = {0};
    uint64_t rng = w->id * 7919 + 1;
    atomic_fetch_add(w->go, 1);
    while (atomic_load(w->go) < 0) {}
    for (int r = 0; r < ROUNDS; r++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((rng >> 33) % WINDOW);
        uint32_t stamp = w->id << 16 | (uint32_t)i;
        if (slot[i]) {
            cp_link *l = (cp_link *)((char *)slot[i] - CP_HDR);
            for (int k = 0; k < 8; k++)
                if (slot[i][k] != stamp) w->bad = 1;
            if (atomic_fetch_sub(&w->held[cp_self(l)], 1) != 1) w->bad = 1;
            concurrent_pool_free(w->heap, slot[i], 345);
            slot[i] = NULL;
            if ((rng >> 20) & 1) continue; /* sometimes leave the slot empty a while */
        }
        slot[i] = concurrent_pool_alloc(w->heap, 345);
        if (!slot[i]) { w->oom = 1; return; }
        cp_link *l = (cp_link *)((char *)slot[i] - CP_HDR);
        if (atomic_fetch_add(&w->held[cp_self(l)], 1) != 0) w->bad = 1;
        for (int k = 0; k < 8; k++) slot[i][k] = stamp;
    }
    for (int i = 0; i < WINDOW; i++)
        if (slot[i]) {
            cp_link *l = (cp_link *)((char *)slot[i] - CP_HDR);
            atomic_fetch_sub(&w->held[cp_self(l)], 1);
            concurrent_pool_free(w->heap, slot[i], 345);
        }
}

static void stress(unsigned threads) {
    am_options o;
    am_options_default(&o);
    o.block_size = 345;
    o.max_chunk = 368 * 8; /* small chunks: growth races with pops and pushes */
    concurrent_pool_heap *h = concurrent_pool_create(&o);
    CHECK(h != NULL);
    /* indexes are chunk << 3 | slot: room for 4 x 24 live blocks in 13 chunks */
    atomic_int *held = calloc(1 << 16, sizeof *held);
    CHECK(held != NULL);
    atomic_int go;
    atomic_init(&go, -(int)threads);
    worker w[MAX_THREADS];
    am_thread *t[MAX_THREADS];
    for (unsigned i = 0; i < threads; i++) {
        w[i] = (worker){h, held, &go, i + 1, 0, 0};
        t[i] = am_thread_start(churn, &w[i]);
        CHECK(t[i] != NULL);
    }
    for (unsigned i = 0; i < threads; i++) am_thread_join(t[i]);
    for (unsigned i = 0; i < threads; i++) CHECK_MSG(!w[i].bad && !w[i].oom, "thread %u: bad %d oom %d", i, w[i].bad, w[i].oom);
    for (int i = 0; i < 1 << 16; i++) CHECK(atomic_load(&held[i]) == 0);
    CHECK(total_blocks(h) <= threads * WINDOW + 8 * 2);
    CHECK_MSG(cp_free_count(h) == total_blocks(h), "%zu blocks free of %zu", cp_free_count(h), total_blocks(h));
    free(held);
    concurrent_pool_destroy(h);
}

static void test_two_threads_share_one_heap(void) { stress(2); }
static void test_four_threads_share_one_heap(void) { stress(4); }
#endif

int main(int argc, char **argv) {
    static const am_test tests[] = {
#if defined(concurrent_pool_THREAD_SAFE)
        {"block_size_and_growth", test_block_size_and_growth},
        {"block_size_from_options", test_block_size_from_options},
        {"two_threads_share_one_heap", test_two_threads_share_one_heap},
        {"four_threads_share_one_heap", test_four_threads_share_one_heap},
#endif
        {NULL, NULL}};
    return am_run_tests("concurrent_pool/" AM_ROW_NAME, tests, argc, argv);
}
