/* test_heap_accounting.c: the rest of the contract of allocators/allocator.h
 * for one strategy row (compiled once per row, with AM_STATS=1, as
 * test_allocator.c): statistics against a shadow count, the byte limit,
 * randomised stress, threads sharing one heap or owning one each, and heaps
 * that do not touch each other. */
#include "blocks.h"

/* ---- statistics against a shadow count ---- */

typedef struct shadow {
    uint64_t requested, allocs, frees;
    size_t live, peak;
} shadow;

static void shadow_alloc(shadow *s, size_t n) {
    s->requested += n;
    s->live += n;
    s->allocs++;
    if (s->live > s->peak) s->peak = s->live;
}

static void shadow_free(shadow *s, size_t n) {
    s->live -= n;
    s->frees++;
}

static int stats_match(am_heap *h, const shadow *w) {
    am_stats s = stats_of(h);
    return s.bytes_requested == w->requested && s.bytes_live == w->live && s.bytes_peak == w->peak &&
           s.allocs == w->allocs && s.frees == w->frees;
}

typedef struct sblock {
    void *p;
    size_t n;     /* bytes, or elements for arrays */
    size_t extra; /* alignment for aligned blocks, element size for arrays */
    int kind;     /* 0 plain, 1 aligned, 2 array */
} sblock;

static size_t sbytes(const sblock *b) { return b->kind == 2 ? b->n * b->extra : b->n; }

static void sfree(am_heap *h, sblock *b) {
    if (b->kind == 0) am_free(h, b->p, b->n);
    else if (b->kind == 1) am_free_aligned(h, b->p, b->n, b->extra);
    else am_free_array(h, b->p, b->n, b->extra);
    b->p = NULL;
}

static void test_stats_match_shadow(void) {
    enum { SLOTS = 256, OPS = 20000 };
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    shadow w;
    memset(&w, 0, sizeof w);
    CHECK_MSG(stats_match(h, &w), "a new heap's statistics are not zero");
    sblock b[SLOTS];
    memset(b, 0, sizeof b);
    uint64_t rng = 18;
    for (int i = 0; i < OPS; i++) {
        sblock *x = &b[am_rand_below(&rng, SLOTS)];
        unsigned op = (unsigned)am_rand_below(&rng, 100);
        if (op == 0) {
            /* reset: where it frees live blocks the count drops to zero, else free first */
            for (int k = 0; k < SLOTS; k++) {
                if (!b[k].p) continue;
                if (AM_RESET_FREES_LIVE) b[k].p = NULL;
                else { shadow_free(&w, sbytes(&b[k])); sfree(h, &b[k]); }
            }
            am_reset(h);
            if (AM_RESET_FREES_LIVE) w.live = 0;
        } else if (op == 1) {
            /* a failed allocation counts nothing */
            CHECK(am_alloc(h, SIZE_MAX / 2) == NULL);
        } else if (!x->p) {
            size_t n = 1 + (size_t)am_rand_below(&rng, 1000);
            x->kind = (int)am_rand_below(&rng, 3);
            x->n = n;
            if (x->kind == 0) {
                x->p = op < 50 ? am_alloc(h, n) : am_realloc(h, NULL, 0, n);
            } else if (x->kind == 1) {
                x->extra = (size_t)32 << am_rand_below(&rng, 5);
                x->p = am_alloc_aligned(h, n, x->extra);
            } else {
                x->extra = 1 + (size_t)am_rand_below(&rng, 24);
                x->n = 1 + n / 8;
                x->p = am_alloc_array(h, x->n, x->extra);
            }
            CHECK(x->p != NULL);
            shadow_alloc(&w, sbytes(x));
        } else if (op < 60 && x->kind != 1) {
            /* a resize counts as the free of the old block and the alloc of the new */
            size_t old = sbytes(x);
            size_t n = 1 + (size_t)am_rand_below(&rng, 1000);
            void *q;
            if (x->kind == 0) q = am_realloc(h, x->p, x->n, n);
            else { n = 1 + n / 8; q = am_realloc_array(h, x->p, x->n, n, x->extra); }
            CHECK(q != NULL);
            x->p = q;
            x->n = n;
            shadow_free(&w, old);
            shadow_alloc(&w, sbytes(x));
        } else {
            shadow_free(&w, sbytes(x));
            sfree(h, x);
        }
        CHECK_MSG(stats_match(h, &w), "statistics differ from the shadow count after op %d", i);
    }
    for (int k = 0; k < SLOTS; k++)
        if (b[k].p) { shadow_free(&w, sbytes(&b[k])); sfree(h, &b[k]); }
    am_stats s = stats_of(h);
    CHECK(stats_match(h, &w));
    CHECK(s.bytes_live == 0);
    CHECK(s.allocs > OPS / 4);
    am_destroy(h);
}

