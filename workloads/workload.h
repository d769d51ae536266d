/* workload.h: what a workload is. A workload is one repetition of some
 * container work (build, work, destroy) that returns a checksum; the cell
 * (cell/cell_main.c) repeats, times and verifies it. Each workload also has
 * an oracle: the same computation done without the allocator under test, so a
 * broken strategy fails loudly instead of running fast.
 *
 * Adding a workload: one file in this folder defining `am_workload_<name>`
 * (designated initializers, so that each field is named where it is set), one
 * line in workloads/workloads.def (the registry and the tables' order), and its
 * #include in cell/row_unit.c (a row is built from that one unit; C cannot
 * make the #include from workloads.def, so tests/python/test_build.py checks
 * that the two agree). */
#ifndef AM_WORKLOAD_H
#define AM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include "allocator.h"

/* AM_ERR_NA: the workload does not apply to this strategy (the cell prints
 * status "skipped" with am_job.reason; tables show n/a) */
enum { AM_OK = 0, AM_ERR_OOM = 1, AM_ERR_FAILED = 2, AM_ERR_NA = 3 };

#define AM_MAX_METRICS 16

/* A job: what one cell of the matrix asks of a workload (its parameters),
 * and where the workload leaves its extra figures and its reason. */
typedef struct am_job {
    size_t size;       /* the workload's size parameter (elements, nodes, ...) */
    uint64_t seed;     /* the repetition's seed: runs with equal seeds do equal work */
    unsigned threads;  /* for threaded workloads; 1 otherwise */
    double param;      /* a workload-specific knob (work per call in ns, evicted fraction ...) */
    am_options options;/* how heaps are created, for workloads that create their own */
    /* contention: loops of its work function per operation (W's length); with
     * has_work_loops 0 the workload finds the count for W itself and sets it */
    uint64_t work_loops;
    int has_work_loops;
    /* threaded workloads: the time the repetition measured (threads and their
     * heaps are made before it starts and joined after it stops), set by run */
    uint64_t timed_ns;
    /* set while the cell ages a heap (am_workload.age): the repetition only
     * has to leave the heap as a real one would, so a workload may skip work
     * that allocates nothing (a sort in place); its checksum is not read */
    int aging;
    /* extra figures the workload reports (latency percentiles ...), printed by the cell */
    int metric_count;
    const char *metric_names[AM_MAX_METRICS];
    double metric_values[AM_MAX_METRICS];
    const char *reason; /* with AM_ERR_NA: why (a string literal) */
} am_job;

typedef struct am_workload {
    const char *name;
    const char *summary;        /* one line, for --list */
    const size_t *sizes;        /* default (linear) sweep, 0-terminated */
    const size_t *log_sizes;    /* SIZES=log sweep, 0-terminated */
    unsigned (*reps)(size_t size);  /* repetitions per sample to start calibration from */
    double (*ops)(size_t size);     /* operations in one repetition: time is reported per op */
    /* One repetition on heap h; sets *status to AM_OK or an AM_ERR_* and returns
     * the checksum. Every block it takes it returns (or the heap is reset after). */
    uint64_t (*run)(am_heap *h, am_job *job, int *status);
    /* The same checksum computed without the allocator under test. */
    uint64_t (*oracle)(am_job *job);
    int threaded;               /* creates its own threads and heaps, and sets am_job.timed_ns */
    /* Repetition seeds: a cell cycles through the seeds base, base + 1, ...
     * (am_seed_cycle: at least these), one repetition each, the next sample
     * going on where the last stopped, so that every row of a block runs the
     * same inputs in the same order (0 counts as 1). More where the work
     * itself depends on the seed (a random length: a heap's warm-up runs each
     * of these once). */
    unsigned seeds;
    /* Repetitions a heap runs, untimed, before it is measured (am-cell --age
     * overrides): where a strategy's state keeps changing over a program's
     * life (a Boost pool's free list fragments with every unordered free of
     * an array), the cell measures a heap of that age, not a new one. Every
     * row of a block gets the same age. 0 for most workloads. */
    unsigned age;
    /* Bytes the cell needs at once for this job, at least (its elements,
     * without any allocator's overhead), or NULL where they do not grow with
     * the size. Required where the oracle or the run loops over the size
     * before any allocation would fail: the cell refuses a job whose bytes
     * cannot be mapped as out of memory before that loop (am_workload_fits). */
    uint64_t (*min_bytes)(const am_job *job);
    /* The runner's extra tables and choices, read from --list: */
    const char *versus;      /* a row every strategy is also set against (NULL: none) */
    const char *bench_lines; /* the row of the benchmark lines of its latency figures (NULL: none) */
    int slowdown;            /* 1: a table of each param's time over param 0's */
    unsigned hyperfine;      /* hyperfine's pick when none is named: 1 first, 2 next, 0 never */
    const char *dimension;   /* the dimension of allocation it measures (NULL: none) */
} am_workload;

