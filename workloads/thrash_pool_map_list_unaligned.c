/* thrash_pool_map_list_unaligned.c: the 2009 Boost monotonic comparison's fifth
 * test. A map<int, list<{int; char}>>: len times, a random key in [0, len/10]
 * gets the next record appended to its list. Two node sizes (tree and list)
 * interleave, and a pool per size is what Boost's pool_allocator was slowest
 * at in that comparison.
 * ops(len) = len: records appended. */
#include <stdlib.h>
#include "checksum.h"

/* The comparison's "unaligned" element: 5 bytes of data, 8 as C lays it out (the
 * int's 4-byte alignment pads the char). A list node is 2 pointers + 8 bytes. */
typedef struct tpm_rec {
    int n;
    char c;
} tpm_rec;

#define AM_LIST_NAME tpm_list
#define AM_LIST_T tpm_rec
#include "list.h"

#define AM_MAP_NAME tpm_map
#define AM_MAP_K int
#define AM_MAP_V tpm_list
#define AM_MAP_VALUE_INIT(vp, heap) tpm_list_init(vp, heap)
#define AM_MAP_VALUE_DESTROY(vp) tpm_list_destroy(vp)
#include "map.h"

static uint64_t thrash_pool_map_list_unaligned_run(am_heap *h, am_job *job, int *status) {
    uint64_t x = am_values_start(job->seed);
    size_t len = job->size;
    uint64_t keys = len / 10 + 1; /* the comparison's rand() % (len/10), without the % 0 at len < 10 */
    tpm_map m;
    tpm_map_init(&m, h);
    for (size_t i = 0; i < len; i++) {
        int k = (int)am_value_below(&x, keys);
        tpm_list *l = tpm_map_find_or_insert(&m, k, NULL);
        tpm_rec r;
        r.n = (int)i;
        r.c = (char)i;
        if (!l || tpm_list_push_back(l, r)) {
            tpm_map_destroy(&m);
            *status = AM_ERR_OOM;
            return 0;
        }
    }
    am_escape(&m);
    /* keys in order, each list in insertion order */
    uint64_t hash = AM_FNV_OFFSET;
    for (const tpm_map_node *e = tpm_map_first(&m); e; e = tpm_map_next(e)) {
        hash = am_fnv_add(hash, (uint32_t)e->key);
        for (const tpm_list_node *n = tpm_list_first(&e->value); n; n = tpm_list_next(n)) {
            hash = am_fnv_add(hash, (uint32_t)n->value.n);
            hash = am_fnv_add(hash, (unsigned char)n->value.c);
        }
    }
    hash += tpm_map_size(&m);
    tpm_map_destroy(&m);
    *status = AM_OK;
    return hash;
}

/* the same grouping by a counting sort on plain arrays: a bucket per key,
 * records in the order they were drawn */
static uint64_t thrash_pool_map_list_unaligned_oracle(am_job *job) {
    uint64_t x = am_values_start(job->seed);
    size_t len = job->size;
    size_t keys = len / 10 + 1;
    size_t *key_of = malloc((len ? len : 1) * sizeof *key_of);
    size_t *start = calloc(keys + 1, sizeof *start);
    size_t *order = malloc((len ? len : 1) * sizeof *order);
    uint64_t hash = 0;
    if (!key_of || !start || !order) goto out;
    for (size_t i = 0; i < len; i++) {
        key_of[i] = (size_t)am_value_below(&x, keys);
        start[key_of[i] + 1]++;
    }
    size_t used = 0;
    for (size_t k = 0; k < keys; k++) {
        used += start[k + 1] != 0;
        start[k + 1] += start[k];
    }
    for (size_t i = 0; i < len; i++) order[start[key_of[i]]++] = i; /* start[k] ends at bucket k's end */
    hash = AM_FNV_OFFSET;
    size_t at = 0;
    for (size_t k = 0; k < keys; k++) {
        if (at == start[k]) continue;
        hash = am_fnv_add(hash, (uint32_t)k);
        for (; at < start[k]; at++) {
            hash = am_fnv_add(hash, (uint32_t)order[at]);
            hash = am_fnv_add(hash, (unsigned char)(char)order[at]);
        }
    }
    hash += used;
out:
    free(key_of);
    free(start);
    free(order);
    return hash;
}

/* the 2009 comparison ran 1,000 repetitions; capped by size (see thrash_pool_sort_list_int.c) */
static unsigned thrash_pool_map_list_unaligned_reps(size_t size) {
    return am_reps_capped(size, 20000);
}
static double thrash_pool_map_list_unaligned_ops(size_t size) { return (double)size; }

static uint64_t thrash_pool_map_list_unaligned_min_bytes(const am_job *job) { return (uint64_t)job->size * sizeof(tpm_list_node); }

const am_workload am_workload_thrash_pool_map_list_unaligned = {
    .name = "thrash_pool_map_list_unaligned",
    .summary = "map<int, list<{int; char}>>: len records appended to the lists of random keys in [0, len/10] (2009 Boost monotonic comparison)",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = thrash_pool_map_list_unaligned_reps,
    .ops = thrash_pool_map_list_unaligned_ops,
    .run = thrash_pool_map_list_unaligned_run,
    .oracle = thrash_pool_map_list_unaligned_oracle,
    .threaded = 0,
    .seeds = 4,
    .age = 0,
    .min_bytes = thrash_pool_map_list_unaligned_min_bytes,
    .hyperfine = 1,
};
