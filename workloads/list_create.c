/* list_create.c: a list of len ints built by push_back, then destroyed front
 * to back. Nothing but node allocations and frees in list order: the cost of
 * one small allocate + free pair, with the list's links around it.
 * ops(len) = len: nodes allocated and freed. */
#include "workload.h"

#define AM_LIST_NAME lc_list
#define AM_LIST_T int
#include "list.h"

static uint64_t list_create_run(am_heap *h, am_job *job, int *status) {
    int base = (int)(job->seed & 0xffff);
    lc_list l;
    lc_list_init(&l, h);
    for (size_t i = 0; i < job->size; i++) {
        if (lc_list_push_back(&l, base + (int)i)) {
            lc_list_destroy(&l);
            *status = AM_ERR_OOM;
            return 0;
        }
    }
    am_escape(&l);
    uint64_t sum = lc_list_size(&l);
    if (l.head) sum += (uint64_t)l.head->value + (uint64_t)l.tail->value;
    lc_list_destroy(&l);
    *status = AM_OK;
    return sum;
}

static uint64_t list_create_reference(am_job *job) {
    uint64_t base = job->seed & 0xffff, n = job->size;
    return n ? n + base + base + n - 1 : 0;
}

/* no count from the 2009 Boost monotonic comparison: 1,000 repetitions capped by size, as its list tests */
static unsigned list_create_reps(size_t size) { return am_reps_capped(size, 50000); }
static double list_create_ops(size_t size) { return (double)size; }

const am_workload am_workload_list_create = {
    "list_create", "list<int> of len values built by push_back, then destroyed",
    am_sizes_linear, am_sizes_log, list_create_reps,
    list_create_ops, list_create_run, list_create_reference, 0, 1, 0};
