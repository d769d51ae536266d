/* list_create.c: a list of len ints built by push_back, then destroyed front
 * to back. Nothing but node allocations and frees in list order: the cost of
 * one small allocate + free pair, with the list's links around it.
 * ops(len) = len: nodes allocated and freed. */
#include "list_create.h"

static uint64_t list_create_run(am_heap *h, am_job *job, int *status) {
    lc_list l;
    *status = lc_build(h, job, &l);
    if (*status != AM_OK) return 0;
    uint64_t sum = lc_checksum(&l);
    lc_list_destroy(&l);
    return sum;
}

const am_workload am_workload_list_create = {
    .name = "list_create",
    .summary = "list<int> of len values built by push_back, then destroyed",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = lc_reps,
    .ops = lc_ops,
    .run = list_create_run,
    .oracle = lc_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = lc_min_bytes,
};
