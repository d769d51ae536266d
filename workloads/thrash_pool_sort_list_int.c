/* thrash_pool_sort_list_int.c: the 2009 Boost monotonic comparison's fourth test. A
 * list<int> of len random values, sorted by the list's own merge sort, which relinks
 * nodes and allocates nothing: the allocator's part is len node allocations and frees,
 * and where those nodes lie, which the sort's pointer chasing feels. ops(len) = len:
 * values inserted, sorted and freed. */
#include <stdlib.h>
#include "checksum.h"

#define AM_LIST_NAME tpsl_list
#define AM_LIST_T int
#define AM_LIST_LESS(a, b) ((a) < (b))
#include "list.h"

static uint64_t thrash_pool_sort_list_int_run(am_heap *h, am_job *job, int *status) {
    uint64_t x = am_values_start(job->seed);
    tpsl_list l;
    tpsl_list_init(&l, h);
    for (size_t i = 0; i < job->size; i++) {
        if (tpsl_list_push_back(&l, am_value(&x))) {
            tpsl_list_destroy(&l);
            *status = AM_ERR_OOM;
            return 0;
        }
    }
    tpsl_list_sort(&l);
    am_escape(&l);
    uint64_t hash = AM_FNV_OFFSET;
    for (const tpsl_list_node *n = tpsl_list_first(&l); n; n = tpsl_list_next(n)) hash = am_fnv_add(hash, n->value);
    hash += tpsl_list_size(&l);
    tpsl_list_destroy(&l);
    *status = AM_OK;
    return hash;
}

/* the same values in a malloc'd array, sorted by the C library's qsort */
static uint64_t thrash_pool_sort_list_int_oracle(am_job *job) {
    uint64_t x = am_values_start(job->seed);
    size_t n = job->size;
    int *a = malloc((n ? n : 1) * sizeof *a);
    if (!a) return 0;
    for (size_t i = 0; i < n; i++) a[i] = am_value(&x);
    qsort(a, n, sizeof *a, am_compare_int);
    uint64_t hash = AM_FNV_OFFSET;
    for (size_t i = 0; i < n; i++) hash = am_fnv_add(hash, a[i]);
    free(a);
    return hash + n;
}

/* the 2009 comparison ran 100-1,000 repetitions; capped by size so that the first
 * calibration sample stays near a millisecond up to the log sweep's 10^6 */
static unsigned thrash_pool_sort_list_int_reps(size_t size) { return am_reps_capped(size, 20000); }
static double thrash_pool_sort_list_int_ops(size_t size) { return (double)size; }

static uint64_t thrash_pool_sort_list_int_min_bytes(const am_job *job) { return (uint64_t)job->size * sizeof(tpsl_list_node); }

const am_workload am_workload_thrash_pool_sort_list_int = {
    .name = "thrash_pool_sort_list_int",
    .summary = "list<int> of len random values, list merge sort (relinks nodes) (2009 Boost monotonic comparison)",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = thrash_pool_sort_list_int_reps,
    .ops = thrash_pool_sort_list_int_ops,
    .run = thrash_pool_sort_list_int_run,
    .oracle = thrash_pool_sort_list_int_oracle,
    .threaded = 0,
    .seeds = 4,
    .age = 0,
    .min_bytes = thrash_pool_sort_list_int_min_bytes,
};
