/* test_dimension_workloads.c: the workloads of the dimensions suite under each
 * strategy, at every param they sweep: checksum equal to the oracle, every
 * block returned (or, for the drop variants, the heap reset), out of memory
 * reported and cleaned up wherever it strikes, and what each one is for: a
 * heap per subsystem in churn_traverse, far more bytes allocated than live in
 * utilization, the distributions of size_mix, inner containers on the outer
 * one's heap. It does not time anything. */
#include <math.h>
#include <string.h>
#include "check.h"
#include "checksum.h"

static void job_init(am_job *job, size_t size, uint64_t seed, double param) {
    memset(job, 0, sizeof *job);
    job->size = size;
    job->seed = seed;
    job->param = param;
    job->threads = 2;
    am_options_default(&job->options);
}

static am_heap *new_heap(void) {
    am_options o;
    am_options_default(&o);
    return am_create(&o);
}

static size_t live_bytes(const am_heap *h) {
    am_stats s;
    am_get_stats(h, &s);
    return s.bytes_live;
}

static double metric(const am_job *job, const char *name) {
    for (int i = 0; i < job->metric_count; i++)
        if (!strcmp(job->metric_names[i], name)) return job->metric_values[i];
    return -1;
}

/* One repetition of the named workload (param 0) on a heap of its own; the
 * heap's statistics after it. */
static uint64_t run_on_new_heap(const char *name, size_t size, uint64_t seed, am_job *job, int *status,
                                am_stats *st) {
    const am_workload *w = am_workload_find(name);
    am_heap *h = new_heap();
    *status = -1;
    memset(st, 0, sizeof *st);
    if (!w || !h) {
        if (h) am_destroy(h);
        return 0;
    }
    job_init(job, size, seed, 0);
    uint64_t got = w->run(h, job, status);
    am_get_stats(h, st);
    am_destroy(h);
    return got;
}

/* the params a workload sweeps (0 alone where it sweeps none) */
static int params_of(const char *name, double *out, int max) {
    const am_sweep *sw = am_sweep_find(name);
    int n = 0;
    for (int i = 0; sw && sw->params && sw->params[i] >= 0 && n < max; i++) out[n++] = sw->params[i];
    if (!n) out[n++] = 0;
    return n;
}

static int is_drop(const am_workload *w) {
    size_t n = strlen(w->name);
    return n > 5 && !strcmp(w->name + n - 5, "_drop");
}

/* the suite's workloads, in workloads.def's order */
static const am_workload *suite_workload(int i) {
    int k = 0;
    for (int j = 0; am_workloads[j]; j++)
        if (!strcmp(am_workload_suite(am_workloads[j]), "dimensions") && k++ == i) return am_workloads[j];
    return NULL;
}

static void test_suite_listed(void) {
    CHECK(!strcmp(am_workload_suite(am_workload_find("thrash_pool")), "default"));
    CHECK(!strcmp(am_workload_suite(am_workload_find("mmap_pressure")), "default"));
    static const char *const want[] = {"churn_traverse", "utilization", "size_mix", "vector_of_lists",
                                       "map_of_vectors", "list_create_drop", "vector_of_lists_drop",
                                       "producer_consumer", NULL};
    for (int i = 0; want[i]; i++) {
        const am_workload *w = am_workload_find(want[i]);
        CHECK_MSG(w && !strcmp(am_workload_suite(w), "dimensions"), "%s is not in the dimensions suite", want[i]);
    }
    CHECK(suite_workload(0) != NULL);
}

/* Every param, a few sizes and seeds: the oracle's checksum, nothing live
 * on the heap after a repetition (the drop variants reset it: nothing live,
 * frees fewer than allocations), or not applicable with a reason. */
