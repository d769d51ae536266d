/* vector_dupe.c: a vector<int> of len values built by push_back, deep-copied
 * into a second vector from the same heap, and the copy summed: two blocks
 * live at once, the copy allocated at its exact size. */
#include "workload.h"

#define AM_VEC_NAME vd_vec
#define AM_VEC_T int
#include "vector.h"

AM_INLINE int vd_value(size_t i, uint64_t seed) {
    return (int)(((uint32_t)i * 2654435761u ^ (uint32_t)seed) & 0x7fffffff);
}

static uint64_t vector_dupe_run(am_heap *h, am_job *job, int *status) {
    vd_vec v, copy;
    vd_vec_init(&v, h);
    for (size_t i = 0; i < job->size; i++) {
        if (vd_vec_push_back(&v, vd_value(i, job->seed))) {
            vd_vec_destroy(&v);
            *status = AM_ERR_OOM;
            return 0;
        }
    }
    if (vd_vec_copy(&copy, &v, h)) {
        vd_vec_destroy(&v);
        *status = AM_ERR_OOM;
        return 0;
    }
    am_escape(copy.data);
    /* weighted by position, so the copy must keep the order */
    uint64_t sum = 0;
    for (size_t i = 0; i < copy.size; i++) sum += (uint64_t)copy.data[i] * (i + 1);
    vd_vec_destroy(&copy);
    vd_vec_destroy(&v);
    *status = AM_OK;
    return sum;
}

static uint64_t vector_dupe_oracle(am_job *job) {
    uint64_t sum = 0;
    for (size_t i = 0; i < job->size; i++) sum += (uint64_t)vd_value(i, job->seed) * (i + 1);
    return sum;
}

static unsigned vector_dupe_reps(size_t size) { return (unsigned)(200000 / (size + 10)) + 1; }
static double vector_dupe_ops(size_t size) { return (double)size; } /* elements built, copied and summed */

static uint64_t vector_dupe_min_bytes(const am_job *job) { return 2 * (uint64_t)job->size * sizeof(int); }

const am_workload am_workload_vector_dupe = {
    .name = "vector_dupe",
    .summary = "vector<int> of len values built by push_back, deep-copied, the copy summed",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = vector_dupe_reps,
    .ops = vector_dupe_ops,
    .run = vector_dupe_run,
    .oracle = vector_dupe_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = vector_dupe_min_bytes,
};
