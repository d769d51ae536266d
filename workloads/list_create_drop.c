/* list_create_drop.c: wink-out. list_create's list, but instead of destroying
 * it node by node the heap is reset, every block released at once, as a
 * program drops an arena with the containers in it. Only for rows whose reset
 * frees blocks still live (allocator.h: RESET_FREES_LIVE) and whose heaps are
 * their own; elsewhere (malloc; fast_pool, whose reset purges the pools every
 * heap shares) not applicable. ops(len) = len: nodes allocated. */
#include "list_create.h"

static uint64_t list_create_drop_run(am_heap *h, am_job *job, int *status) {
    *status = am_drop_applies(job);
    if (*status != AM_OK) return 0;
    lc_list l;
    *status = lc_build(h, job, &l);
    if (*status != AM_OK) return 0;
    uint64_t sum = lc_checksum(&l);
    am_reset(h);
    return sum;
}

const am_workload am_workload_list_create_drop = {
    .name = "list_create_drop",
    .summary = "list_create, the heap reset instead of the list destroyed (wink-out; rows whose reset "
        "frees live blocks)",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = lc_reps,
    .ops = lc_ops,
    .run = list_create_drop_run,
    .oracle = lc_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = lc_min_bytes,
    .dimension = "wink-out",
};
