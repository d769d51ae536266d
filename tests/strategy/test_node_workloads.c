/* test_node_workloads.c: the list and map workloads (the 2009 Boost monotonic
 * comparison's thrash_pool_sort_list_int and thrash_pool_map_list_unaligned, and
 * list_create, list_dupe, list_iterate, map_erase) under each strategy: checksum equal
 * to the oracle, the allocations each one is meant to make, every byte returned,
 * and out of memory reported and cleaned up wherever it strikes. */
#include <stdlib.h>
#include <string.h>
#include "checksum.h"
#include "container_util.h"

static const char *const names[] = {"thrash_pool_sort_list_int", "thrash_pool_map_list_unaligned",
                                    "list_create", "list_dupe", "list_iterate", "map_erase", NULL};

static void job_init(am_job *job, size_t size, uint64_t seed) {
    memset(job, 0, sizeof *job);
    job->size = size;
    job->seed = seed;
    job->threads = 1;
    am_options_default(&job->options);
}

/* one repetition on h; the caller resets where the cell would */
static uint64_t run_once(const am_workload *w, am_heap *h, size_t size, uint64_t seed, int *status) {
    am_job job;
    job_init(&job, size, seed);
    *status = -1;
    uint64_t sum = w->run(h, &job, status);
    return sum;
}

static void after_rep(am_heap *h) {
    if (!AM_FREE_REUSES) am_reset(h);
}

static uint64_t oracle(const am_workload *w, size_t size, uint64_t seed) {
    am_job job;
    job_init(&job, size, seed);
    return w->oracle(&job);
}

static int index_of(const char *name) {
    for (int i = 0; am_workloads[i]; i++)
        if (strcmp(am_workloads[i]->name, name) == 0) return i;
    return -1;
}

static void test_registered(void) {
    int last = index_of("thrash_pool");
    CHECK(last >= 0);
    for (int i = 0; names[i]; i++) {
        const am_workload *w = am_workload_find(names[i]);
        CHECK_MSG(w != NULL, "%s is not registered", names[i]);
        int at = index_of(names[i]);
        CHECK_MSG(at > last, "%s is out of workloads.def's order", names[i]);
        last = at;
        CHECK(w->sizes == am_sizes_linear && w->log_sizes == am_sizes_log);
        CHECK(!w->threaded && w->run && w->oracle && w->summary && *w->summary);
        CHECK(w->reps(10) >= 1 && w->reps(1810) >= 1 && w->reps(1000000) >= 1);
        CHECK(w->reps(10) >= w->reps(1810) && w->reps(10) <= 1000);
        double per_elem = w->ops(1810) / 1810.0;
        double want = strcmp(names[i], "map_erase") == 0 ? 1.5 : strcmp(names[i], "list_iterate") == 0 ? 20 : 1;
        CHECK_MSG(per_elem > want - 0.01 && per_elem < want + 0.01, "%s: ops(1810) = %g", names[i], w->ops(1810));
    }
}

static void test_matches_oracle(void) {
    static const size_t sizes[] = {1, 2, 10, 11, 99, 810, 0};
    am_heap *h = new_heap();
    CHECK(h);
    for (int i = 0; names[i]; i++) {
        const am_workload *w = am_workload_find(names[i]);
        CHECK(w);
        for (int s = 0; sizes[s]; s++) {
            for (uint64_t seed = 1; seed <= 3; seed++) {
                int status;
                uint64_t got = run_once(w, h, sizes[s], seed, &status);
                CHECK_MSG(status == AM_OK, "%s size %zu seed %llu: status %d", names[i], sizes[s],
                          (unsigned long long)seed, status);
                CHECK_MSG(got == oracle(w, sizes[s], seed), "%s size %zu seed %llu: checksum differs",
                          names[i], sizes[s], (unsigned long long)seed);
                CHECK_MSG(live_bytes(h) == 0, "%s size %zu: %zu bytes live after the repetition", names[i],
                          sizes[s], live_bytes(h));
                after_rep(h);
            }
        }
    }
    am_destroy(h);
}

