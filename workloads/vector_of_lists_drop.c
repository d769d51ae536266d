/* vector_of_lists_drop.c: wink-out on a nested container. vector_of_lists'
 * vector of lists, but instead of destroying every list and the vector the
 * heap is reset, every block released at once. Only for rows whose reset frees
 * blocks still live (allocator.h: RESET_FREES_LIVE) and whose heaps are their
 * own; elsewhere (malloc; fast_pool, whose reset purges the pools every heap
 * shares) not applicable. ops = len: values appended. */
#include "vector_of_lists.h"

static uint64_t vector_of_lists_drop_run(am_heap *h, am_job *job, int *status) {
    *status = am_drop_applies(job);
    if (*status != AM_OK) return 0;
    vol_vec v;
    *status = vol_build(h, job, &v);
    if (*status != AM_OK) return 0;
    uint64_t sum = vol_checksum(&v);
    am_reset(h);
    return sum;
}

const am_workload am_workload_vector_of_lists_drop = {
    .name = "vector_of_lists_drop",
    .summary = "vector_of_lists, the heap reset instead of the lists and vector destroyed (wink-out; rows whose reset "
        "frees live blocks)",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = vol_reps,
    .ops = vol_ops,
    .run = vector_of_lists_drop_run,
    .oracle = vol_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = vol_min_bytes,
    .dimension = "wink-out",
};
