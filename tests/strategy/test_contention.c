/* test_contention.c: the contention workload on this row: its checksum equals
 * the reference for 1-3 threads and several W, every block it took from a
 * shared heap came back, the work loop's calibration is positive, and rows
 * whose heaps share unlocked state say "not applicable" instead of racing, and
 * so do rows whose free reuses nothing (their blocks would all be fresh memory). */
#include <string.h>

#include "check.h"
#include "workload.h"

static double metric(const am_job *job, const char *name) {
    for (int i = 0; i < job->metric_count; i++)
        if (!strcmp(job->metric_names[i], name)) return job->metric_values[i];
    return -1;
}

static void test_checksum_counts_and_calibration(void) {
    const am_workload *w = am_workload_find("contention");
    const am_sweep *sw = am_sweep_find("contention");
    CHECK(w && w->threaded && sw && sw->threads && sw->params && sw->ops);
    static const double ws[] = {0, 100, 2000};
    for (unsigned threads = 1; threads <= 3; threads++) {
        for (int k = 0; k < 3; k++) {
            am_job job;
            memset(&job, 0, sizeof job);
            job.size = 3000;
            job.seed = 5 + threads;
            job.threads = threads;
            job.param = ws[k];
            am_options_default(&job.options);
            am_heap *h = am_create(&job.options);
            CHECK(h != NULL);
            int status = -1;
            uint64_t sum = w->run(h, &job, &status);
#if !AM_FREE_REUSES
            /* free reuses nothing: every block would be fresh memory */
            CHECK_MSG(status == AM_ERR_NA && job.reason && strstr(job.reason, "does not reuse"), "status %d", status);
            am_destroy(h);
            continue;
#endif
#if !AM_THREAD_SAFE && AM_S(_HEAPS_SHARE_STATE)
            if (threads > 1) {
                CHECK_MSG(status == AM_ERR_NA && job.reason && *job.reason, "status %d", status);
                am_destroy(h);
                continue;
            }
#endif
            CHECK_MSG(status == AM_OK, "threads %u W %g: status %d", threads, ws[k], status);
            CHECK_MSG(sum == w->reference(&job), "threads %u W %g: checksum differs from the reference", threads,
                      ws[k]);
            CHECK(metric(&job, "work_loop_per_ns") > 0);
            double iters = metric(&job, "iterations_per_thread");
            CHECK(iters >= 16 && iters <= 3000);
            CHECK(sw->ops(&job) == threads * iters);
            am_stats s;
            am_get_stats(h, &s);
            /* a shared heap served every block and got each back; else the
             * threads made their own heaps and this one was never used */
            uint64_t want = AM_THREAD_SAFE ? (uint64_t)(threads * iters) : 0;
            CHECK_MSG(s.allocs == want && s.frees == want && s.bytes_live == 0,
                      "threads %u W %g: %llu allocs, %llu frees, %zu live", threads, ws[k],
                      (unsigned long long)s.allocs, (unsigned long long)s.frees, s.bytes_live);
            am_destroy(h);
        }
    }
}

/* W shrinks the iterations so that a repetition stays short, and the seed
 * changes the checksum. */
static void test_iterations_follow_w_and_seed(void) {
    const am_sweep *sw = am_sweep_find("contention");
    const am_workload *w = am_workload_find("contention");
    CHECK(sw && w);
    am_job job;
    memset(&job, 0, sizeof job);
    job.size = 200000;
    job.threads = 2;
    CHECK(sw->ops(&job) == 400000);
    job.param = 1000;
    CHECK(sw->ops(&job) == 2 * 5000);
    job.param = 100000;
    CHECK(sw->ops(&job) == 2 * 50);
    job.seed = 1;
    uint64_t a = w->reference(&job);
    job.seed = 2;
    CHECK(w->reference(&job) != a);
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"checksum_counts_and_calibration", test_checksum_counts_and_calibration},
        {"iterations_follow_w_and_seed", test_iterations_follow_w_and_seed},
        {NULL, NULL}};
    return am_run_tests("contention[" AM_ROW_NAME "]", tests, argc, argv);
}
