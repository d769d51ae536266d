/* thrash_pool.c: the 2009 Boost monotonic comparison's first test. A vector<int>
 * resized to a random length in [0, len] and summed; the allocation is one block per
 * repetition, so this is the cost of a cold allocate, a zero-fill and a free. */
#include "workload.h"

#define AM_VEC_NAME tp_vec
#define AM_VEC_T int
#include "vector.h"

static uint64_t thrash_pool_run(am_heap *h, am_job *job, int *status) {
    uint64_t rng = job->seed;
    size_t n = (size_t)am_rand_below(&rng, job->size + 1);
    tp_vec v;
    am_owner_push("vector"); /* the counting wrapper's owner (AM_STATS builds only) */
    tp_vec_init(&v, h);
    if (tp_vec_resize(&v, n)) { am_owner_pop(); *status = AM_ERR_OOM; return 0; }
    uint64_t sum = 0;
    for (size_t i = 0; i < v.size; i++) {
        v.data[i] = (int)i; /* resize zero-fills; give the sum something to add */
        sum += (uint64_t)v.data[i];
    }
    am_escape(v.data);
    tp_vec_destroy(&v);
    am_owner_pop();
    *status = AM_OK;
    return sum + n;
}

static uint64_t thrash_pool_oracle(am_job *job) {
    uint64_t rng = job->seed;
    uint64_t n = am_rand_below(&rng, job->size + 1);
    return n * (n - (n ? 1 : 0)) / 2 + n;
}

static unsigned thrash_pool_reps(size_t size) { (void)size; return 64; }
static double thrash_pool_ops(size_t size) { (void)size; return 1; }

const am_workload am_workload_thrash_pool = {
    .name = "thrash_pool",
    .summary = "vector<int> resized to a random length in [0, len], then summed (2009 Boost monotonic comparison)",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = thrash_pool_reps,
    .ops = thrash_pool_ops,
    .run = thrash_pool_run,
    .oracle = thrash_pool_oracle,
    .threaded = 0,
    .seeds = 64,
    .age = 0,
    .min_bytes = NULL,
    .hyperfine = 2,
};
