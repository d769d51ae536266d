/* test_workloads.c: every registered workload, run on this row's strategy at
 * sizes 1, the sweep's first two and its last, gives its oracle checksum,
 * returns every block it took, and fails with AM_ERR_OOM (not a crash) on a
 * heap too small for it. It does not time anything. */
#include <string.h>

#include "check.h"
#include "workload.h"

static am_heap *new_heap(am_job *job, size_t limit) {
    am_options_default(&job->options);
    job->options.limit = limit;
    return am_create(&job->options);
}

static void init_job(am_job *job, const am_workload *w, size_t size, uint64_t seed) {
    memset(job, 0, sizeof *job);
    job->size = size;
    job->seed = seed;
    job->threads = w->threaded ? 2 : 1;
}

/* a wink-out variant (`<workload>_drop`) resets the heap instead of freeing
 * each block: nothing stays live, but frees are fewer than allocations */
static int drops(const am_workload *w) {
    size_t n = strlen(w->name);
    return n > 5 && strcmp(w->name + n - 5, "_drop") == 0;
}

/* After a repetition, what the cell does between repetitions: reset where
 * free does not reuse. Every block must have been freed (or dropped) before that. */
static int check_returned(am_heap *h, const am_workload *w, size_t size, const char *when) {
    am_stats s;
    am_get_stats(h, &s);
    if (s.bytes_live != 0 || (s.allocs != s.frees && !drops(w))) {
        fprintf(stderr, "%s size %zu %s: %zu bytes live, %llu allocs, %llu frees\n", w->name, size, when,
                s.bytes_live, (unsigned long long)s.allocs, (unsigned long long)s.frees);
        return 0;
    }
    if (!AM_FREE_REUSES) am_reset(h);
    return 1;
}

static void test_checksums_match_oracle(void) {
    for (const am_workload *const *wp = am_workloads; *wp; wp++) {
        const am_workload *w = *wp;
        size_t sizes[4] = {1, w->sizes[0], w->sizes[0] ? w->sizes[1] : 0, 0};
        for (int i = 0; w->sizes[i]; i++) sizes[3] = w->sizes[i]; /* the largest of the sweep */
        uint64_t allocs = 0;
        int na = 0;
        for (int k = 0; k < 4; k++) {
            if (!sizes[k]) continue;
            am_job job;
            init_job(&job, w, sizes[k], 1);
            am_heap *h = new_heap(&job, 0);
            CHECK(h != NULL);
            for (uint64_t seed = 1; seed <= 4; seed++) {
                init_job(&job, w, sizes[k], seed);
                int status = -1;
                uint64_t got = w->run(h, &job, &status);
                if (status == AM_ERR_NA) { CHECK(job.reason && *job.reason); na = 1; break; } /* n/a on this row */
                CHECK_MSG(status == AM_OK, "%s size %zu seed %llu: status %d", w->name, sizes[k],
                          (unsigned long long)seed, status);
                uint64_t want = w->oracle(&job);
                CHECK_MSG(got == want, "%s size %zu seed %llu: checksum %llu, oracle %llu", w->name,
                          sizes[k], (unsigned long long)seed, (unsigned long long)got,
                          (unsigned long long)want);
                am_stats s;
                am_get_stats(h, &s);
                allocs = s.allocs;
                CHECK(check_returned(h, w, sizes[k], "after a repetition"));
            }
            am_destroy(h);
        }
        /* the largest small size must have used the heap (threaded workloads use their own) */
        CHECK_MSG(w->threaded || na || allocs > 0, "%s never allocated from the heap it was given", w->name);
    }
}

/* A seed changes the work: the checksums of different seeds differ somewhere. */
static void test_seed_changes_checksum(void) {
    for (const am_workload *const *wp = am_workloads; *wp; wp++) {
        const am_workload *w = *wp;
        am_job job;
        init_job(&job, w, w->sizes[0], 1);
        uint64_t first = w->oracle(&job);
        int differs = 0;
        for (uint64_t seed = 2; seed <= 8 && !differs; seed++) {
            init_job(&job, w, w->sizes[0], seed);
            differs = w->oracle(&job) != first;
        }
        CHECK_MSG(differs, "%s: the same checksum for seeds 1..8", w->name);
    }
}

/* A heap whose limit is below what the workload keeps live at once (4 KiB, or
 * half its peak where that is smaller) cannot hold it: the run reports
 * AM_ERR_OOM, and still returns what it took. The peak comes from the same run
 * on an unlimited heap; a limit counts bytes taken from the system, which are
 * at least the bytes live. */
static void test_tiny_limit_reports_oom(void) {
    /* fast_pool's singleton pools take their limit from the first live handle;
     * mmap_pressure keeps a heap (a handle) alive between runs, so a later
     * handle's limit does not hold there (documented in fast_pool.h) */
    if (AM_HEAPS_SHARE_STATE) CHECK_SKIP("heaps share one set of pools: a later heap's limit is ignored");
    for (const am_workload *const *wp = am_workloads; *wp; wp++) {
        const am_workload *w = *wp;
        size_t size = 0;
        for (int i = 0; w->sizes[i]; i++) size = w->sizes[i];
        CHECK(size > 0);
        int tried = 0, na = 0;
        for (uint64_t seed = 1; seed <= 6; seed++) {
            am_job job;
            init_job(&job, w, size, seed);
            am_heap *h = new_heap(&job, 0);
            CHECK(h != NULL);
            int status = -1;
            w->run(h, &job, &status);
            if (status == AM_ERR_NA) { am_destroy(h); na = 1; break; }
            CHECK(status == AM_OK);
            am_stats s;
            am_get_stats(h, &s);
            am_destroy(h);
            /* threads' blocks overlap in time as they happen to: below one
             * thread's share, every interleaving runs out */
            size_t share = s.bytes_peak / (2 * (w->threaded ? job.threads : 1));
            size_t limit = share < 4096 ? share : 4096;
            if (limit == 0) continue;
            tried++;

            init_job(&job, w, size, seed);
            h = new_heap(&job, limit);
            CHECK_MSG(h != NULL, "a heap with a %zu-byte limit could not be created", limit);
            w->run(h, &job, &status);
            CHECK_MSG(status == AM_ERR_OOM, "%s size %zu seed %llu: status %d with %zu bytes peak under a "
                      "%zu-byte limit", w->name, size, (unsigned long long)seed, status, s.bytes_peak, limit);
            CHECK(check_returned(h, w, size, "after running out of memory"));
            am_destroy(h);
        }
        CHECK_MSG(w->threaded || na || tried > 0, "%s size %zu: no seed used the heap", w->name, size);
    }
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"checksums_match_oracle", test_checksums_match_oracle},
        {"seed_changes_checksum", test_seed_changes_checksum},
        {"tiny_limit_reports_oom", test_tiny_limit_reports_oom},
        {NULL, NULL}};
    return am_run_tests("workloads[" AM_ROW_NAME "]", tests, argc, argv);
}