static void test_matches_oracle(void) {
    static const size_t sizes[] = {1, 2, 17, 100, 1000, 0};
    for (int i = 0; suite_workload(i); i++) {
        const am_workload *w = suite_workload(i);
        double params[8];
        int np = params_of(w->name, params, 8);
        am_heap *h = new_heap();
        CHECK(h);
        for (int p = 0; p < np; p++)
            for (int s = 0; sizes[s]; s++)
                for (uint64_t seed = 1; seed <= 3; seed++) {
                    am_job job;
                    job_init(&job, w->threaded ? sizes[s] * 10 : sizes[s], seed, params[p]);
                    int status = -1;
                    uint64_t got = w->run(h, &job, &status);
                    if (status == AM_ERR_NA) {
                        CHECK(job.reason && *job.reason);
                        continue;
                    }
                    CHECK_MSG(status == AM_OK, "%s size %zu param %g: status %d", w->name, job.size, params[p],
                              status);
                    CHECK_MSG(got == w->oracle(&job), "%s size %zu param %g seed %llu: checksum differs",
                              w->name, job.size, params[p], (unsigned long long)seed);
                    am_stats st;
                    am_get_stats(h, &st);
                    CHECK_MSG(st.bytes_live == 0, "%s size %zu param %g: %zu bytes live", w->name, job.size,
                              params[p], st.bytes_live);
                    CHECK_MSG(is_drop(w) || st.allocs == st.frees, "%s: %llu allocations, %llu frees", w->name,
                              (unsigned long long)st.allocs, (unsigned long long)st.frees);
                    if (!AM_FREE_REUSES) am_reset(h);
                }
        am_destroy(h);
    }
}

/* the param changes the work where there is one to sweep */
static void test_param_changes_checksum(void) {
    for (int i = 0; suite_workload(i); i++) {
        const am_workload *w = suite_workload(i);
        double params[8];
        int np = params_of(w->name, params, 8);
        for (int p = 1; p < np; p++) {
            am_job a, b;
            job_init(&a, 1000, 1, params[0]);
            job_init(&b, 1000, 1, params[p]);
            CHECK_MSG(w->oracle(&a) != w->oracle(&b), "%s: params %g and %g agree", w->name, params[0],
                      params[p]);
        }
    }
}

/* Limits from tiny to enough: each run succeeds with the oracle's checksum
 * or reports out of memory with nothing live on the heap. */
static void test_out_of_memory_anywhere(void) {
    for (int i = 0; suite_workload(i); i++) {
        const am_workload *w = suite_workload(i);
        double params[8];
        int np = params_of(w->name, params, 8);
        double param = params[np - 1];
        int ok = 0, oom = 0, na = 0;
        for (size_t limit = 64; limit <= ((size_t)1 << 26) && !ok; limit += limit < 8192 ? 64 : limit / 4) {
            am_job job;
            job_init(&job, w->threaded ? 400 : 40, 5, param);
            job.options.limit = limit;
            am_heap *h = am_create(&job.options);
            if (!h) continue;
            int status = -1;
            uint64_t got = w->run(h, &job, &status);
            size_t live = live_bytes(h);
            am_destroy(h);
            if (status == AM_ERR_NA) { na = 1; break; }
            CHECK_MSG(status == AM_OK || status == AM_ERR_OOM, "%s limit %zu: status %d", w->name, limit, status);
            CHECK_MSG(live == 0, "%s limit %zu: %zu bytes live after status %d", w->name, limit, live, status);
            oom |= status == AM_ERR_OOM;
            if (status == AM_OK) {
                CHECK_MSG(got == w->oracle(&job), "%s limit %zu: checksum differs", w->name, limit);
                ok = 1;
            }
        }
        CHECK_MSG(na || ok, "%s never succeeded under a limit up to 64 MiB", w->name);
        CHECK_MSG(na || oom || AM_HEAPS_SHARE_STATE, "%s never ran out of memory", w->name);
    }
}

/* churn_traverse: a heap per subsystem where heaps are independent, so the
 * cell's heap serves subsystem 0 alone (its first len/16 nodes and every
 * 16th churn step); where heaps share state, it serves all. */
