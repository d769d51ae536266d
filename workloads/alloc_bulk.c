/* alloc_bulk.c: allocation pattern "bulk": all taken, then freed in the order taken
 * (FIFO). The size parameter is the block size; the body is in alloc_pattern.h. */
#include "alloc_pattern.h"

static uint64_t alloc_bulk_run(am_heap *h, am_job *job, int *status) {
    return ap_run(h, job, status, AP_BULK);
}

const am_workload am_workload_alloc_bulk = {
    "alloc_bulk", "10,000 blocks of `size` bytes taken, then freed in the order taken (time per pair)",
    ap_sizes, ap_sizes, ap_reps, ap_ops, alloc_bulk_run, ap_reference, 0, 1, 0, NULL};