/* 0 when the job's min_bytes cannot be mapped now (past the machine's memory
 * or the address-space cap): the cell is out of memory before it starts. */
int am_workload_fits(const am_workload *w, const am_job *job);

AM_INLINE unsigned am_seed_count(const am_workload *w) { return w->seeds ? w->seeds : 1; }

/* The seeds a cell cycles through: a workload of several seeds (its values
 * random) gets enough of them that one cycle holds AM_CYCLE_OPS operations.
 * A branch predictor learns a few inputs that come round again and again:
 * four random lists of 1,010 ints sorted in turn ran 3x faster after a few
 * hundred repetitions, sixteen never did, and how much a side had learned
 * depended on how long its samples were, so minimal's time beside another row
 * moved with that row's (docs/measurements.md, "The partner learns its
 * inputs"). A program rarely sorts the same four lists; the cycle keeps the
 * values new to the predictor, as they are to a program. */
#define AM_CYCLE_OPS 65536.0
#define AM_MAX_SEEDS 8192u

AM_INLINE unsigned am_seed_cycle(const am_workload *w, size_t size) {
    unsigned declared = am_seed_count(w);
    if (declared < 2) return declared;
    double ops = w->ops ? w->ops(size) : 1.0, want = ops > 0 ? AM_CYCLE_OPS / ops : AM_MAX_SEEDS;
    if (want <= declared) return declared;
    return want >= AM_MAX_SEEDS ? AM_MAX_SEEDS : (unsigned)want + 1;
}

/* Wink-out (the `<workload>_drop` variants): a repetition may drop its
 * containers by resetting the heap only where reset frees live blocks
 * (allocator.h) of that heap alone. AM_OK, or AM_ERR_NA with the job's reason. */
AM_INLINE int am_drop_applies(am_job *job) {
#if !AM_RESET_FREES_LIVE
    job->reason = "reset does not free the blocks still live: nothing to drop";
    return AM_ERR_NA;
#elif AM_HEAPS_SHARE_STATE
    job->reason = "reset purges the pools every heap shares, not one container's heap";
    return AM_ERR_NA;
#else
    (void)job;
    return AM_OK;
#endif
}

/* Optional: a workload whose cells also vary in threads or param declares
 * `AM_SWEEP(name)` in workloads.def after its AM_WORKLOAD(name) line and defines
 * am_sweep_<name>. The runner then runs one cell per (size, threads, param). */
typedef struct am_sweep {
    const char *workload;
    const double *params;       /* param values, ended by a negative number; NULL: none */
    int threads;                /* 1: threads 1, 2, 4, ... up to the CPUs, and one step past */
    double (*ops)(const am_job *job); /* ops of one repetition given threads and param;
                                        NULL: the workload's ops(size) */
    const double *quick_params; /* the params --quick keeps, ended by a negative
                                   number; NULL: the first */
} am_sweep;

const am_sweep *am_sweep_find(const char *workload); /* NULL: no sweep */

/* the registry, from workloads/workloads.def */
extern const am_workload *const am_workloads[];
const am_workload *am_workload_find(const char *name);

/* The suite a workload belongs to: "default" (what `make bench` runs), or
 * the name of an `AM_SUITE(name)` line of workloads.def above it (a suite the
 * runner runs on request, `make bench SUITE=name`). */
const char *am_workload_suite(const am_workload *w);

/* Record an extra figure for the cell's output (latency, calibration ...). */
void am_job_metric(am_job *job, const char *name, double value);

/* A small, fast, seeded generator shared by workloads and oracles, so both
 * draw the same numbers. (splitmix64: no state beyond one word.) */
AM_INLINE uint64_t am_rand(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [0, n) for n > 0 */
AM_INLINE uint64_t am_rand_below(uint64_t *state, uint64_t n) {
    return am_rand(state) % n;
}

/* For reps(): `work` / (size + 10) + 1 repetitions, at most 1,000 (the usual
 * count of the 2009 Boost monotonic comparison), so that the first calibration sample stays short at any size. */
AM_INLINE unsigned am_reps_capped(size_t size, size_t work) {
    size_t r = work / (size + 10) + 1;
    return (unsigned)(r < 1000 ? r : 1000);
}

/* The sweeps of the 2009 Boost monotonic comparison: 10, 210, ..., 1810 and 10, 110, ..., 910 (its sort test). */
extern const size_t am_sizes_linear[];
extern const size_t am_sizes_linear_sort[];
extern const size_t am_sizes_log[]; /* 10, 100, ..., 10^6 with half-decades */

#endif