static void test_churn_heap_per_subsystem(void) {
    const am_workload *w = am_workload_find("churn_traverse");
    CHECK(w);
    const size_t len = 1600;
    for (int p = 0; p < 3; p++) {
        am_job job;
        job_init(&job, len, 3, p);
        am_heap *h = new_heap();
        CHECK(h);
        int status = -1;
        uint64_t got = w->run(h, &job, &status);
        CHECK(status == AM_OK && got == w->oracle(&job));
        am_stats st;
        am_get_stats(h, &st);
        uint64_t steps = (uint64_t)p * len;
        uint64_t want = AM_HEAPS_SHARE_STATE ? len + steps : len / 16 + (steps + 15) / 16;
        CHECK_MSG(st.allocs == want, "param %d: %llu allocations on the cell's heap, expected %llu", p,
                  (unsigned long long)st.allocs, (unsigned long long)want);
        CHECK(metric(&job, "heaps") == (AM_HEAPS_SHARE_STATE ? 1 : 16));
        am_destroy(h);
    }
}

/* The nested containers' inner containers allocate from the heap the outer
 * one was given: at len 810, vector_of_lists takes its 810 nodes and the 7
 * growths of its vector of 51 lists (capacity 1 to 64) there, map_of_vectors
 * its 51 tree nodes and the 5 growths of each vector (capacity 1 to 16). */
static void test_nested_allocator_propagated(void) {
    static const char *const names[] = {"vector_of_lists", "map_of_vectors"};
    static const uint64_t want[] = {810 + 7, 51 + 51 * 5};
    for (int i = 0; i < 2; i++) {
        am_job job;
        am_stats st;
        int status;
        uint64_t got = run_on_new_heap(names[i], 810, 2, &job, &status, &st);
        CHECK(status == AM_OK && got == am_workload_find(names[i])->oracle(&job));
        CHECK_MSG(st.allocs == want[i], "%s: %llu allocations on its heap, expected %llu", names[i],
                  (unsigned long long)st.allocs, (unsigned long long)want[i]);
    }
}

/* Wink-out: where reset frees live blocks of this heap alone, the drop
 * variants free nothing block by block (vector_of_lists_drop only the old
 * storage of its vector's 6 moves at len 810) and leave nothing live;
 * elsewhere they do not apply, and say why. */
static void test_drop_resets_instead_of_freeing(void) {
    static const char *const names[] = {"list_create_drop", "vector_of_lists_drop"};
    static const uint64_t allocs[] = {810, 810 + 7}, frees[] = {0, 6};
    for (int i = 0; i < 2; i++) {
        am_job job;
        am_stats st;
        int status;
        uint64_t got = run_on_new_heap(names[i], 810, 4, &job, &status, &st);
#if AM_RESET_FREES_LIVE && !AM_HEAPS_SHARE_STATE
        CHECK_MSG(status == AM_OK && got == am_workload_find(names[i])->oracle(&job), "%s: status %d", names[i],
                  status);
        CHECK_MSG(st.allocs == allocs[i] && st.frees == frees[i] && st.bytes_live == 0,
                  "%s: %llu allocations, %llu frees, %zu bytes live", names[i], (unsigned long long)st.allocs,
                  (unsigned long long)st.frees, st.bytes_live);
#else
        (void)got;
        (void)allocs;
        (void)frees;
        CHECK_MSG(status == AM_ERR_NA && job.reason && strstr(job.reason, "reset "), "%s: status %d", names[i],
                  status);
        CHECK(st.allocs == 0);
#endif
    }
}

/* producer_consumer: on a thread-safe row, every block of every thread came
 * from the cell's heap and went back to it, for 1 to 3 threads, and the
 * repetition timed its own work, not starting and joining its threads; other
 * rows do not apply. */
