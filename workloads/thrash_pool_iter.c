/* thrash_pool_iter.c: the 2009 Boost monotonic comparison's second test. A vector of
 * {int; char} of length len, value-initialised, filled, then its char fields summed:
 * one block per repetition, so mostly the cost of touching len unaligned-size
 * elements. */
#include "workload.h"

typedef struct tpi_elem {
    int n;
    char c;
} tpi_elem;

#define AM_VEC_NAME tpi_vec
#define AM_VEC_T tpi_elem
#include "vector.h"

AM_INLINE char tpi_char(size_t i, uint64_t seed) { return (char)((i + seed) & 0x7f); }

static uint64_t thrash_pool_iter_run(am_heap *h, am_job *job, int *status) {
    tpi_vec v;
    tpi_vec_init(&v, h);
    if (tpi_vec_resize(&v, job->size)) { *status = AM_ERR_OOM; return 0; }
    /* n += i reads the value-initialised zero, so the zeroing is part of the result */
    for (size_t i = 0; i < v.size; i++) {
        v.data[i].n += (int)i;
        v.data[i].c = tpi_char(i, job->seed);
    }
    am_escape(v.data);
    uint64_t chars = 0, ints = 0;
    for (size_t i = 0; i < v.size; i++) {
        chars += (uint64_t)(unsigned char)v.data[i].c;
        ints += (uint64_t)v.data[i].n;
    }
    tpi_vec_destroy(&v);
    *status = AM_OK;
    return chars + (ints << 20);
}

static uint64_t thrash_pool_iter_oracle(am_job *job) {
    uint64_t chars = 0, n = job->size;
    for (size_t i = 0; i < job->size; i++) chars += (uint64_t)(unsigned char)tpi_char(i, job->seed);
    return chars + ((n * (n - (n ? 1 : 0)) / 2) << 20);
}

/* a start of about a millisecond a sample; the cell's calibration grows it
 * (the 2009 comparison ran 50,000 repetitions at every length) */
static unsigned thrash_pool_iter_reps(size_t size) { return (unsigned)(200000 / (size + 10)) + 1; }
static double thrash_pool_iter_ops(size_t size) { return (double)size; } /* elements */

static uint64_t thrash_pool_iter_min_bytes(const am_job *job) { return (uint64_t)job->size * sizeof(tpi_elem); }

const am_workload am_workload_thrash_pool_iter = {
    .name = "thrash_pool_iter",
    .summary = "vector<{int; char}>(len) value-initialised, filled, char fields summed (2009 Boost monotonic comparison)",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = thrash_pool_iter_reps,
    .ops = thrash_pool_iter_ops,
    .run = thrash_pool_iter_run,
    .oracle = thrash_pool_iter_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = thrash_pool_iter_min_bytes,
};
