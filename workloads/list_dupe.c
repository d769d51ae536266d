/* list_dupe.c: a list of len ints, deep-copied into a second list on the same
 * heap, the copy walked, both destroyed. The copy's nodes are allocated while
 * the original's are live, so where they land shows in the walk.
 * ops(len) = len: elements copied (each also built, walked and freed). */
#include "checksum.h"

#define AM_LIST_NAME ld_list
#define AM_LIST_T int
#include "list.h"

AM_INLINE int ld_value(uint64_t seed, size_t i) { return (int)((seed * 2654435761u + i * 40503u) & 0x7fffffff); }

static uint64_t list_dupe_run(am_heap *h, am_job *job, int *status) {
    ld_list src, dup;
    ld_list_init(&src, h);
    for (size_t i = 0; i < job->size; i++) {
        if (ld_list_push_back(&src, ld_value(job->seed, i))) goto oom;
    }
    if (ld_list_copy(&dup, &src, h)) goto oom; /* leaves dup empty */
    am_escape(&src);
    am_escape(&dup);
    uint64_t hash = AM_FNV_OFFSET;
    for (const ld_list_node *n = ld_list_first(&dup); n; n = ld_list_next(n)) hash = am_fnv_add(hash, n->value);
    hash += ld_list_size(&dup);
    ld_list_destroy(&dup);
    ld_list_destroy(&src);
    *status = AM_OK;
    return hash;
oom:
    ld_list_destroy(&src);
    *status = AM_ERR_OOM;
    return 0;
}

static uint64_t list_dupe_oracle(am_job *job) {
    uint64_t hash = AM_FNV_OFFSET;
    for (size_t i = 0; i < job->size; i++) hash = am_fnv_add(hash, ld_value(job->seed, i));
    return hash + job->size;
}

/* no count from the 2009 Boost monotonic comparison: 1,000 repetitions capped by size, as its list tests */
static unsigned list_dupe_reps(size_t size) { return am_reps_capped(size, 25000); }
static double list_dupe_ops(size_t size) { return (double)size; }

static uint64_t list_dupe_min_bytes(const am_job *job) { return 2 * (uint64_t)job->size * sizeof(ld_list_node); }

const am_workload am_workload_list_dupe = {
    .name = "list_dupe",
    .summary = "list<int> of len values deep-copied on the same heap, the copy walked, both destroyed",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = list_dupe_reps,
    .ops = list_dupe_ops,
    .run = list_dupe_run,
    .oracle = list_dupe_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = list_dupe_min_bytes,
};
