/* test_contention.c: the contention workload on this row: its checksum equals
 * the oracle for 1-3 threads and several W, every block it took from a
 * shared heap came back, the work loop's calibration is positive, a given loop
 * count is used as given, the repetition's own time excludes starting and
 * joining its threads, and rows whose heaps share unlocked state say "not
 * applicable" instead of racing, and so do rows whose free reuses nothing
 * (their blocks would all be fresh memory). */
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
            uint64_t t0 = am_now_ns();
            uint64_t sum = w->run(h, &job, &status);
            uint64_t wall = am_now_ns() - t0;
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
            CHECK_MSG(sum == w->oracle(&job), "threads %u W %g: checksum differs from the oracle", threads,
                      ws[k]);
            CHECK(metric(&job, "work_loop_per_ns") > 0);
            /* the work loop's count was found once and is what ran */
            CHECK(job.has_work_loops && metric(&job, "work_loops") == (double)job.work_loops);
            /* what the repetition timed: from the start line to the last stop,
             * inside the call, which also started, set up and joined the threads */
            CHECK_MSG(job.timed_ns > 0 && job.timed_ns < wall, "timed %llu ns of %llu", (unsigned long long)job.timed_ns,
                      (unsigned long long)wall);
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

/* Given a loop count for W, the workload uses it and measures nothing: every
 * row given the same count does the same work. */
static void test_given_work_loops(void) {
    const am_workload *w = am_workload_find("contention");
    am_job job;
    memset(&job, 0, sizeof job);
    job.size = 500;
    job.seed = 3;
    job.threads = 1;
    job.param = 2000;
    job.work_loops = 77;
    job.has_work_loops = 1;
    am_options_default(&job.options);
    am_heap *h = am_create(&job.options);
    CHECK(h != NULL);
    int status = -1;
    uint64_t sum = w->run(h, &job, &status);
    am_destroy(h);
#if AM_FREE_REUSES
    CHECK_MSG(status == AM_OK, "status %d", status);
    CHECK(sum == w->oracle(&job));
    CHECK(job.work_loops == 77 && metric(&job, "work_loops") == 77);
    CHECK(metric(&job, "work_loop_per_ns") == -1); /* not measured */
#else
    (void)sum;
    CHECK(status == AM_ERR_NA);
#endif
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
    uint64_t a = w->oracle(&job);
    job.seed = 2;
    CHECK(w->oracle(&job) != a);
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"checksum_counts_and_calibration", test_checksum_counts_and_calibration},
        {"iterations_follow_w_and_seed", test_iterations_follow_w_and_seed},
        {"given_work_loops", test_given_work_loops},
        {NULL, NULL}};
    return am_run_tests("contention[" AM_ROW_NAME "]", tests, argc, argv);
}
