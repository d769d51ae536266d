/* alloc_bulk.c: allocation pattern "bulk": all taken, then freed in the order taken
 * (FIFO). The size parameter is the block size; the body is in alloc_pattern.h. */
#include "alloc_pattern.h"

static uint64_t alloc_bulk_run(am_heap *h, am_job *job, int *status) {
    return ap_run(h, job, status, AP_BULK);
}

const am_workload am_workload_alloc_bulk = {
    .name = "alloc_bulk",
    .summary = "10,000 blocks of `size` bytes taken, then freed in the order taken (time per pair)",
    .sizes = ap_sizes,
    .log_sizes = ap_sizes,
    .reps = ap_reps,
    .ops = ap_ops,
    .run = alloc_bulk_run,
    .oracle = ap_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = NULL,
};