/* ---- byte limit ---- */

/* the byte-limit test's limit, and the alignment of the other size it asks for */
enum { BYTE_LIMIT = 64 * 1024, WIDE = 256 };

static void test_byte_limit(void) {
    const size_t limit = BYTE_LIMIT, n = 64;
    const size_t most = limit / n;
    block *b = calloc(most + 1, sizeof *b);
    CHECK(b != NULL);
    am_heap *h = new_heap(limit);
    CHECK_MSG(h != NULL, "a heap with a %zu-byte limit could not be created", limit);
    CHECK_MSG(am_alloc(h, limit + 1) == NULL, "a block larger than the limit was granted");
    size_t count = 0;
    while (count <= most && take(h, &b[count], n)) count++;
    /* the limit counts what was taken from the system, which is at least what was asked */
    CHECK_MSG(count <= most, "%zu blocks of %zu bytes granted under a %zu-byte limit", count, n, limit);
    CHECK_MSG(count * n >= limit / 4, "only %zu blocks of %zu bytes fit in %zu bytes", count, n, limit);
    am_stats s = stats_of(h);
    CHECK_MSG(s.reserved_peak <= limit, "reserved %zu bytes under a %zu-byte limit", s.reserved_peak, limit);
    CHECK(am_alloc(h, n) == NULL); /* still exhausted: asking again is fine */
    /* Blocks of another size and alignment: none where one arena ran out.
     * Where pools grow apart, that size's pool may still take a chunk the
     * limit leaves room for: it runs out too, within the limit, and stays out. */
    void *wide[BYTE_LIMIT / WIDE + 1];
    size_t nwide = 0;
    while (AM_POOLS_GROW_APART && nwide <= limit / WIDE && (wide[nwide] = am_alloc_aligned(h, n, WIDE)) != NULL) {
        CHECK(aligned_to(wide[nwide], WIDE));
        nwide++;
    }
    CHECK_MSG(nwide <= limit / WIDE, "%zu blocks aligned to %d granted under a %zu-byte limit", nwide, WIDE, limit);
    CHECK(am_alloc_aligned(h, n, WIDE) == NULL);
    CHECK_MSG(stats_of(h).reserved_peak <= limit, "reserved %zu bytes under a %zu-byte limit",
              stats_of(h).reserved_peak, limit);
    for (size_t i = 0; i < count; i++)
        CHECK_MSG(intact(b[i].p, n, b[i].key), "block %zu changed after the heap ran out", i);
    /* a failed realloc leaves the block as it was */
    CHECK(am_realloc(h, b[0].p, n, limit) == NULL);
    CHECK(intact(b[0].p, n, b[0].key));
    for (size_t i = 0; i < nwide; i++) am_free_aligned(h, wide[i], n, WIDE);

    if (AM_FREE_REUSES) {
        for (size_t i = 0; i < count; i++) CHECK(give(h, &b[i]));
        for (size_t i = 0; i < count; i++)
            CHECK_MSG(take(h, &b[i], n), "after freeing all, alloc %zu of %zu failed", i, count);
    }
    CHECK(reset_heap(h, b, count));
    for (size_t i = 0; i < count; i++)
        CHECK_MSG(take(h, &b[i], n), "after reset, alloc %zu of %zu failed", i, count);
    CHECK(give_all(h, b, count));
    am_destroy(h);
    free(b);

    /* a huge request fails cleanly with and without a limit */
    h = new_heap(0);
    CHECK(h != NULL);
    CHECK(am_alloc(h, SIZE_MAX / 2) == NULL);
    CHECK(am_alloc_aligned(h, SIZE_MAX / 2, 64) == NULL);
    /* sizes that wrap to a small block when rounded up to the alignment */
    CHECK(am_alloc_aligned(h, SIZE_MAX - 10, 64) == NULL);
    CHECK(am_alloc_aligned(h, SIZE_MAX - 100, 4096) == NULL);
    CHECK(am_alloc(h, SIZE_MAX - 2) == NULL);
    CHECK(am_alloc_array(h, SIZE_MAX / 16, 8) == NULL);
    block x;
    CHECK(take(h, &x, 100));
    CHECK(am_realloc(h, x.p, 100, SIZE_MAX / 2) == NULL);
    CHECK(give(h, &x));
    CHECK(stats_of(h).bytes_live == 0);
    am_destroy(h);
}

