/* list_create.h: what list_create and list_create_drop share: a list<int> of
 * len values built by push_back on the workload's heap, and its checksum with
 * the oracle's. Not a workload itself. */
#ifndef AM_LIST_CREATE_H
#define AM_LIST_CREATE_H

#include "workload.h"

#define AM_LIST_NAME lc_list
#define AM_LIST_T int
#include "list.h"

/* Builds the list on h: AM_OK, or AM_ERR_OOM with nothing live. Forced
 * inline: each run function holds its own loops (two callers would otherwise
 * share one out-of-line copy). */
AM_FORCE_INLINE int lc_build(am_heap *h, const am_job *job, lc_list *l) {
    int base = (int)(job->seed & 0xffff);
    lc_list_init(l, h);
    for (size_t i = 0; i < job->size; i++) {
        if (lc_list_push_back(l, base + (int)i)) {
            lc_list_destroy(l);
            return AM_ERR_OOM;
        }
    }
    am_escape(l);
    return AM_OK;
}

static uint64_t lc_min_bytes(const am_job *job) { return (uint64_t)job->size * sizeof(lc_list_node); }

AM_FORCE_INLINE uint64_t lc_checksum(const lc_list *l) {
    uint64_t sum = lc_list_size(l);
    if (l->head) sum += (uint64_t)l->head->value + (uint64_t)l->tail->value;
    return sum;
}

static uint64_t lc_oracle(am_job *job) {
    uint64_t base = job->seed & 0xffff, n = job->size;
    return n ? n + base + base + n - 1 : 0;
}

/* no count from the 2009 Boost monotonic comparison: 1,000 repetitions capped by size, as its list tests */
static unsigned lc_reps(size_t size) { return am_reps_capped(size, 50000); }
static double lc_ops(size_t size) { return (double)size; }

#endif
