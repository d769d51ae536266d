/* churn_traverse.c: locality, as in the locality test of Bloomberg's allocator
 * study (N4468, section 8). len int nodes in CT_SUBSYSTEMS lists (the
 * subsystems), each built in turn; then churned param x len times (the front
 * node of a random non-empty subsystem erased, a node appended to subsystem
 * c mod S, the same sequence for every row and seed); then each subsystem
 * traversed CT_PASSES times, every node incremented and summed; then destroyed.
 *
 * A local pool per subsystem is the row's choice: each subsystem has a heap of
 * its own (the cell's heap for the first, am_create for the others) where the
 * strategy's heaps are independent; where they are handles onto one shared
 * state (fast_pool), every subsystem uses the cell's heap. ops = len x
 * CT_PASSES: nodes visited by the traversal (the build and churn are timed too). */
#include <stdlib.h>
#include "checksum.h"

#define AM_LIST_NAME ct_list
#define AM_LIST_T int
#include "list.h"

#define CT_SUBSYSTEMS 16
#define CT_PASSES 16
#define CT_CHURN_SEED 0xC4u /* the churn's draws: one sequence for every seed */

/* the count of churn steps: param x len, param being a multiple of the nodes */
static uint64_t ct_steps(const am_job *job) {
    double c = job->param > 0 ? job->param * (double)job->size : 0;
    return c > 0 ? (uint64_t)c : 0;
}

/* nodes first given to subsystem s: len / S, the remainder to the first ones */
static size_t ct_initial(size_t len, unsigned s) {
    return len / CT_SUBSYSTEMS + (s < len % CT_SUBSYSTEMS);
}

AM_INLINE int ct_value(const am_job *job, uint64_t i) { return (int)((job->seed & 0xffff) + (i & 0xffff)); }

/* minimal reserves 1 GiB of address space a heap; a subsystem never holds more
 * than len nodes of one size, so its heaps reserve that much */
static void ct_heap_options(const am_job *job, am_options *o) {
    *o = job->options;
#ifdef AM_MINIMAL_H
    if (!o->initial_bytes) o->initial_bytes = (job->size + 64) * sizeof(ct_list_node) * 2 + ((size_t)1 << 16);
#endif
}

static void ct_teardown(ct_list *sub, am_heap **heaps, am_heap *h) {
    for (unsigned s = 0; s < CT_SUBSYSTEMS; s++) ct_list_destroy(&sub[s]);
    for (unsigned s = 0; s < CT_SUBSYSTEMS; s++)
        if (heaps[s] && heaps[s] != h) am_destroy(heaps[s]);
}

static uint64_t churn_traverse_run(am_heap *h, am_job *job, int *status) {
    ct_list sub[CT_SUBSYSTEMS];
    am_heap *heaps[CT_SUBSYSTEMS];
    am_options o;
    ct_heap_options(job, &o);
    *status = AM_OK;
    for (unsigned s = 0; s < CT_SUBSYSTEMS; s++) {
        heaps[s] = s == 0 || AM_HEAPS_SHARE_STATE ? h : am_create(&o);
        if (!heaps[s]) *status = AM_ERR_OOM;
        ct_list_init(&sub[s], heaps[s] ? heaps[s] : h);
    }
    am_job_metric(job, "heaps", AM_HEAPS_SHARE_STATE ? 1 : CT_SUBSYSTEMS);
    uint64_t i = 0;
    for (unsigned s = 0; s < CT_SUBSYSTEMS && *status == AM_OK; s++)
        for (size_t k = ct_initial(job->size, s); k > 0; k--)
            if (ct_list_push_back(&sub[s], ct_value(job, i++))) { *status = AM_ERR_OOM; break; }
    uint64_t x = am_values_start(CT_CHURN_SEED), steps = ct_steps(job);
    for (uint64_t c = 0; c < steps && *status == AM_OK; c++) {
        unsigned k;
        do k = am_value_below(&x, CT_SUBSYSTEMS);
        while (!sub[k].head);
        ct_list_pop_front(&sub[k]);
        if (ct_list_push_back(&sub[c % CT_SUBSYSTEMS], ct_value(job, c))) *status = AM_ERR_OOM;
    }
    uint64_t hash = AM_FNV_OFFSET;
    for (unsigned s = 0; s < CT_SUBSYSTEMS && *status == AM_OK; s++) {
        uint64_t sum = 0;
        for (int p = 0; p < CT_PASSES; p++)
            for (ct_list_node *n = sub[s].head; n; n = n->next) sum += (uint64_t)++n->value;
        hash = (hash ^ sum ^ ((uint64_t)sub[s].size << 40)) * 0x100000001B3ull;
    }
    am_escape(sub);
    ct_teardown(sub, heaps, h);
    return *status == AM_OK ? hash : 0;
}

