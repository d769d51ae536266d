/* alloc_shuffled.c: allocation pattern "shuffled": all taken, then freed in a seeded
 * random order, which scatters a free list. The size parameter is the block size; the
 * body is in alloc_pattern.h. */
#include "alloc_pattern.h"

static uint64_t alloc_shuffled_run(am_heap *h, am_job *job, int *status) {
    return ap_run(h, job, status, AP_SHUFFLED);
}

const am_workload am_workload_alloc_shuffled = {
    "alloc_shuffled", "10,000 blocks of `size` bytes taken, then freed in a seeded shuffled order (time per pair)",
    ap_sizes, ap_sizes, ap_reps, ap_ops, alloc_shuffled_run, ap_reference, 0, 1, 0, NULL};
