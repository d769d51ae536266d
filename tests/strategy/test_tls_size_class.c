/* test_tls_size_class.c: what the thread-local size-class pool promises beyond
 * the contract: the class of every size, LIFO reuse within a class, carving
 * and blocks, per-thread heaps that stay apart, blocks given back when the
 * thread ends. Built for the tls_size_class row only (test_<source>.c). */
#include "blocks.h" /* new_heap, stats_of */

#ifdef AM_TLS_SIZE_CLASS_H
/* DEBUG=1 hands the strategy every block enlarged by a header and a canary
 * (allocator.h), so the addresses and counts of its own layout checked here
 * hold only in the other builds, which run these tests. */
#if AM_DEBUG
#define LAYOUT_TEST() CHECK_SKIP("DEBUG=1: the debug layer enlarges every block, so the layout checked here differs")
#else
#define LAYOUT_TEST() ((void)0)
#endif


static size_t reserved_of(am_heap *h) { return stats_of(h).bytes_reserved; }

/* Class k holds blocks of 2^k bytes: the smallest power of two >= n, at least AM_MIN_ALIGN. */
static void test_class_of_every_size(void) {
    unsigned k = 0;
    while (((size_t)1 << k) < AM_MIN_ALIGN) k++;
    const unsigned min_k = k;
    for (size_t n = 1; n <= ((size_t)1 << 20); n++) {
        if (n > ((size_t)1 << k)) k++;
        unsigned got = tls_size_class_class(n);
        CHECK_MSG(got == k, "class of %zu is %u, expected %u", n, got, k);
        CHECK(((size_t)1 << got) >= n && (got == min_k || ((size_t)1 << (got - 1)) < n));
    }
    CHECK(tls_size_class_class((size_t)1 << 31) == 31);
    CHECK(tls_size_class_class(((size_t)1 << 31) + 1) == 32);
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    CHECK(am_alloc(h, ((size_t)1 << 31) + 1) == NULL); /* beyond the 32 classes */
    am_destroy(h);
}

static void test_freed_blocks_come_back_lifo_per_class(void) {
    LAYOUT_TEST();
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    char *a = am_alloc(h, 24);  /* class 5 */
    char *b = am_alloc(h, 30);  /* class 5 */
    char *c = am_alloc(h, 100); /* class 7 */
    char *d = am_alloc(h, 9);   /* class 4 */
    CHECK(a && b && c && d);
    /* carved one after the other from the same block */
    CHECK(b == a + 32 && c == b + 32 && d == c + 128);
    am_free(h, a, 24);
    am_free(h, b, 30);
    am_free(h, c, 100);
    CHECK(am_alloc(h, 17) == b); /* newest first */
    CHECK(am_alloc(h, 32) == a);
    char *e = am_alloc(h, 16); /* class 4 is empty: carved, not c */
    CHECK(e == d + 16);
    CHECK(am_alloc(h, 65) == c);
    am_destroy(h);
}

/* An empty class carves from the current block; a class bigger than what is
 * left starts a new block of max(2^k, block size) and abandons the rest. */
static void test_blocks_are_carved_and_abandoned(void) {
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    CHECK(reserved_of(h) == 0);
    char *p = am_alloc(h, 1000);
    CHECK(p != NULL);
    size_t one = reserved_of(h);
    CHECK_MSG(one >= AM_TSC_BLOCK_BYTES && one <= AM_TSC_BLOCK_BYTES + 64, "first block %zu bytes", one);
    /* 64 KiB - 1 KiB left: a 64 KiB class does not fit, so a new block */
    char *q = am_alloc(h, 40000);
    CHECK(q != NULL);
    CHECK(reserved_of(h) > 2 * AM_TSC_BLOCK_BYTES && reserved_of(h) <= 2 * AM_TSC_BLOCK_BYTES + 128);
    /* the old block's tail is not used again: the next small block is in the new one */
    char *r = am_alloc(h, 1000);
    CHECK(r != p + 1024);
    /* a request bigger than the block size gets a block of its own class */
    size_t before = reserved_of(h);
    CHECK(am_alloc(h, 200000) != NULL);
    CHECK(reserved_of(h) - before >= 262144 && reserved_of(h) - before <= 262144 + 64);
    am_destroy(h);
}