/* The oracle's lists: index chains in plain arrays, next[] linking slots. */
#define CT_NONE ((size_t)-1)
typedef struct ct_chains {
    size_t *next;
    int *value;
    size_t head[CT_SUBSYSTEMS], tail[CT_SUBSYSTEMS], count[CT_SUBSYSTEMS];
} ct_chains;

static void ct_chain_append(ct_chains *c, unsigned s, size_t slot, int value) {
    c->value[slot] = value;
    c->next[slot] = CT_NONE;
    if (c->tail[s] == CT_NONE) c->head[s] = slot;
    else c->next[c->tail[s]] = slot;
    c->tail[s] = slot;
    c->count[s]++;
}

/* The same lists as chains; a churn step moves the erased node's slot to the
 * end of the other subsystem. */
static uint64_t churn_traverse_oracle(am_job *job) {
    size_t len = job->size, slots = len ? len : 1, used = 0;
    ct_chains chains;
    chains.next = malloc(slots * sizeof *chains.next);
    chains.value = malloc(slots * sizeof *chains.value);
    size_t *next = chains.next, *head = chains.head, *tail = chains.tail, *count = chains.count;
    int *value = chains.value;
    const size_t none = CT_NONE;
    uint64_t hash = 0;
    if (!next || !value) goto out;
    for (unsigned s = 0; s < CT_SUBSYSTEMS; s++) {
        head[s] = tail[s] = none;
        count[s] = 0;
        for (size_t k = ct_initial(len, s); k > 0; k--, used++) ct_chain_append(&chains, s, used, ct_value(job, used));
    }
    uint64_t x = am_values_start(CT_CHURN_SEED), steps = ct_steps(job);
    for (uint64_t c = 0; c < steps; c++) {
        unsigned k;
        do k = am_value_below(&x, CT_SUBSYSTEMS);
        while (head[k] == none);
        size_t slot = head[k];
        head[k] = next[slot];
        if (head[k] == none) tail[k] = none;
        count[k]--;
        ct_chain_append(&chains, (unsigned)(c % CT_SUBSYSTEMS), slot, ct_value(job, c));
    }
    hash = AM_FNV_OFFSET;
    for (unsigned s = 0; s < CT_SUBSYSTEMS; s++) {
        /* P passes add v + 1, ..., v + P for each node */
        uint64_t sum = 0;
        for (size_t n = head[s]; n != none; n = next[n]) sum += (uint64_t)CT_PASSES * (uint64_t)value[n];
        sum += (uint64_t)count[s] * CT_PASSES * (CT_PASSES + 1) / 2;
        hash = (hash ^ sum ^ ((uint64_t)count[s] << 40)) * 0x100000001B3ull;
    }
out:
    free(next);
    free(value);
    return hash;
}

static const size_t churn_traverse_sizes[] = {1u << 16, 0};
static const size_t churn_traverse_log_sizes[] = {1u << 12, 1u << 14, 1u << 16, 1u << 18, 1u << 20, 0};
/* churn steps as multiples of len: none, one, four */
static const double churn_traverse_params[] = {0, 1, 4, -1};

static unsigned churn_traverse_reps(size_t size) { return am_reps_capped(size, 1u << 16); }
static double churn_traverse_ops(size_t size) { return (double)size * CT_PASSES; }

static uint64_t churn_traverse_min_bytes(const am_job *job) { return (uint64_t)job->size * sizeof(ct_list_node); }

const am_workload am_workload_churn_traverse = {
    .name = "churn_traverse",
    .summary = "locality: len list nodes in 16 subsystems, churned param x len times, each traversed 16 times; "
        "a heap per subsystem where heaps are independent (Bloomberg's allocator study)",
    .sizes = churn_traverse_sizes,
    .log_sizes = churn_traverse_log_sizes,
    .reps = churn_traverse_reps,
    .ops = churn_traverse_ops,
    .run = churn_traverse_run,
    .oracle = churn_traverse_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = churn_traverse_min_bytes,
    .dimension = "locality",
};

const am_sweep am_sweep_churn_traverse = {
    .workload = "churn_traverse",
    .params = churn_traverse_params,
    .threads = 0,
    .ops = NULL,
};