/* ---- randomised stress against a shadow record ---- */

enum { STRESS_SLOTS = 4096, STRESS_RESET_EVERY = 1 << 16 };

/* Mixed alloc / free / realloc / reset over one heap; returns NULL or what went
 * wrong. check_stats compares the live-byte shadow with the heap's counters,
 * which only one thread may do. */
static const char *stress(am_heap *h, uint64_t seed, long ops, int check_stats) {
    block *s = calloc(STRESS_SLOTS, sizeof *s);
    if (!s) return "out of memory for the shadow";
    const char *err = NULL;
    size_t live = 0;
    for (long i = 0; i < ops && !err; i++) {
        uint64_t r = am_rand(&seed);
        block *b = &s[r % STRESS_SLOTS];
        unsigned op = (unsigned)(r >> 32) % 16;
        uint64_t r2 = am_rand(&seed);
        size_t n = (r2 & 63) ? 1 + (size_t)((r2 >> 8) % 512) : 512 + (size_t)((r2 >> 8) % 65536);
        if (!b->p) {
            if (!take(h, b, n)) err = "alloc returned NULL";
            else live += n;
        } else if (op < 10) {
            live -= b->n;
            if (!give(h, b)) err = "a block changed while live (checked at free)";
        } else if (op < 14) {
            unsigned char *q = am_realloc(h, b->p, b->n, n);
            if (!q) { err = "realloc returned NULL"; break; }
            if (!intact(q, b->n < n ? b->n : n, b->key)) err = "realloc lost contents";
            live = live - b->n + n;
            b->p = q;
            b->n = n;
            b->key = key_of(q, n);
            fill(q, n, b->key);
        } else if (!intact(b->p, b->n, b->key)) {
            err = "a block changed while live";
        }
        if ((i + 1) % STRESS_RESET_EVERY == 0) {
            if (!reset_heap(h, s, STRESS_SLOTS)) err = "a block changed before reset";
            live = 0;
        }
        if (check_stats && (i & 255) == 0 && stats_of(h).bytes_live != live)
            err = "bytes_live differs from the shadow";
    }
    for (size_t i = 0; i < STRESS_SLOTS; i++)
        if (s[i].p && !give(h, &s[i]) && !err) err = "a block changed while live (final free)";
    if (!err && check_stats && stats_of(h).bytes_live != 0) err = "bytes_live not 0 after freeing all";
    free(s);
    return err;
}

static void test_random_stress(void) {
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    const char *err = stress(h, 19, 1000000, 1);
    CHECK_MSG(err == NULL, "stress: %s", err);
    am_destroy(h);
}

/* ---- threads ---- */

enum { THREADS = 3 };

typedef struct shared_job {
    am_heap *h;
    uint64_t seed;
    long ops;
    block *left;      /* blocks left live for another thread to free */
    size_t left_count;
    const char *err;
} shared_job;

/* On a shared heap the AM_STATS counters (plain integers, one set per heap)
 * would race, so this calls the strategy itself: the contract's S_alloc/S_free. */
static void shared_worker(void *arg) {
    shared_job *j = arg;
    enum { SLOTS = 512 };
    block *s = calloc(SLOTS, sizeof *s);
    if (!s) { j->err = "out of memory for the shadow"; return; }
    uint64_t seed = j->seed;
    for (long i = 0; i < j->ops && !j->err; i++) {
        uint64_t r = am_rand(&seed);
        block *b = &s[r % SLOTS];
        size_t n = 1 + (size_t)((r >> 32) % 700);
        if (!b->p) {
            b->p = AM_S(_alloc)(j->h, n);
            if (!b->p) { j->err = "alloc returned NULL"; break; }
            b->n = n;
            b->key = key_of(b->p, n);
            fill(b->p, n, b->key);
        } else {
            if (!intact(b->p, b->n, b->key)) j->err = "a block changed while live";
            AM_S(_free)(j->h, b->p, b->n);
            b->p = NULL;
        }
    }
    j->left = s;
    j->left_count = SLOTS;
}

