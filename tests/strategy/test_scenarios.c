/* test_scenarios.c: the OSRM scenarios on this row. query_heap: every query's
 * distance equals an O(n^2) Dijkstra written here (1 and 2 threads), every
 * block comes back, latency metrics are ordered, a small limit is OOM not a
 * crash, and rows whose heaps share unlocked state are n/a with 2 threads.
 * mmap_pressure: checksums at 0 % and 30 % eviction, eviction really lowers
 * residency of file-backed memory, and mmap_file leaves no file behind. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "workload.h"
#include "query_heap.h"
#include "mmap_pressure.h"

#if !defined(_WIN32)
#include <dirent.h>
#include <unistd.h>
#endif
#if defined(__linux__)
#include <sys/vfs.h>
#endif

#ifndef AM_MMAP_FILE
#define AM_MMAP_FILE 0
#endif
#if AM_S(_HAS_REGIONS) && AM_MMAP_FILE
#define FILE_ROW 1
#else
#define FILE_ROW 0
#endif

static double metric(const am_job *job, const char *name) {
    for (int i = 0; i < job->metric_count; i++)
        if (!strcmp(job->metric_names[i], name)) return job->metric_values[i];
    return -1;
}

static void init_job(am_job *job, size_t size, uint64_t seed, unsigned threads, double param) {
    memset(job, 0, sizeof job[0]);
    job->size = size;
    job->seed = seed;
    job->threads = threads;
    job->param = param;
    am_options_default(&job->options);
}

/* Dijkstra without a queue: scan for the nearest unsettled node. */
static uint64_t slow_distance(const am_graph *g, uint32_t s, uint32_t t, uint64_t *dist, char *done) {
    for (uint32_t i = 0; i < g->n; i++) { dist[i] = UINT64_MAX; done[i] = 0; }
    dist[s] = 0;
    for (;;) {
        uint32_t u = UINT32_MAX;
        for (uint32_t i = 0; i < g->n; i++)
            if (!done[i] && dist[i] != UINT64_MAX && (u == UINT32_MAX || dist[i] < dist[u])) u = i;
        if (u == UINT32_MAX || u == t) return u == t ? dist[t] : UINT64_MAX;
        done[u] = 1;
        for (uint32_t e = g->first[u]; e < g->first[u + 1]; e++)
            if (dist[u] + g->weight[e] < dist[g->target[e]]) dist[g->target[e]] = dist[u] + g->weight[e];
    }
}

static uint64_t slow_checksum(size_t size, uint64_t seed, unsigned threads) {
    const am_graph *g = am_query_heap_graph(size);
    size_t q = am_query_heap_queries(size);
    uint64_t *dist = malloc(size * sizeof *dist);
    char *done = malloc(size);
    uint32_t *pairs = malloc(2 * q * sizeof *pairs);
    uint64_t sum = 0;
    if (!g || !dist || !done || !pairs) sum = UINT64_MAX;
    for (unsigned i = 0; g && dist && done && pairs && i < threads; i++) {
        am_query_heap_pairs(seed, i, g->n, q, pairs);
        for (size_t k = 0; k < q; k++)
            sum += am_query_heap_term(i, q, k, slow_distance(g, pairs[2 * k], pairs[2 * k + 1], dist, done));
    }
    free(dist);
    free(done);
    free(pairs);
    return sum;
}

static void test_query_heap_distances_and_counts(void) {
    const am_workload *w = am_workload_find("query_heap");
    const am_sweep *sw = am_sweep_find("query_heap");
    CHECK(w && w->threaded && sw && sw->threads && sw->ops);
    const am_graph *g = am_query_heap_graph(900);
    CHECK(g && g->n == 900 && g->first[g->n] > 2 * 900); /* grid edges and some long ones, both ways */
    for (unsigned threads = 1; threads <= 2; threads++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            am_job job;
            init_job(&job, 900, seed, threads, 0);
            am_heap *h = am_create(&job.options);
            CHECK(h != NULL);
            int status = -1;
            uint64_t sum = w->run(h, &job, &status);
#if !AM_THREAD_SAFE && AM_S(_HEAPS_SHARE_STATE)
            if (threads > 1) {
                CHECK_MSG(status == AM_ERR_NA && job.reason && *job.reason, "status %d", status);
                am_destroy(h);
                continue;
            }
#endif
            CHECK_MSG(status == AM_OK, "threads %u seed %llu: status %d", threads, (unsigned long long)seed,
                      status);
            uint64_t want = slow_checksum(900, seed, threads);
            CHECK_MSG(sum == want, "threads %u seed %llu: checksum %llu, plain Dijkstra %llu", threads,
                      (unsigned long long)seed, (unsigned long long)sum, (unsigned long long)want);
            CHECK(w->oracle(&job) == want);
            CHECK(sw->ops(&job) == (double)threads * (double)am_query_heap_queries(900));
            am_stats s;
            am_get_stats(h, &s);
            CHECK_MSG(s.bytes_live == 0 && s.allocs == s.frees, "%zu bytes live, %llu allocs, %llu frees",
                      s.bytes_live, (unsigned long long)s.allocs, (unsigned long long)s.frees);
            /* one thread runs on the cell's heap, and so does every thread of a thread-safe row */
            if (threads == 1 || AM_THREAD_SAFE) CHECK(s.allocs > 0);
            double p50 = metric(&job, "latency_p50_ns"), p95 = metric(&job, "latency_p95_ns");
            double p99 = metric(&job, "latency_p99_ns"), max = metric(&job, "latency_max_ns");
            CHECK(metric(&job, "latency_mean_ns") > 0 && p50 > 0 && p50 <= p95 && p95 <= p99 && p99 <= max);
            /* the repetition timed its queries: at least the slowest one */
            CHECK_MSG(job.timed_ns >= max, "timed %llu ns, slowest query %g", (unsigned long long)job.timed_ns, max);
            am_destroy(h);
        }
    }
}

