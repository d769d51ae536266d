/* vector_of_lists.h: what vector_of_lists and vector_of_lists_drop share: a
 * vector<list<int>> of len / 16 + 1 lists whose nodes come from the vector's
 * heap (the allocator propagated to the inner containers, as the nested
 * containers of Bloomberg's allocator study), len values appended round-robin
 * so that each list's nodes interleave with the others', and its checksum.
 * Not a workload itself. */
#ifndef AM_VECTOR_OF_LISTS_H
#define AM_VECTOR_OF_LISTS_H

#include <stdlib.h>
#include "checksum.h"

#define AM_LIST_NAME vol_list
#define AM_LIST_T int
#include "list.h"

#define AM_VEC_NAME vol_vec
#define AM_VEC_T vol_list
#include "vector.h"

AM_INLINE size_t vol_lists(size_t len) { return len / 16 + 1; }
AM_INLINE int vol_value(const am_job *job, size_t i) { return (int)((job->seed & 0xffff) + i); }

static uint64_t vol_min_bytes(const am_job *job) { return (uint64_t)job->size * sizeof(vol_list_node); }

/* every list and the vector itself; the vector stays usable (empty). These
 * are forced inline so that each run function holds its own loops (two
 * callers would otherwise share one out-of-line copy). */
AM_FORCE_INLINE void vol_destroy(vol_vec *v) {
    for (size_t k = 0; k < v->size; k++) vol_list_destroy(&v->data[k]);
    vol_vec_destroy(v);
}

/* Builds the vector on h; AM_ERR_OOM (and nothing live) or AM_OK. */
AM_FORCE_INLINE int vol_build(am_heap *h, const am_job *job, vol_vec *v) {
    size_t lists = vol_lists(job->size);
    vol_vec_init(v, h);
    for (size_t k = 0; k < lists; k++) {
        vol_list l;
        vol_list_init(&l, h);
        if (vol_vec_push_back(v, l)) { vol_destroy(v); return AM_ERR_OOM; }
    }
    for (size_t i = 0, k = 0; i < job->size; i++) {
        if (vol_list_push_back(&v->data[k], vol_value(job, i))) { vol_destroy(v); return AM_ERR_OOM; }
        if (++k == lists) k = 0;
    }
    am_escape(v->data);
    return AM_OK;
}

/* the lists in order, each one's values in order */
AM_FORCE_INLINE uint64_t vol_checksum(const vol_vec *v) {
    uint64_t hash = AM_FNV_OFFSET;
    for (size_t k = 0; k < v->size; k++) {
        hash = am_fnv_add(hash, (uint32_t)v->data[k].size);
        for (const vol_list_node *n = v->data[k].head; n; n = n->next) hash = am_fnv_add(hash, (uint32_t)n->value);
    }
    return hash;
}

/* list k holds the values k, k + lists, k + 2 lists, ... of the sequence */
static uint64_t vol_oracle(am_job *job) {
    size_t lists = vol_lists(job->size), len = job->size;
    uint64_t hash = AM_FNV_OFFSET;
    for (size_t k = 0; k < lists; k++) {
        hash = am_fnv_add(hash, (uint32_t)(len / lists + (k < len % lists)));
        for (size_t i = k; i < len; i += lists) hash = am_fnv_add(hash, (uint32_t)vol_value(job, i));
    }
    return hash;
}

static unsigned vol_reps(size_t size) { return am_reps_capped(size, 50000); }
static double vol_ops(size_t size) { return (double)size; }

#endif
