/* alloc_pattern.h: the body of the four allocation-pattern workloads
 * (alloc_pair, alloc_bulk, alloc_reverse, alloc_shuffled): N blocks of `size`
 * bytes, freed at once or after all N are taken, in order, in reverse or in a
 * shuffled order. Included by each of those files; not a workload itself. */
#ifndef AM_ALLOC_PATTERN_H
#define AM_ALLOC_PATTERN_H

#include <stdlib.h>
#include <string.h>
#include "workload.h"

/* blocks per repetition: time is reported per alloc+free pair */
#define AP_BLOCKS 10000

enum { AP_PAIR, AP_BULK, AP_REVERSE, AP_SHUFFLED };

static const size_t ap_sizes[] = {8, 16, 32, 64, 128, 256, 0};

static void *ap_block[AP_BLOCKS];

/* The first and last word of a block (fewer bytes when it is smaller): written
 * after alloc, read back at free, so a block that another overlaps changes the sum. */
AM_INLINE void ap_stamp(unsigned char *p, size_t size, uint64_t seed, size_t i) {
    size_t w = size < 8 ? size : 8;
    uint64_t first = seed * 0x9E3779B97F4A7C15ull + i, last = ~first ^ ((uint64_t)size << 32);
    memcpy(p, &first, w);
    memcpy(p + size - w, &last, w);
}

AM_INLINE uint64_t ap_read(const unsigned char *p, size_t size) {
    size_t w = size < 8 ? size : 8;
    uint64_t first = 0, last = 0;
    memcpy(&first, p, w);
    memcpy(&last, p + size - w, w);
    return first * 3 + last;
}

/* The shuffled order: one seeded permutation, drawn once so that drawing it is
 * not timed; each repetition starts it at a place its seed chooses. */
static unsigned ap_perm[AP_BLOCKS];
static int ap_perm_ready;

static void ap_make_perm(void) {
    uint64_t rng = 0x5EED0004u;
    for (unsigned i = 0; i < AP_BLOCKS; i++) ap_perm[i] = i;
    for (unsigned i = AP_BLOCKS - 1; i > 0; i--) {
        unsigned j = (unsigned)am_rand_below(&rng, i + 1);
        unsigned t = ap_perm[i];
        ap_perm[i] = ap_perm[j];
        ap_perm[j] = t;
    }
    ap_perm_ready = 1;
}

AM_INLINE size_t ap_free_index(int order, size_t k, size_t start) {
    if (order == AP_REVERSE) return AP_BLOCKS - 1 - k;
    if (order == AP_SHUFFLED) return ap_perm[(k + start) % AP_BLOCKS];
    return k;
}

/* forced inline: each workload gets a copy specialised for its order, also
 * when the row is one translation unit and the four share this header */
AM_FORCE_INLINE uint64_t ap_run(am_heap *h, am_job *job, int *status, int order) {
    size_t size = job->size;
    uint64_t sum = 0;
    if (order == AP_PAIR) {
        for (size_t i = 0; i < AP_BLOCKS; i++) {
            unsigned char *p = am_alloc(h, size);
            if (!p) { *status = AM_ERR_OOM; return 0; }
            ap_stamp(p, size, job->seed, i);
            am_escape(p);
            sum += ap_read(p, size);
            am_free(h, p, size);
        }
        *status = AM_OK;
        return sum;
    }
    if (order == AP_SHUFFLED && !ap_perm_ready) ap_make_perm();
    for (size_t i = 0; i < AP_BLOCKS; i++) {
        unsigned char *p = am_alloc(h, size);
        if (!p) {
            while (i-- > 0) am_free(h, ap_block[i], size);
            *status = AM_ERR_OOM;
            return 0;
        }
        ap_stamp(p, size, job->seed, i);
        am_escape(p);
        ap_block[i] = p;
    }
    size_t start = (size_t)(job->seed % AP_BLOCKS);
    for (size_t k = 0; k < AP_BLOCKS; k++) {
        unsigned char *p = ap_block[ap_free_index(order, k, start)];
        sum += ap_read(p, size);
        am_free(h, p, size);
    }
    *status = AM_OK;
    return sum;
}

/* The same stamps in one malloc'd scratch block: what an allocator that keeps
 * every block whole must give. */
static uint64_t ap_reference(am_job *job) {
    unsigned char *scratch = malloc(job->size);
    if (!scratch) return 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < AP_BLOCKS; i++) {
        ap_stamp(scratch, job->size, job->seed, i);
        sum += ap_read(scratch, job->size);
    }
    free(scratch);
    return sum;
}

static unsigned ap_reps(size_t size) { (void)size; return 16; }
static double ap_ops(size_t size) { (void)size; return AP_BLOCKS; }

#endif
