/* alloc_pair.c: allocation pattern "pair": alloc then free at once: the cost of the fast
 * path with a hot free list. The size parameter is the block size; the body is in
 * alloc_pattern.h. */
#include "alloc_pattern.h"

static uint64_t alloc_pair_run(am_heap *h, am_job *job, int *status) {
    return ap_run(h, job, status, AP_PAIR);
}

const am_workload am_workload_alloc_pair = {
    "alloc_pair", "one block of `size` bytes taken and freed at once, 10,000 times (time per pair)",
    ap_sizes, ap_sizes, ap_reps, ap_ops, alloc_pair_run, ap_reference, 0, 1, 0, NULL};
