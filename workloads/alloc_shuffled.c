/* alloc_shuffled.c: allocation pattern "shuffled": all taken, then freed in a seeded
 * random order, which scatters a free list. The size parameter is the block size; the
 * body is in alloc_pattern.h. */
#include "alloc_pattern.h"

static uint64_t alloc_shuffled_run(am_heap *h, am_job *job, int *status) {
    return ap_run(h, job, status, AP_SHUFFLED);
}

const am_workload am_workload_alloc_shuffled = {
    .name = "alloc_shuffled",
    .summary = "10,000 blocks of `size` bytes taken, then freed in a seeded shuffled order (time per pair)",
    .sizes = ap_sizes,
    .log_sizes = ap_sizes,
    .reps = ap_reps,
    .ops = ap_ops,
    .run = alloc_shuffled_run,
    .oracle = ap_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = NULL,
};
