/* list_iterate.c: a list of len ints built once, each push_back followed by
 * one node of a second, larger list (as other data a program allocates in
 * between); the second list is freed, then the first is summed over 20 passes.
 * A strategy that keeps sizes apart (pools, size classes) packs the int nodes
 * together; one that carves every size from one stream (a bump pointer,
 * glibc's top chunk) spreads them out. The passes are where that shows.
 * ops(len) = len * 20: nodes visited. */
#include "workload.h"

#define LI_PASSES 20

#define AM_LIST_NAME li_list
#define AM_LIST_T int
#include "list.h"

typedef struct li_other {
    int v;
    char payload[36]; /* 40 bytes: a node of 56, another size class than 24 */
} li_other;

#define AM_LIST_NAME li_olist
#define AM_LIST_T li_other
#include "list.h"

AM_INLINE int li_value(uint64_t seed, size_t i) { return (int)((seed + i * 7u) & 0xffff); }

static uint64_t list_iterate_run(am_heap *h, am_job *job, int *status) {
    li_list l;
    li_olist other;
    li_list_init(&l, h);
    li_olist_init(&other, h);
    li_other o;
    memset(&o, 0, sizeof o);
    for (size_t i = 0; i < job->size; i++) {
        o.v = (int)i;
        if (li_list_push_back(&l, li_value(job->seed, i)) || li_olist_push_back(&other, o)) {
            li_olist_destroy(&other);
            li_list_destroy(&l);
            *status = AM_ERR_OOM;
            return 0;
        }
    }
    am_escape(&other);
    li_olist_destroy(&other);
    am_escape(&l);
    uint64_t sum = 0;
    for (int pass = 0; pass < LI_PASSES; pass++) {
        AM_CLOBBER(); /* each pass reads the nodes again */
        for (const li_list_node *n = li_list_first(&l); n; n = li_list_next(n)) sum += (uint64_t)n->value;
    }
    li_list_destroy(&l);
    *status = AM_OK;
    return sum;
}

static uint64_t list_iterate_oracle(am_job *job) {
    uint64_t sum = 0;
    for (size_t i = 0; i < job->size; i++) sum += (uint64_t)li_value(job->seed, i);
    return sum * LI_PASSES;
}

/* no count from the 2009 Boost monotonic comparison: 1,000 repetitions capped by size, as its list tests */
static unsigned list_iterate_reps(size_t size) { return am_reps_capped(size, 10000); }
static double list_iterate_ops(size_t size) { return (double)size * LI_PASSES; }

static uint64_t list_iterate_min_bytes(const am_job *job) { return (uint64_t)job->size * (sizeof(li_list_node) + sizeof(li_olist_node)); }

const am_workload am_workload_list_iterate = {
    .name = "list_iterate",
    .summary = "list<int> of len values built interleaved with a list of 40-byte records, then summed over 20 passes",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = list_iterate_reps,
    .ops = list_iterate_ops,
    .run = list_iterate_run,
    .oracle = list_iterate_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = list_iterate_min_bytes,
};
