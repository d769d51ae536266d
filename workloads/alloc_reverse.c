/* alloc_reverse.c: allocation pattern "reverse": all taken, then freed newest first
 * (LIFO). The size parameter is the block size; the body is in alloc_pattern.h. */
#include "alloc_pattern.h"

static uint64_t alloc_reverse_run(am_heap *h, am_job *job, int *status) {
    return ap_run(h, job, status, AP_REVERSE);
}

const am_workload am_workload_alloc_reverse = {
    "alloc_reverse", "10,000 blocks of `size` bytes taken, then freed in reverse order (time per pair)",
    ap_sizes, ap_sizes, ap_reps, ap_ops, alloc_reverse_run, ap_reference, 0, 1, 0, NULL};
