/* thrash_pool_sort.c: the 2009 Boost monotonic comparison's third test. A vector<int>
 * resized to a random length in [0, len], then len random values pushed back (so it
 * grows while full), then sorted. The vector that grows is where pools of fixed-size
 * chunks were many times slower than malloc in its tables. */
#include <stdlib.h>
#include "checksum.h"

#define AM_VEC_NAME tps_vec
#define AM_VEC_T int
#define AM_VEC_LESS(a, b) ((a) < (b))
#include "vector.h"

static uint64_t thrash_pool_sort_run(am_heap *h, am_job *job, int *status) {
    uint64_t rng = job->seed;
    size_t len = job->size;
    size_t n0 = (size_t)am_rand_below(&rng, len + 1);
    uint64_t x = am_values_start(job->seed);
    tps_vec v;
    tps_vec_init(&v, h);
    if (tps_vec_resize(&v, n0)) { *status = AM_ERR_OOM; return 0; }
    for (size_t i = 0; i < len; i++) {
        if (tps_vec_push_back(&v, am_value(&x))) {
            tps_vec_destroy(&v);
            *status = AM_ERR_OOM;
            return 0;
        }
    }
    if (!job->aging) tps_vec_sort(&v); /* in place: the heap ages the same without it */
    am_escape(v.data);
    uint64_t hash = AM_FNV_OFFSET;
    for (size_t i = 0; i < v.size; i++) hash = am_fnv_add(hash, v.data[i]);
    hash += v.size;
    tps_vec_destroy(&v);
    *status = AM_OK;
    return hash;
}

/* the same values in a malloc'd array, sorted by the C library's qsort */
static uint64_t thrash_pool_sort_oracle(am_job *job) {
    uint64_t rng = job->seed;
    size_t len = job->size;
    size_t n0 = (size_t)am_rand_below(&rng, len + 1);
    uint64_t x = am_values_start(job->seed);
    size_t n = n0 + len;
    int *a = calloc(n ? n : 1, sizeof *a);
    if (!a) return 0;
    for (size_t i = 0; i < len; i++) a[n0 + i] = am_value(&x);
    qsort(a, n, sizeof *a, am_compare_int);
    uint64_t hash = AM_FNV_OFFSET;
    for (size_t i = 0; i < n; i++) hash = am_fnv_add(hash, a[i]);
    free(a);
    return hash + n;
}

/* the 2009 comparison ran 1,000 repetitions; this starts near a millisecond a sample */
static unsigned thrash_pool_sort_reps(size_t size) { return (unsigned)(20000 / (size + 10)) + 1; }
static double thrash_pool_sort_ops(size_t size) { return (double)size; } /* values pushed back and sorted */

const am_workload am_workload_thrash_pool_sort = {
    .name = "thrash_pool_sort",
    .summary = "vector<int> resized to a random length in [0, len], len random values pushed back, sorted (2009 Boost monotonic comparison)",
    .sizes = am_sizes_linear_sort,
    .log_sizes = am_sizes_log,
    .reps = thrash_pool_sort_reps,
    .ops = thrash_pool_sort_ops,
    .run = thrash_pool_sort_run,
    .oracle = thrash_pool_sort_oracle,
    .threaded = 0,
    .seeds = 16,
    /* the 2009 comparison ran each size 1,000 times in one process, with one
     * pool for the program's life (docs/measurements.md: pool age) */
    .age = 1000,
    .min_bytes = NULL,
};