static void test_producer_consumer_one_heap(void) {
    const am_workload *w = am_workload_find("producer_consumer");
    const am_sweep *sw = am_sweep_find("producer_consumer");
    CHECK(w && w->threaded && sw && sw->ops && !sw->params);
    for (unsigned threads = 1; threads <= 3; threads++) {
        am_job job;
        job_init(&job, 3000, threads, 0);
        job.threads = threads;
        am_heap *h = new_heap();
        CHECK(h);
        int status = -1;
        uint64_t t0 = am_now_ns();
        uint64_t got = w->run(h, &job, &status);
        uint64_t wall = am_now_ns() - t0;
        am_stats st;
        am_get_stats(h, &st);
        am_destroy(h);
#if AM_THREAD_SAFE
        CHECK_MSG(status == AM_OK && got == w->oracle(&job), "threads %u: status %d", threads, status);
        CHECK_MSG(st.allocs == 3000u * threads && st.frees == st.allocs && st.bytes_live == 0,
                  "threads %u: %llu allocations, %llu frees", threads, (unsigned long long)st.allocs,
                  (unsigned long long)st.frees);
        CHECK(job.timed_ns > 0 && job.timed_ns < wall);
        CHECK(sw->ops(&job) == 3000.0 * threads);
#else
        (void)got;
        (void)wall;
        CHECK_MSG(status == AM_ERR_NA && job.reason && strstr(job.reason, "thread-safe"), "status %d", status);
        CHECK(st.allocs == 0);
#endif
    }
}

/* size_mix's distributions, from 100,000 draws each: uniform's mean is
 * (8 + 1024) / 2; every power-of-two draw is a power of two and each of its 8
 * classes is drawn; the exponential falls off (over twice as many blocks under
 * 64 bytes as over 256, none over 4 KiB to speak of) and the Pareto tail reaches
 * blocks past 4 KiB that the exponential never does. */
uint32_t am_size_mix_size(int distribution, uint64_t *x);

static void test_size_mix_distributions(void) {
    enum { N = 100000 };
    double mean[4] = {0, 0, 0, 0};
    size_t small[4] = {0, 0, 0, 0}, mid[4] = {0, 0, 0, 0}, big[4] = {0, 0, 0, 0};
    unsigned classes = 0;
    for (int d = 0; d < 4; d++) {
        uint64_t x = am_values_start(9);
        for (int i = 0; i < N; i++) {
            uint32_t s = am_size_mix_size(d, &x);
            CHECK_MSG(s >= 8 && s <= 32768, "distribution %d drew %u bytes", d, s);
            if (d == 1) {
                CHECK_MSG((s & (s - 1)) == 0, "power-of-two draw %u", s);
                classes |= s;
            }
            mean[d] += (double)s / N;
            small[d] += s < 64;
            mid[d] += s > 256;
            big[d] += s > 4096;
        }
    }
    CHECK_MSG(fabs(mean[0] - 516) < 10, "uniform mean %g", mean[0]);
    CHECK(classes == 0x7f8 && big[1] == 0);
    CHECK_MSG(small[2] > 2 * mid[2] && big[2] < 5, "exponential: %zu under 64 B, %zu over 256 B, %zu over 4 KiB",
              small[2], mid[2], big[2]);
    CHECK_MSG(big[3] > 100 && small[3] > N / 2, "Pareto: %zu over 4 KiB, %zu under 64 B", big[3], small[3]);
}

static const am_test tests[] = {
    {"suite_listed", test_suite_listed},
    {"matches_oracle", test_matches_oracle},
    {"param_changes_checksum", test_param_changes_checksum},
    {"out_of_memory_anywhere", test_out_of_memory_anywhere},
    {"churn_heap_per_subsystem", test_churn_heap_per_subsystem},
    {"size_mix_distributions", test_size_mix_distributions},
    {"nested_allocator_propagated", test_nested_allocator_propagated},
    {"drop_resets_instead_of_freeing", test_drop_resets_instead_of_freeing},
    {"producer_consumer_threads_on_one_heap", test_producer_consumer_one_heap},
    {NULL, NULL}};

int main(int argc, char **argv) { return am_run_tests("dimension_workloads/" AM_ROW_NAME, tests, argc, argv); }
