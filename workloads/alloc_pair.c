/* alloc_pair.c: allocation pattern "pair": alloc then free at once: the cost of the fast
 * path with a hot free list. The size parameter is the block size; the body is in
 * alloc_pattern.h. */
#include "alloc_pattern.h"

static uint64_t alloc_pair_run(am_heap *h, am_job *job, int *status) {
    return ap_run(h, job, status, AP_PAIR);
}

const am_workload am_workload_alloc_pair = {
    .name = "alloc_pair",
    .summary = "one block of `size` bytes taken and freed at once, 10,000 times (time per pair)",
    .sizes = ap_sizes,
    .log_sizes = ap_sizes,
    .reps = ap_reps,
    .ops = ap_ops,
    .run = alloc_pair_run,
    .oracle = ap_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = NULL,
};
