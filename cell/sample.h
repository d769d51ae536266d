/* sample.h: one timed sample of a workload on a heap, the loop both rows of a
 * measured executable run (the cell's own, cell_main.c, and its partner's,
 * partner_row.c), each compiled with its own strategy inlined. */
#ifndef AM_SAMPLE_H
#define AM_SAMPLE_H

#include "stack_place.h"
#include "workload.h"

/* A strategy whose free does not reuse memory is reset after each repetition,
 * inside the timed region, as a program using it would; so is one that asks
 * for it (minimal: each repetition starts from a rewound buffer). */
#if !AM_FREE_REUSES || AM_S(_RESET_EACH_REPETITION)
#define AM_RESET_EACH_REPETITION 1
#else
#define AM_RESET_EACH_REPETITION 0
#endif

/* reps repetitions, cycling through the seeds seed, seed + 1, ..., seed +
 * seeds - 1 from seed + first; the time is the loop's, or for a threaded
 * workload the sum of what its repetitions timed. The workload's status. */
static AM_NOINLINE int am_sample_loop(const am_workload *w, am_heap *h, am_job *job, uint64_t seed, unsigned seeds,
                                      unsigned first, unsigned reps, uint64_t *checksum, uint64_t *ns) {
    uint64_t sum = 0, timed = 0;
    int status = AM_OK;
    unsigned k = first % seeds;
    uint64_t t0 = am_now_ns();
    for (unsigned r = 0; r < reps && status == AM_OK; r++) {
        job->seed = seed + k;
        if (++k == seeds) k = 0;
        job->timed_ns = 0;
        sum += w->run(h, job, &status);
        timed += job->timed_ns;
        if (AM_RESET_EACH_REPETITION) am_reset(h);
    }
    uint64_t wall = am_now_ns() - t0;
    *ns = w->threaded ? timed : wall;
    *checksum = sum;
    return status;
}

/* The sample's loop with its frame at one place on the stack (stack_place.h):
 * the same code, the row's or the partner's, finds its locals at the same
 * offsets within a page in every process. */
static int am_sample_run(const am_workload *w, am_heap *h, am_job *job, uint64_t seed, unsigned seeds,
                         unsigned first, unsigned reps, uint64_t *checksum, uint64_t *ns) {
    int status;
    AM_AT_STACK_PLACE(status = am_sample_loop(w, h, job, seed, seeds, first, reps, checksum, ns));
    return status;
}

#endif