static void test_query_heap_small_limit_is_oom(void) {
    const am_workload *w = am_workload_find("query_heap");
    am_job job;
    init_job(&job, 2500, 4, 1, 0);
    job.options.limit = 4096;
    am_heap *h = am_create(&job.options);
    if (!h) CHECK_SKIP("this row cannot make a heap of 4 KiB");
    int status = -1;
    w->run(h, &job, &status);
    CHECK_MSG(status == AM_ERR_OOM, "status %d", status);
    am_stats s;
    am_get_stats(h, &s);
    CHECK(s.bytes_live == 0 && s.allocs == s.frees);
    am_destroy(h);
}

static void test_mmap_pressure_checksums(void) {
    const am_workload *w = am_workload_find("mmap_pressure");
    const am_sweep *sw = am_sweep_find("mmap_pressure");
    CHECK(w && w->threaded && sw && sw->params && sw->params[0] == 0);
    static const double fractions[] = {0, 30, 0};
    for (unsigned threads = 1; threads <= 2; threads++)
        for (int k = 0; k < 3; k++) {
            am_job job;
            init_job(&job, 2, 7 + threads, threads, fractions[k]);
            am_heap *h = am_create(&job.options);
            CHECK(h != NULL);
            int status = -1;
            uint64_t sum = w->run(h, &job, &status);
            am_destroy(h);
            if (status == AM_ERR_NA) {
                CHECK(!FILE_ROW && fractions[k] > 0 && job.reason && *job.reason);
                continue;
            }
            CHECK_MSG(status == AM_OK, "threads %u, %g %%: status %d", threads, fractions[k], status);
            CHECK_MSG(sum == w->oracle(&job), "threads %u, %g %%: checksum differs", threads, fractions[k]);
            CHECK(metric(&job, "resident_pct") >= 0 && metric(&job, "resident_pct") <= 100);
            CHECK(metric(&job, "file_backed") == FILE_ROW);
            /* the repetition's time is its eviction plus its queries, nothing else */
            double parts = (metric(&job, "evict_ms") + metric(&job, "query_ms")) * 1e6;
            CHECK_MSG(job.timed_ns > 0 && (double)job.timed_ns > parts - 2 && (double)job.timed_ns < parts + 2,
                      "timed %llu ns, evict + query %g ns", (unsigned long long)job.timed_ns, parts);
        }
    am_mmap_pressure_release();
}

#if FILE_ROW && !defined(_WIN32)
/* file pages dropped from the page cache read back from disk; on tmpfs
 * there is no disk to drop them to (its one caller is not built on Windows) */
static int on_tmpfs(const char *dir) {
#if defined(__linux__)
    struct statfs f;
    return statfs(dir, &f) == 0 && f.f_type == 0x01021994;
#else
    (void)dir;
    return 0;
#endif
}
#endif

static void test_mmap_file_eviction_and_no_file_left(void) {
#if !FILE_ROW
    CHECK_SKIP("not a file-backed row");
#elif defined(_WIN32)
    CHECK_SKIP("directory listing is POSIX here");
#else
    char dir[] = "/tmp/am-scenarios-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const am_workload *w = am_workload_find("mmap_pressure");
    size_t evictable = 0, resident = 0;
    for (int k = 0; k < 2; k++) {
        am_job job;
        init_job(&job, 2, 3, 1, k ? 50 : 0);
        job.options.path = dir; /* where mmap_file puts its files */
        int status = -1;
        uint64_t sum = w->run(NULL, &job, &status);
        CHECK(status == AM_OK && sum == w->oracle(&job));
        am_mmap_pressure_residency(&evictable, &resident);
        if (k == 0) CHECK(evictable > 0 && resident == evictable);
    }
    int tmpfs = on_tmpfs(dir);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int files = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        files += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    CHECK_MSG(files == 0, "%d files left in %s while the heap lives (unlinked once mapped)", files, dir);
    am_mmap_pressure_release();
    CHECK_MSG(rmdir(dir) == 0, "%s is not empty after the heap went", dir);
    if (tmpfs) CHECK_SKIP("the temporary folder is tmpfs: eviction cannot show in residency");
    /* half the page runs went; the first node of each was not read back */
    CHECK_MSG(resident < evictable * 3 / 4, "resident %zu of %zu bytes after evicting 50 %%", resident, evictable);
#endif
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"query_heap_distances_and_counts", test_query_heap_distances_and_counts},
        {"query_heap_small_limit_is_oom", test_query_heap_small_limit_is_oom},
        {"mmap_pressure_checksums", test_mmap_pressure_checksums},
        {"mmap_file_eviction_and_no_file_left", test_mmap_file_eviction_and_no_file_left},
        {NULL, NULL}};
    return am_run_tests("scenarios[" AM_ROW_NAME "]", tests, argc, argv);
}