static void test_threads_share_one_heap(void) {
    if (!AM_THREAD_SAFE) return; /* see test_threads_own_heaps */
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    shared_job jobs[THREADS];
    am_thread *t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].h = h;
        jobs[i].seed = 100 + (uint64_t)i;
        jobs[i].ops = 300000;
        t[i] = am_thread_start(shared_worker, &jobs[i]);
        CHECK(t[i] != NULL);
    }
    for (int i = 0; i < THREADS; i++) am_thread_join(t[i]);
    for (int i = 0; i < THREADS; i++) CHECK_MSG(jobs[i].err == NULL, "thread %d: %s", i, jobs[i].err);
    /* what each thread left live, another thread (this one) frees */
    for (int i = 0; i < THREADS; i++) {
        for (size_t k = 0; k < jobs[i].left_count; k++) {
            block *b = &jobs[i].left[k];
            if (!b->p) continue;
            CHECK_MSG(intact(b->p, b->n, b->key), "thread %d's block changed after it ended", i);
            AM_S(_free)(h, b->p, b->n);
        }
        free(jobs[i].left);
    }
    am_destroy(h);
}

typedef struct own_job {
    uint64_t seed;
    const char *err;
} own_job;

static void own_heap_worker(void *arg) {
    own_job *j = arg;
    am_heap *h = new_heap(0);
    if (!h) { j->err = "heap could not be created"; return; }
    j->err = stress(h, j->seed, 150000, 1);
    am_destroy(h);
}

/* The per-thread-heap design: each thread creates its own heap and uses only
 * it. Valid for every strategy, thread safe or not, whose heaps are apart. */
static void test_threads_own_heaps(void) {
    if (AM_HEAPS_SHARE_STATE && !AM_THREAD_SAFE)
        CHECK_SKIP("the heaps are handles onto one set of pools (" AM_STR(AM_STRATEGY) "_HEAPS_SHARE_STATE) "
                   "that is not thread safe: one heap per thread does not separate them");
    if (AM_HEAPS_SHARE_STATE)
        CHECK_SKIP("each thread resets its heap, which purges the pools all heaps share (" AM_STR(AM_STRATEGY)
                   "_HEAPS_SHARE_STATE, Boost's purge_memory) under the other threads' live blocks; "
                   "threads_share_one_heap checks the locking");
    own_job jobs[THREADS];
    am_thread *t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i].seed = 200 + (uint64_t)i;
        jobs[i].err = NULL;
        t[i] = am_thread_start(own_heap_worker, &jobs[i]);
        CHECK(t[i] != NULL);
    }
    for (int i = 0; i < THREADS; i++) am_thread_join(t[i]);
    for (int i = 0; i < THREADS; i++) CHECK_MSG(jobs[i].err == NULL, "thread %d: %s", i, jobs[i].err);
}

/* Two heaps in one thread keep their blocks and counts apart. Where heaps
 * share one state (S_HEAPS_SHARE_STATE) a reset through b would purge a's
 * blocks too, by design: b's blocks are freed one by one instead, and the
 * destruction of b must still leave a's alone. */
static void test_heaps_are_independent(void) {
    enum { N = 500 };
    am_heap *a = new_heap(0), *c = new_heap(0);
    CHECK(a != NULL && c != NULL);
    block ba[N], bc[N];
    uint64_t rng = 20;
    size_t live_a = 0;
    for (int i = 0; i < N; i++) {
        size_t n = 1 + (size_t)am_rand_below(&rng, 600);
        CHECK(take(a, &ba[i], n));
        live_a += n;
        CHECK(take(c, &bc[i], 1 + (size_t)am_rand_below(&rng, 600)));
    }
    CHECK(stats_of(a).bytes_live == live_a);
    CHECK(stats_of(a).allocs == N && stats_of(c).allocs == N);
    if (AM_HEAPS_SHARE_STATE) {
        for (int i = 0; i < N; i++) CHECK(give(c, &bc[i]));
    } else {
        CHECK(reset_heap(c, bc, N));
    }
    am_destroy(c);
    for (int i = 0; i < N; i++) CHECK_MSG(intact(ba[i].p, ba[i].n, ba[i].key), "block %d of heap a changed "
                                          "when heap b was reset and destroyed", i);
    CHECK(stats_of(a).bytes_live == live_a);
    CHECK(give_all(a, ba, N));
    am_destroy(a);
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"stats_match_shadow", test_stats_match_shadow},
        {"byte_limit", test_byte_limit},
        {"random_stress", test_random_stress},
        {"threads_share_one_heap", test_threads_share_one_heap},
        {"threads_own_heaps", test_threads_own_heaps},
        {"heaps_are_independent", test_heaps_are_independent},
        {NULL, NULL}};
    return am_run_tests("heap_accounting[" AM_ROW_NAME "]", tests, argc, argv);
}
