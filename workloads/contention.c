/* contention.c: BlazingMQ's isolated benchmark ("independent item pools for
 * channels"). T threads each allocate a 345-byte block, write to it, do W ns of work
 * (param), and free it, over and over. Thread-safe strategies get one heap shared by
 * every thread (the shared pool); the others a heap per thread, made in that thread
 * (independent pools). It is a benchmark of allocator contention, not of the work: W
 * only sets how often threads call. */
#include <stdlib.h>

#include "thread_group.h"

#define CT_BLOCK 345
/* Iterations per thread: the size, but with W ns of work each, no more than
 * size x CT_BUDGET_NS of work in all, so that large W keeps cells short
 * (200,000 x 25 ns = 5 ms of work per thread and repetition). */
#define CT_BUDGET_NS 25
#define CT_MIN_ITERATIONS 16

static size_t iterations(size_t size, double w) {
    if (w <= CT_BUDGET_NS) return size;
    double n = (double)size * CT_BUDGET_NS / w;
    return n < CT_MIN_ITERATIONS ? CT_MIN_ITERATIONS : (size_t)n;
}

/* The work: a dependent multiply-add chain that no compiler shortens, seeded
 * from the block so that it cannot be hoisted out of the loop. */
static uint64_t work(uint64_t x, uint64_t loops) {
    for (uint64_t i = 0; i < loops; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

/* Without --work-loops, W's loop count comes from this rate, measured once
 * per process before any thread starts; the runner passes one count to every
 * row instead, so that W is the same work for all of them. */
static double loops_per_ns;

static double calibrate(void) {
    double best = 0;
    uint64_t sink = 0;
    for (int r = 0; r < 5; r++) {
        const uint64_t loops = 1u << 18;
        uint64_t t0 = am_now_ns();
        sink += work(t0, loops);
        uint64_t dt = am_now_ns() - t0;
        double rate = dt ? (double)loops / (double)dt : 0;
        if (rate > best) best = rate; /* the fastest run: the least disturbed */
    }
    am_escape(&sink);
    return best > 0 ? best : 1;
}

static double calibrated_loops_per_ns(void) {
    if (loops_per_ns == 0) loops_per_ns = calibrate();
    return loops_per_ns;
}

typedef struct ct_thread {
    am_start_line *line;
    am_heap *shared;         /* NULL: the thread makes its own heap */
    const am_options *options;
    am_owner *owner;         /* where the counting wrapper files this thread's blocks */
    unsigned id;
    size_t iterations;
    uint64_t loops;
    uint64_t first;          /* the first value written */
    uint64_t sum;
    int status;
} ct_thread;

static uint64_t first_value(uint64_t seed, unsigned id) {
    return seed * 1000003u + ((uint64_t)id << 40);
}

static void run_thread(void *arg) {
    ct_thread *t = arg;
    am_owner_enter_thread(t->owner, t->id);
    am_heap *h = t->shared ? t->shared : am_create(t->options);
    am_start_wait(t->line);
    uint64_t sum = 0;
    if (!h) t->status = AM_ERR_OOM;
    for (size_t i = 0; h && i < t->iterations; i++) {
        uint64_t *b = am_alloc(h, CT_BLOCK);
        if (AM_UNLIKELY(!b)) { t->status = AM_ERR_OOM; break; }
        b[0] = t->first + i;
        if (t->loops) b[1] = work(b[0], t->loops); /* kept: the block escapes */
        am_escape(b);
        sum += b[0];
        am_free(h, b, CT_BLOCK);
    }
    am_start_stop(t->line);
    if (h && !t->shared) am_destroy(h);
    t->sum = sum;
}

static uint64_t contention_run(am_heap *h, am_job *job, int *status) {
#if !AM_FREE_REUSES
    /* each thread's 200,000 blocks would all be fresh memory, first-touch page
     * faults would be the measure, and the row is no candidate for a
     * long-running allocate/free stream anyway */
    job->reason = "free does not reuse memory: not a pool for a long allocate/free stream";
    *status = AM_ERR_NA;
    return 0;
#endif
    unsigned n = am_job_threads(job);
    *status = am_threads_check(job, n);
    if (*status != AM_OK) return 0;
    if (!job->has_work_loops) {
        double per_ns = calibrated_loops_per_ns();
        am_job_metric(job, "work_loop_per_ns", per_ns);
        job->work_loops = (uint64_t)(job->param * per_ns + 0.5);
        job->has_work_loops = 1; /* the same count in every later repetition */
    }
    am_job_metric(job, "work_loops", (double)job->work_loops);
    am_job_metric(job, "shared_heap", AM_THREAD_SAFE ? 1 : 0);
    size_t iters = iterations(job->size, job->param);
    am_job_metric(job, "iterations_per_thread", (double)iters);
    ct_thread *t = calloc(n, sizeof *t);
    if (!t) { *status = AM_ERR_OOM; return 0; }
    am_start_line line;
    for (unsigned i = 0; i < n; i++) {
        t[i].line = &line;
        t[i].shared = AM_THREAD_SAFE ? h : NULL;
        t[i].options = &job->options;
        t[i].owner = am_owner_current();
        t[i].id = i;
        t[i].iterations = iters;
        t[i].loops = job->work_loops;
        t[i].first = first_value(job->seed, i);
    }
    /* even one thread runs in a thread of its own: its heap is made there */
    *status = am_thread_group_run(run_thread, t, sizeof *t, n, &line, &job->timed_ns);
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        if (t[i].status != AM_OK) *status = t[i].status;
        sum += t[i].sum;
    }
    free(t);
    return sum;
}

static uint64_t contention_oracle(am_job *job) {
    unsigned n = am_job_threads(job);
    uint64_t k = iterations(job->size, job->param);
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) sum += k * first_value(job->seed, i) + k * (k - 1) / 2;
    return sum;
}

static const size_t contention_sizes[] = {200000, 0};
static const size_t contention_log_sizes[] = {20000, 200000, 0};
static const double contention_params[] = {0, 100, 500, 10000, -1}; /* 10 µs: the gap has closed; --param for others */
static const double contention_quick_params[] = {0, 500, -1};

static unsigned contention_reps(size_t size) { (void)size; return 1; }
static double contention_ops(size_t size) { return (double)size; }
static double contention_job_ops(const am_job *job) {
    return (double)am_job_threads(job) * (double)iterations(job->size, job->param);
}

const am_workload am_workload_contention = {
    .name = "contention",
    .summary = "T threads: allocate 345 bytes, write, W ns of work (param), free; one shared heap if thread-safe, "
        "else one per thread (BlazingMQ's pools)",
    .sizes = contention_sizes,
    .log_sizes = contention_log_sizes,
    .reps = contention_reps,
    .ops = contention_ops,
    .run = contention_run,
    .oracle = contention_oracle,
    .threaded = 1,
    .seeds = 1,
    .age = 0,
    .min_bytes = NULL,
    .versus = "pool",
    .dimension = "contention",
};

const am_sweep am_sweep_contention = {
    .workload = "contention",
    .params = contention_params,
    .threads = 1,
    .ops = contention_job_ops,
    .quick_params = contention_quick_params,
};
