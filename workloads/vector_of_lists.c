/* vector_of_lists.c: a nested container, vector<list<int>> with the allocator
 * propagated: len values appended round-robin to len / 16 + 1 lists, read back,
 * then every list and the vector destroyed (vector_of_lists.h).
 * ops = len: values appended. */
#include "vector_of_lists.h"

static uint64_t vector_of_lists_run(am_heap *h, am_job *job, int *status) {
    vol_vec v;
    *status = vol_build(h, job, &v);
    if (*status != AM_OK) return 0;
    uint64_t sum = vol_checksum(&v);
    vol_destroy(&v);
    return sum;
}

const am_workload am_workload_vector_of_lists = {
    .name = "vector_of_lists",
    .summary = "vector<list<int>>, the lists on the vector's heap: len values appended round-robin to len/16 + 1 lists, "
        "read, destroyed",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = vol_reps,
    .ops = vol_ops,
    .run = vector_of_lists_run,
    .oracle = vol_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = vol_min_bytes,
    .dimension = "nested containers",
};