static void test_realloc_within_class_stays(void) {
    LAYOUT_TEST();
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    unsigned char *p = am_alloc(h, 33);
    CHECK(p != NULL);
    for (int i = 0; i < 33; i++) p[i] = (unsigned char)(i * 7);
    CHECK(am_realloc(h, p, 33, 64) == p);
    CHECK(am_realloc(h, p, 64, 40) == p);
    unsigned char *q = am_realloc(h, p, 40, 65);
    CHECK(q != NULL && q != p);
    for (int i = 0; i < 33; i++) CHECK(q[i] == (unsigned char)(i * 7));
    CHECK(am_alloc(h, 50) == p); /* the old block went back to its class */
    am_destroy(h);
}

static void test_aligned_blocks_return_to_their_class(void) {
    LAYOUT_TEST();
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    for (size_t align = 32; align <= 4096; align *= 2) {
        char *p = am_alloc_aligned(h, 100, align);
        CHECK(p != NULL && ((uintptr_t)p & (align - 1)) == 0);
        memset(p, 3, 100);
        am_free_aligned(h, p, 100, align);
        /* the underlying block is the head of class(100 + align) again */
        char *u = am_alloc(h, 100 + align);
        CHECK(u != NULL && u < p && p + 100 <= u + (100 + align));
        am_free(h, u, 100 + align);
    }
    am_destroy(h);
}

static void test_reset_and_destroy_give_everything_back(void) {
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    for (int i = 0; i < 100; i++) CHECK(am_alloc(h, 3000) != NULL);
    CHECK(reserved_of(h) > 4 * AM_TSC_BLOCK_BYTES);
    am_reset(h);
    CHECK(reserved_of(h) == 0);
    am_stats s;
    am_get_stats(h, &s);
    CHECK(s.reserved_peak > 4 * AM_TSC_BLOCK_BYTES);
    CHECK(am_alloc(h, 3000) != NULL);
    am_destroy(h); /* everything: ASan's leak check would say otherwise */
}

static void test_limit_per_heap(void) {
    LAYOUT_TEST();
    const size_t limit = 256 * 1024;
    am_heap *a = new_heap(limit), *b = new_heap(limit);
    CHECK(a && b);
    size_t got_a = 0, got_b = 0;
    while (am_alloc(a, 4096)) got_a++;
    CHECK(reserved_of(a) <= limit);
    CHECK_MSG(got_a >= 60, "only %zu blocks of 4 KiB under a 256 KiB limit", got_a);
    while (am_alloc(b, 4096)) got_b++;
    CHECK_MSG(got_b == got_a, "the second heap got %zu blocks, the first %zu", got_b, got_a);
    CHECK(am_alloc(a, (size_t)1 << 17) == NULL);
    am_destroy(a);
    am_destroy(b);
}

/* ---- threads ---- */

typedef struct job {
    am_heap *main_heap;   /* a heap of the main thread, only looked at */
    am_heap *h;           /* the heap this thread creates (and may leave) */
    int destroy;          /* destroy it before ending */
    uint64_t seed;
    char *first;          /* first block of class 6 it got */
    size_t reserved;      /* its heap's reservation before ending */
    int owned_own, owned_main;
    const char *err;
} job;

