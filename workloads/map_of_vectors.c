/* map_of_vectors.c: a nested container, map<int, vector<int>> with the
 * allocator propagated (the vectors' storage from the map's heap): len values
 * appended to the vectors of len / 16 + 1 keys, visited in a scrambled key
 * order (value i goes to the key of i mod keys, a bijection of it), so tree
 * nodes and growing vectors interleave; read in key order, then destroyed.
 * ops = len: values appended. */
#include <stdlib.h>
#include "checksum.h"

#define AM_VEC_NAME mov_vec
#define AM_VEC_T int
#include "vector.h"

#define AM_MAP_NAME mov_map
#define AM_MAP_K int
#define AM_MAP_V mov_vec
#define AM_MAP_VALUE_INIT(vp, heap) mov_vec_init(vp, heap)
#define AM_MAP_VALUE_DESTROY(vp) mov_vec_destroy(vp)
#include "map.h"

#define MOV_SCRAMBLE 2654435761u /* a prime: r -> r * it mod keys is a bijection */

static size_t mov_keys(size_t len) { return len / 16 + 1; }
static int mov_key(size_t r, size_t keys) { return (int)((uint64_t)r * MOV_SCRAMBLE % keys); }
AM_INLINE int mov_value(const am_job *job, size_t i) { return (int)((job->seed & 0xffff) + i); }

static uint64_t map_of_vectors_run(am_heap *h, am_job *job, int *status) {
    size_t keys = mov_keys(job->size);
    mov_map m;
    mov_map_init(&m, h);
    for (size_t i = 0, r = 0; i < job->size; i++) {
        mov_vec *v = mov_map_find_or_insert(&m, mov_key(r, keys), NULL);
        if (!v || mov_vec_push_back(v, mov_value(job, i))) {
            mov_map_destroy(&m);
            *status = AM_ERR_OOM;
            return 0;
        }
        if (++r == keys) r = 0;
    }
    am_escape(&m);
    uint64_t hash = AM_FNV_OFFSET;
    for (const mov_map_node *e = mov_map_first(&m); e; e = mov_map_next(e)) {
        hash = am_fnv_add(hash, (uint32_t)e->key);
        for (size_t k = 0; k < e->value.size; k++) hash = am_fnv_add(hash, (uint32_t)e->value.data[k]);
    }
    hash += mov_map_size(&m);
    mov_map_destroy(&m);
    *status = AM_OK;
    return hash;
}

/* key k holds the values r, r + keys, r + 2 keys, ... where k = key(r) */
static uint64_t map_of_vectors_oracle(am_job *job) {
    size_t keys = mov_keys(job->size), len = job->size, used = len < keys ? len : keys;
    size_t *r_of = malloc(keys * sizeof *r_of);
    if (!r_of) return 0;
    for (size_t r = 0; r < keys; r++) r_of[mov_key(r, keys)] = r;
    uint64_t hash = AM_FNV_OFFSET;
    for (size_t k = 0; k < keys; k++) {
        if (r_of[k] >= len) continue; /* a key no value reached */
        hash = am_fnv_add(hash, (uint32_t)k);
        for (size_t i = r_of[k]; i < len; i += keys) hash = am_fnv_add(hash, (uint32_t)mov_value(job, i));
    }
    free(r_of);
    return hash + used;
}

static unsigned map_of_vectors_reps(size_t size) { return am_reps_capped(size, 50000); }
static double map_of_vectors_ops(size_t size) { return (double)size; }

static uint64_t map_of_vectors_min_bytes(const am_job *job) { return (uint64_t)job->size * sizeof(int); }

const am_workload am_workload_map_of_vectors = {
    .name = "map_of_vectors",
    .summary = "map<int, vector<int>>, the vectors on the map's heap: len values appended to the vectors of len/16 + 1 "
        "keys in a scrambled order, read in key order, destroyed",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = map_of_vectors_reps,
    .ops = map_of_vectors_ops,
    .run = map_of_vectors_run,
    .oracle = map_of_vectors_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = map_of_vectors_min_bytes,
    .dimension = "nested containers",
};
