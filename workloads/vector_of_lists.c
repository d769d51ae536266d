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
    "vector_of_lists",
    "vector<list<int>>, the lists on the vector's heap: len values appended round-robin to len/16 + 1 lists, "
    "read, destroyed",
    am_sizes_linear, am_sizes_log, vol_reps, vol_ops, vector_of_lists_run, vol_reference, 0, 1, 0, vol_min_bytes};