static void worker(void *arg) {
    job *j = arg;
    j->h = new_heap(0);
    if (!j->h) { j->err = "heap could not be created"; return; }
    j->owned_own = tls_size_class_owned(j->h);
    j->owned_main = tls_size_class_owned(j->main_heap);
    j->first = am_alloc(j->h, 64);
    /* random alloc/free with patterns; another thread does the same at once */
    enum { SLOTS = 256 };
    unsigned char *p[SLOTS] = {0};
    size_t n[SLOTS];
    uint64_t rng = j->seed;
    for (int i = 0; i < 200000 && !j->err; i++) {
        int s = (int)am_rand_below(&rng, SLOTS);
        if (!p[s]) {
            n[s] = 1 + (size_t)am_rand_below(&rng, 300);
            p[s] = am_alloc(j->h, n[s]);
            if (!p[s]) { j->err = "alloc returned NULL"; break; }
            memset(p[s], (int)(j->seed + (uint64_t)s) & 0xff, n[s]);
        } else {
            for (size_t k = 0; k < n[s]; k++)
                if (p[s][k] != (unsigned char)((j->seed + (uint64_t)s) & 0xff)) { j->err = "block changed"; break; }
            am_free(j->h, p[s], n[s]);
            p[s] = NULL;
        }
    }
    j->reserved = reserved_of(j->h);
    if (j->destroy) {
        am_destroy(j->h);
        j->h = NULL;
    }
}

/* Two threads, each with its own heap, at the same time: neither sees the
 * other's blocks, and neither takes the blocks the main thread freed. */
static void test_threads_have_their_own_heaps(void) {
    am_heap *m = new_heap(0);
    CHECK(m != NULL);
    char *mine = am_alloc(m, 64);
    CHECK(mine != NULL);
    am_free(m, mine, 64); /* on the main heap's class-6 list */
    CHECK(tls_size_class_owned(m));
    job j[2];
    am_thread *t[2];
    for (int i = 0; i < 2; i++) {
        memset(&j[i], 0, sizeof j[i]);
        j[i].main_heap = m;
        j[i].destroy = 1;
        j[i].seed = 10 + (uint64_t)i;
        t[i] = am_thread_start(worker, &j[i]);
        CHECK(t[i] != NULL);
    }
    for (int i = 0; i < 2; i++) am_thread_join(t[i]);
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(j[i].err == NULL, "thread %d: %s", i, j[i].err);
        CHECK(j[i].owned_own == 1 && j[i].owned_main == 0);
        CHECK(j[i].first != NULL && j[i].first != mine);
    }
    CHECK_MSG(am_alloc(m, 64) == mine, "the main heap's freed block was taken");
    am_destroy(m);
}

/* A heap left alive when its thread ends has its blocks freed by the
 * thread-exit hook; another thread may then read its usage and destroy it. */
static void test_blocks_are_returned_at_thread_exit(void) {
    am_heap *m = new_heap(0);
    CHECK(m != NULL);
    job j;
    memset(&j, 0, sizeof j);
    j.main_heap = m;
    j.destroy = 0;
    j.seed = 30;
    am_thread *t = am_thread_start(worker, &j);
    CHECK(t != NULL);
    am_thread_join(t);
    CHECK_MSG(j.err == NULL, "%s", j.err);
    CHECK(j.h != NULL);
    CHECK(j.reserved >= AM_TSC_BLOCK_BYTES);
    am_stats s;
    am_get_stats(j.h, &s);
    CHECK_MSG(s.bytes_reserved == 0, "%zu bytes still reserved after the thread ended", s.bytes_reserved);
    CHECK(s.reserved_peak >= j.reserved);
    CHECK(!tls_size_class_owned(j.h));
    am_destroy(j.h);
    am_destroy(m);
}

static const am_test tests[] = {
    {"class_of_every_size", test_class_of_every_size},
    {"freed_blocks_come_back_lifo_per_class", test_freed_blocks_come_back_lifo_per_class},
    {"blocks_are_carved_and_abandoned", test_blocks_are_carved_and_abandoned},
    {"realloc_within_class_stays", test_realloc_within_class_stays},
    {"aligned_blocks_return_to_their_class", test_aligned_blocks_return_to_their_class},
    {"reset_and_destroy_give_everything_back", test_reset_and_destroy_give_everything_back},
    {"limit_per_heap", test_limit_per_heap},
    {"threads_have_their_own_heaps", test_threads_have_their_own_heaps},
    {"blocks_are_returned_at_thread_exit", test_blocks_are_returned_at_thread_exit},
    {NULL, NULL}};
#else
static const am_test tests[] = {{NULL, NULL}};
#endif

int main(int argc, char **argv) { return am_run_tests("tls_size_class[" AM_ROW_NAME "]", tests, argc, argv); }
