/* alloc_reverse.c: allocation pattern "reverse": all taken, then freed newest first
 * (LIFO). The size parameter is the block size; the body is in alloc_pattern.h. */
#include "alloc_pattern.h"

static uint64_t alloc_reverse_run(am_heap *h, am_job *job, int *status) {
    return ap_run(h, job, status, AP_REVERSE);
}

const am_workload am_workload_alloc_reverse = {
    .name = "alloc_reverse",
    .summary = "10,000 blocks of `size` bytes taken, then freed in reverse order (time per pair)",
    .sizes = ap_sizes,
    .log_sizes = ap_sizes,
    .reps = ap_reps,
    .ops = ap_ops,
    .run = alloc_reverse_run,
    .oracle = ap_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = NULL,
};