/* the checksum follows the data: another seed, another sum */
static void test_checksum_follows_seed(void) {
    for (int i = 0; names[i]; i++) {
        const am_workload *w = am_workload_find(names[i]);
        CHECK_MSG(oracle(w, 810, 1) != oracle(w, 810, 2), "%s: seeds 1 and 2 agree", names[i]);
    }
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* distinct values among n draws: of am_value_below(keys), or (keys == 0) of
 * the 31-bit values map_erase draws */
static size_t distinct_draws(uint64_t seed, size_t n, uint64_t keys) {
    int *v = malloc(n * sizeof *v);
    if (!v) return 0;
    uint64_t x = am_values_start(seed);
    for (size_t i = 0; i < n; i++) v[i] = keys ? (int)am_value_below(&x, keys) : am_value(&x);
    qsort(v, n, sizeof *v, cmp_int);
    size_t d = 0;
    for (size_t i = 0; i < n; i++) d += i == 0 || v[i] != v[i - 1];
    free(v);
    return d;
}

/* each workload makes the allocations it says it makes, and frees them all */
static void test_allocation_counts(void) {
    const size_t n = 810;
    const uint64_t seed = 7;
    am_heap *h = new_heap();
    CHECK(h);
    for (int i = 0; names[i]; i++) {
        const am_workload *w = am_workload_find(names[i]);
        size_t want;
        if (!strcmp(names[i], "thrash_pool_map_list_unaligned")) want = n + distinct_draws(seed, n, n / 10 + 1);
        else if (!strcmp(names[i], "map_erase")) want = distinct_draws(seed, n, 0);
        else if (!strcmp(names[i], "list_dupe") || !strcmp(names[i], "list_iterate")) want = 2 * n;
        else want = n;
        am_stats before, after;
        am_get_stats(h, &before);
        int status;
        run_once(w, h, n, seed, &status);
        am_get_stats(h, &after);
        CHECK(status == AM_OK);
        CHECK_MSG(after.allocs - before.allocs == want, "%s: %llu allocations, expected %zu", names[i],
                  (unsigned long long)(after.allocs - before.allocs), want);
        CHECK(after.frees - before.frees == want);
        after_rep(h);
    }
    am_destroy(h);
}

/* The smallest of a few limits under which a fresh heap serves the small
 * repetition (size 10): pools take whole blocks of chunks, and DEBUG=1
 * enlarges every chunk, so 4 KiB is not always enough. NULL if none. */
static am_heap *heap_for_small_run(const am_workload *w, size_t *limit_out) {
    size_t limit = 0;
    am_heap *h = new_limited_heap(&limit);
    while (h) {
        int status;
        run_once(w, h, 10, 3, &status);
        am_destroy(h);
        am_options o;
        am_options_default(&o);
        o.limit = limit;
        if (status == AM_OK) {
            *limit_out = limit;
            return am_create(&o);
        }
        if (limit >= (1u << 20)) break;
        o.limit = limit *= 4;
        h = am_create(&o);
    }
    return NULL;
}

/* A heap far too small: every workload says so, returns every block, and the
 * heap still serves a small repetition afterwards. */
static void test_out_of_memory(void) {
    for (int i = 0; names[i]; i++) {
        const am_workload *w = am_workload_find(names[i]);
        size_t limit = 0;
        am_heap *h = heap_for_small_run(w, &limit);
        CHECK_MSG(h, "%s: no limit up to 1 MiB serves size 10", names[i]);
        size_t size = limit / 8 + 810; /* every element costs more than 8 bytes */
        int status;
        run_once(w, h, size, 3, &status);
        CHECK_MSG(status == AM_ERR_OOM, "%s at size %zu under a %zu-byte limit: status %d", names[i], size, limit,
                  status);
        CHECK_MSG(live_bytes(h) == 0, "%s: %zu bytes live after running out", names[i], live_bytes(h));
        after_rep(h);
        uint64_t got = run_once(w, h, 10, 3, &status);
        CHECK_MSG(status == AM_OK && got == oracle(w, 10, 3), "%s: the heap is unusable after OOM", names[i]);
        CHECK(live_bytes(h) == 0);
        am_destroy(h);
    }
}

/* Limits from tiny to enough: the allocation that fails moves through every
 * phase of the workload (tree node or list node, first list or second). Each
 * run either succeeds with the right checksum or reports OOM with nothing
 * live. Where the strategy counts bytes exactly (system), every allocation
 * gets its turn to fail. */
static void test_out_of_memory_anywhere(void) {
    const size_t size = 40;
    for (int i = 0; names[i]; i++) {
        const am_workload *w = am_workload_find(names[i]);
        uint64_t want = oracle(w, size, 5);
        int ok = 0;
        for (size_t limit = 16; limit <= (1u << 20) && !ok; limit += limit < 8192 ? 16 : limit / 4) {
            am_options o;
            am_options_default(&o);
            o.limit = limit;
            am_heap *h = am_create(&o);
            if (!h) continue;
            int status;
            uint64_t got = run_once(w, h, size, 5, &status);
            size_t live = live_bytes(h);
            am_destroy(h);
            CHECK_MSG(status == AM_OK || status == AM_ERR_OOM, "%s limit %zu: status %d", names[i], limit, status);
            CHECK_MSG(live == 0, "%s limit %zu: %zu bytes live after status %d", names[i], limit, live, status);
            if (status == AM_OK) {
                CHECK_MSG(got == want, "%s limit %zu: checksum differs", names[i], limit);
                ok = 1;
            }
        }
        CHECK_MSG(ok, "%s never succeeded at size %zu", names[i], size);
    }
}

static const am_test tests[] = {
    {"registered", test_registered},
    {"matches_oracle", test_matches_oracle},
    {"checksum_follows_seed", test_checksum_follows_seed},
    {"allocation_counts", test_allocation_counts},
    {"out_of_memory", test_out_of_memory},
    {"out_of_memory_anywhere", test_out_of_memory_anywhere},
    {NULL, NULL}};

int main(int argc, char **argv) { return am_run_tests("node_workloads/" AM_ROW_NAME, tests, argc, argv); }
