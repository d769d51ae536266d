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

/* A digest of what a cell's samples ran: the job's parameters, the age of
 * its heap, and the seed cycle, each seed with its oracle checksum. Every
 * side of every row of a block goes through the cycle in the same order from
 * its first seed; two cells with equal digests ran the same inputs. */
static uint64_t am_inputs_digest(const char *workload, const am_job *job, uint64_t age, uint64_t seed0,
                                 unsigned seeds, const uint64_t *oracle_sums) {
    uint64_t h = am_fnv(0xCBF29CE484222325ull, workload, strlen(workload));
    uint64_t size = job->size, threads = job->threads;
    h = am_fnv(h, &size, sizeof size);
    h = am_fnv(h, &threads, sizeof threads);
    h = am_fnv(h, &job->param, sizeof job->param);
    if (job->has_work_loops) h = am_fnv(h, &job->work_loops, sizeof job->work_loops);
    h = am_fnv(h, &age, sizeof age); /* the heap's state when measuring starts is part of the experiment */
    for (unsigned k = 0; k < seeds; k++) {
        uint64_t seed = seed0 + k;
        h = am_fnv(h, &seed, sizeof seed);
        h = am_fnv(h, &oracle_sums[k], sizeof oracle_sums[k]);
    }
    return h;
}

#endif
