/* size_mix.c: variation of sizes. len blocks whose sizes are drawn from a named
 * distribution (the param: 0 uniform, 1 power-of-two classes, 2 exponential
 * falloff, 3 Pareto tail) are all taken, then freed in a shuffled order, as in
 * alloc_shuffled. Each block's first word, and its last where the two do not
 * overlap, are written at allocation and read back at its free. The sizes and the order are drawn per seed
 * before anything is timed (the oracle draws them, before any heap exists),
 * so the timed loop only reads two tables. ops = len: alloc+free pairs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "checksum.h"

#define SM_SEEDS 4
#define SM_MAX 32768 /* no distribution draws a block above this */

enum { SM_UNIFORM, SM_POWER_OF_TWO, SM_EXPONENTIAL, SM_PARETO, SM_DISTRIBUTIONS };

/* uniform in [0, 1), 53 bits */
static double sm_unit(uint64_t *x) { return (double)(am_values_next(x) >> 11) * (1.0 / 9007199254740992.0); }

/* One size of a distribution: uniform in [8, 1024]; 2^k for k uniform in
 * [3, 10]; 8 + an exponential of mean 120 bytes (small blocks most likely,
 * falling off exponentially, as rpmalloc's benchmark draws them); 16 / U^(1/1.2),
 * a Pareto tail (most blocks small, a few up to SM_MAX). */
uint32_t am_size_mix_size(int distribution, uint64_t *x) {
    double s;
    switch (distribution) {
    case SM_UNIFORM: return 8 + am_value_below(x, 1017);
    case SM_POWER_OF_TWO: return (uint32_t)1 << (3 + am_value_below(x, 8));
    case SM_EXPONENTIAL: s = 8 - 120 * log(1 - sm_unit(x)); break;
    default: s = 16 / pow(1 - sm_unit(x), 1 / 1.2); break;
    }
    return s < SM_MAX ? (uint32_t)s : SM_MAX;
}

/* a seed's sizes and free order, kept for the cell's life (one slot a seed),
 * and room for the blocks' addresses */
typedef struct sm_table {
    uint32_t *sizes, *order;
    void **block;
    size_t len;
    uint64_t seed;
    int distribution;
} sm_table;

static sm_table sm_tables[SM_SEEDS];

static int sm_distribution(const am_job *job) {
    int d = (int)job->param;
    return d >= 0 && d < SM_DISTRIBUTIONS ? d : SM_UNIFORM;
}

static void sm_table_free(sm_table *t) {
    free(t->sizes);
    free(t->order);
    free(t->block);
    t->sizes = t->order = NULL;
    t->block = NULL;
}

static sm_table *sm_table_for(const am_job *job) {
    sm_table *t = &sm_tables[job->seed % SM_SEEDS];
    int d = sm_distribution(job);
    if (t->sizes && t->len == job->size && t->seed == job->seed && t->distribution == d) return t;
    sm_table_free(t);
    size_t n = job->size ? job->size : 1;
    t->sizes = malloc(n * sizeof *t->sizes);
    t->order = malloc(n * sizeof *t->order);
    t->block = malloc(n * sizeof *t->block);
    if (!t->sizes || !t->order || !t->block) {
        sm_table_free(t);
        return NULL;
    }
    t->len = job->size;
    t->seed = job->seed;
    t->distribution = d;
    uint64_t x = am_values_start(job->seed);
    for (size_t i = 0; i < job->size; i++) {
        t->sizes[i] = am_size_mix_size(d, &x);
        t->order[i] = (uint32_t)i;
    }
    for (size_t i = job->size; i > 1; i--) { /* Fisher-Yates */
        size_t j = am_value_below(&x, i);
        uint32_t k = t->order[i - 1];
        t->order[i - 1] = t->order[j];
        t->order[j] = k;
    }
    return t;
}

AM_INLINE uint64_t sm_value(uint64_t seed, size_t i) { return seed * 0x9E3779B97F4A7C15ull + i; }

static uint64_t size_mix_run(am_heap *h, am_job *job, int *status) {
    sm_table *t = sm_table_for(job);
    uint64_t base = sm_value(job->seed, 0), sum = 0;
    *status = AM_OK;
    if (!t) { *status = AM_ERR_FAILED; return 0; }
    void **block = t->block;
    size_t i;
    for (i = 0; i < job->size; i++) {
        size_t n = t->sizes[i];
        char *p = am_alloc(h, n);
        if (AM_UNLIKELY(!p)) { *status = AM_ERR_OOM; break; }
        uint64_t v = base + i;
        memcpy(p, &v, sizeof v);
        if (n >= 2 * sizeof v) memcpy(p + n - sizeof v, &v, sizeof v);
        am_escape(p);
        block[i] = p;
    }
    for (size_t k = 0; k < job->size; k++) {
        size_t j = t->order[k], n = t->sizes[j];
        if (j >= i) continue; /* not taken: out of memory came first */
        uint64_t a, b = 0;
        const char *p = block[j];
        memcpy(&a, p, sizeof a);
        if (n >= 2 * sizeof b) memcpy(&b, p + n - sizeof b, sizeof b);
        sum += a + b + n;
        am_free(h, block[j], n);
    }
    return *status == AM_OK ? sum : 0;
}

static uint64_t size_mix_oracle(am_job *job) {
    const sm_table *t = sm_table_for(job);
    if (!t) return 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < job->size; i++)
        sum += (t->sizes[i] >= 16 ? 2 : 1) * sm_value(job->seed, i) + t->sizes[i];
    return sum;
}

static const size_t size_mix_sizes[] = {10000, 0};
static const size_t size_mix_log_sizes[] = {1000, 10000, 100000, 0};
static const double size_mix_params[] = {SM_UNIFORM, SM_POWER_OF_TWO, SM_EXPONENTIAL, SM_PARETO, -1};

static unsigned size_mix_reps(size_t size) { return am_reps_capped(size, 40000); }
static double size_mix_ops(size_t size) { return (double)size; }

/* the oracle's tables alone (sm_table_for) */
static uint64_t size_mix_min_bytes(const am_job *job) {
    const sm_table *t = &sm_tables[0];
    return (uint64_t)job->size * (sizeof *t->sizes + sizeof *t->order + sizeof *t->block);
}

const am_workload am_workload_size_mix = {
    .name = "size_mix",
    .summary = "len blocks of sizes drawn from a distribution (param: 0 uniform 8-1024 B, 1 powers of two 8-1024 B, "
        "2 exponential falloff, 3 Pareto tail), taken, then freed shuffled",
    .sizes = size_mix_sizes,
    .log_sizes = size_mix_log_sizes,
    .reps = size_mix_reps,
    .ops = size_mix_ops,
    .run = size_mix_run,
    .oracle = size_mix_oracle,
    .threaded = 0,
    .seeds = SM_SEEDS,
    .age = 0,
    .min_bytes = size_mix_min_bytes,
    .dimension = "variation",
};

const am_sweep am_sweep_size_mix = {
    .workload = "size_mix",
    .params = size_mix_params,
    .threads = 0,
    .ops = NULL,
};
