/* test_stress.c: deterministic pseudo-random allocate/free/realloc traffic in
 * the manner of mimalloc's test-stress: every block is filled with a pattern
 * derived from its index and checked when freed, so overlapping blocks or lost
 * contents fail here even without a sanitizer. The thread_* tests are what the
 * ThreadSanitizer stage of make check runs. Not a benchmark. */
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "check.h"

#define SLOTS 256

typedef struct block { unsigned char *p; size_t n; uint32_t tag; } block;

static uint64_t next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned char pat(uint32_t tag, size_t i) { return (unsigned char)(tag * 31u + i * 7u + 1u); }

static void fill(block *b) {
    for (size_t i = 0; i < b->n; i++) b->p[i] = pat(b->tag, i);
}

static int intact(const block *b, size_t upto) {
    for (size_t i = 0; i < upto; i++)
        if (b->p[i] != pat(b->tag, i)) return 0;
    return 1;
}

/* The alignment malloc owes an n-byte block: AM_MIN_ALIGN, or less for blocks
 * too small to hold a max_align_t (jemalloc, tcmalloc and mimalloc give 8-byte
 * blocks 8-byte alignment, which C allows). */
static size_t owed_align(size_t n) {
    size_t a = AM_MIN_ALIGN;
    while (a > 1 && a > n) a >>= 1;
    return a;
}

/* small sizes mostly, some large; one size only where every block must be
 * alike (fixed-size pools are created for their first request's size) */
static size_t pick_size(uint64_t *s) {
    uint64_t r = next(s) % 100;
    if (r < 70) return 1 + (size_t)(next(s) % 64);
    if (r < 95) return 65 + (size_t)(next(s) % 1000);
    return 1100 + (size_t)(next(s) % 20000);
}

/* returns 0 on success, else the step at which contents went wrong */
static long churn(am_heap *h, uint64_t seed, long steps, int use_realloc) {
    block b[SLOTS];
    memset(b, 0, sizeof b);
    uint32_t tag = (uint32_t)seed * 1000u;
    for (long step = 1; step <= steps; step++) {
        block *x = &b[next(&seed) % SLOTS];
        if (x->p) {
            if (!intact(x, x->n)) return step;
            if (use_realloc && next(&seed) % 4 == 0) {
                size_t n = pick_size(&seed);
                unsigned char *q = am_realloc(h, x->p, x->n, n);
                if (!q) continue;
                x->p = q;
                if (!intact(x, x->n < n ? x->n : n)) return step;
                x->n = n;
                fill(x);
                continue;
            }
            am_free(h, x->p, x->n);
            x->p = NULL;
        } else {
            x->n = pick_size(&seed);
            x->p = am_alloc(h, x->n);
            if (!x->p) continue; /* out of memory is allowed; crashing is not */
            if ((uintptr_t)x->p % owed_align(x->n)) return -step;
            x->tag = ++tag;
            fill(x);
        }
    }
    for (int i = 0; i < SLOTS; i++)
        if (b[i].p) {
            if (!intact(&b[i], b[i].n)) return steps + 1;
            am_free(h, b[i].p, b[i].n);
        }
    return 0;
}

static am_heap *new_heap(void) {
    am_options o;
    am_options_default(&o);
    o.initial_bytes = (size_t)64 << 20;
    return am_create(&o);
}

static void test_churn(void) {
    am_heap *h = new_heap();
    CHECK(h);
    long bad = churn(h, 1, 20000, 0);
    CHECK_MSG(bad == 0, "contents or alignment wrong at step %ld", bad);
#if AM_STATS
    am_stats s;
    am_get_stats(h, &s);
    CHECK_MSG(s.bytes_live == 0 && s.allocs == s.frees, "live %zu, %llu allocs, %llu frees", s.bytes_live,
              (unsigned long long)s.allocs, (unsigned long long)s.frees);
#endif
    am_destroy(h);
}

static void test_churn_realloc_reset(void) {
    am_heap *h = new_heap();
    CHECK(h);
    for (uint64_t round = 0; round < 4; round++) {
        long bad = churn(h, 100 + round, 5000, 1);
        CHECK_MSG(bad == 0, "round %d: contents or alignment wrong at step %ld", (int)round, bad);
        am_reset(h);
    }
    am_destroy(h);
}

/* ---- threads: one heap each, and for thread-safe strategies one shared ---- */

typedef struct job { am_heap *h; uint64_t seed; long bad; block mine[64]; } job;

static void private_heap_job(void *arg) {
    job *j = arg;
    am_heap *h = new_heap();
    if (!h) { j->bad = -1; return; }
    j->bad = churn(h, j->seed, 5000, 1);
    am_destroy(h);
}

static void test_thread_private_heaps(void) {
    if (AM_HEAPS_SHARE_STATE && !AM_THREAD_SAFE)
        CHECK_SKIP("the heaps are handles onto one set of pools (" AM_STR(AM_STRATEGY) "_HEAPS_SHARE_STATE) "
                   "that is not thread safe: one heap per thread does not separate them");
    job jobs[2];
    am_thread *t[2];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < 2; i++) {
        jobs[i].seed = 7 + (uint64_t)i;
        t[i] = am_thread_start(private_heap_job, &jobs[i]);
        CHECK(t[i]);
    }
    for (int i = 0; i < 2; i++) am_thread_join(t[i]);
    for (int i = 0; i < 2; i++) CHECK_MSG(jobs[i].bad == 0, "thread %d: bad at step %ld", i, jobs[i].bad);
}

#if AM_THREAD_SAFE
static void alloc_job(void *arg) {
    job *j = arg;
    for (uint32_t i = 0; i < 64; i++) {
        block *b = &j->mine[i];
        b->n = 8 + i * 24;
        b->tag = i;
        b->p = am_alloc(j->h, b->n);
        if (b->p) fill(b);
    }
}

static void free_job(void *arg) {
    job *j = arg;
    for (int i = 0; i < 64; i++) {
        block *b = &j->mine[i];
        if (!b->p) continue;
        if (!intact(b, b->n)) j->bad = i + 1;
        am_free(j->h, b->p, b->n);
    }
}
#endif

/* blocks allocated in one thread and freed in another (after a join, so the
 * statistics counters, which are not atomic, are not raced on) */
static void test_thread_cross_free(void) {
#if !AM_THREAD_SAFE
    CHECK_SKIP("strategy is not thread-safe (" AM_STR(AM_STRATEGY) "_THREAD_SAFE 0)");
#else
    am_heap *h = new_heap();
    CHECK(h);
    job j;
    memset(&j, 0, sizeof j);
    j.h = h;
    am_thread *a = am_thread_start(alloc_job, &j);
    CHECK(a);
    am_thread_join(a);
    am_thread *f = am_thread_start(free_job, &j);
    CHECK(f);
    am_thread_join(f);
    CHECK_MSG(j.bad == 0, "block %ld changed between threads", j.bad);
    am_destroy(h);
#endif
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"churn", test_churn},
        {"churn_realloc_reset", test_churn_realloc_reset},
        {"thread_private_heaps", test_thread_private_heaps},
        {"thread_cross_free", test_thread_cross_free},
        {NULL, NULL},
    };
    return am_run_tests("stress-" AM_ROW_NAME, tests, argc, argv);
}
