/* inputs.h: the digest of what a cell's sample ran, the "inputs" of its JSON
 * line: every row of a block runs the same work, and two cells with equal
 * digests did. Included by cell_main.c alone. */
#ifndef AM_CELL_INPUTS_H
#define AM_CELL_INPUTS_H

#include <stdint.h>
#include <string.h>

#include "workload.h"

static uint64_t am_fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001B3ull;
    return h;
}

static uint64_t am_gcd(uint64_t x, uint64_t y) {
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x;
}

/* A digest of what a sample ran: the job's parameters, the age of its heap,
 * and each seed with its oracle checksum and its share of the repetitions (in
 * lowest terms, so that counts of 2K and 3K repetitions digest alike). Two
 * cells with equal digests ran the same inputs in the same proportions. */
static uint64_t am_inputs_digest(const char *workload, const am_job *job, uint64_t age, uint64_t seed0,
                                 unsigned seeds, unsigned reps, const uint64_t *oracle_sums) {
    uint64_t h = am_fnv(0xCBF29CE484222325ull, workload, strlen(workload));
    uint64_t size = job->size, threads = job->threads;
    h = am_fnv(h, &size, sizeof size);
    h = am_fnv(h, &threads, sizeof threads);
    h = am_fnv(h, &job->param, sizeof job->param);
    if (job->has_work_loops) h = am_fnv(h, &job->work_loops, sizeof job->work_loops);
    h = am_fnv(h, &age, sizeof age); /* the heap's state when measuring starts is part of the experiment */
    uint64_t share = 0;
    for (unsigned k = 0; k < seeds; k++) share = am_gcd(share, reps / seeds + (k < reps % seeds));
    for (unsigned k = 0; k < seeds; k++) {
        uint64_t seed = seed0 + k, count = (reps / seeds + (k < reps % seeds)) / share;
        h = am_fnv(h, &seed, sizeof seed);
        h = am_fnv(h, &count, sizeof count);
        h = am_fnv(h, &oracle_sums[k], sizeof oracle_sums[k]);
    }
    return h;
}

#endif
