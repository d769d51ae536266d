/* alloc_pattern.h: the body of the four allocation-pattern workloads
 * (alloc_pair, alloc_bulk, alloc_reverse, alloc_shuffled): N blocks of `size`
 * bytes, freed at once or after all N are taken, in order, in reverse or in a
 * shuffled order. Included by each of those files; not a workload itself.
 *
 * The harness around each allocate/free pair is kept to a handful of
 * instructions, so that the ratios between rows are the allocators' own: one
 * word stored at allocate and read back at free (a block handed out twice
 * while live loses a stamp and changes the sum), no library call and no
 * division per operation, whatever the compiler. */
#ifndef AM_ALLOC_PATTERN_H
#define AM_ALLOC_PATTERN_H

#include <string.h>
#include "workload.h"

/* blocks per repetition: time is reported per alloc+free pair */
#define AP_BLOCKS 10000

enum { AP_PAIR, AP_BULK, AP_REVERSE, AP_SHUFFLED };

static const size_t ap_sizes[] = {8, 16, 32, 64, 128, 256, 0};

static void *ap_block[AP_BLOCKS];

/* The stamp of block i: a 64-bit word in the block's first 8 bytes, or its
 * low byte in blocks smaller than a word (whose alignment may be below 8).
 * `wide` is a constant in each copy of the loops below, so the copy has a
 * constant size: one move, not a call, and it may alias the free-list link
 * a strategy keeps in the same word (a typed store could be reordered past it). */
AM_INLINE uint64_t ap_value(uint64_t seed, size_t i) { return seed * 0x9E3779B97F4A7C15ull + i; }

AM_FORCE_INLINE void ap_stamp(void *p, uint64_t v, int wide) {
    if (wide) memcpy(p, &v, sizeof v);
    else *(unsigned char *)p = (unsigned char)v;
}

AM_FORCE_INLINE uint64_t ap_read(const void *p, int wide) {
    uint64_t v = 0;
    if (wide) memcpy(&v, p, sizeof v);
    else v = *(const unsigned char *)p;
    return v;
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

/* Frees blocks k = from .. to - 1 of the order and sums their stamps. */
AM_FORCE_INLINE uint64_t ap_free_range(am_heap *h, size_t size, int order, size_t from, size_t to, int wide) {
    uint64_t sum = 0;
    for (size_t k = from; k < to; k++) {
        size_t i = order == AP_REVERSE ? AP_BLOCKS - 1 - k : order == AP_SHUFFLED ? ap_perm[k] : k;
        void *p = ap_block[i];
        sum += ap_read(p, wide);
        am_free(h, p, size);
    }
    return sum;
}

AM_FORCE_INLINE uint64_t ap_loop(am_heap *h, am_job *job, int *status, int order, int wide) {
    size_t size = job->size;
    uint64_t base = ap_value(job->seed, 0), sum = 0;
    *status = AM_OK;
    if (order == AP_PAIR) {
        for (size_t i = 0; i < AP_BLOCKS; i++) {
            void *p = am_alloc(h, size);
            if (AM_UNLIKELY(!p)) { *status = AM_ERR_OOM; return 0; }
            ap_stamp(p, base + i, wide);
            am_escape(p); /* the stamp must reach the block before it is read back */
            sum += ap_read(p, wide);
            am_free(h, p, size);
        }
        return sum;
    }
    for (size_t i = 0; i < AP_BLOCKS; i++) {
        void *p = am_alloc(h, size);
        if (AM_UNLIKELY(!p)) {
            while (i-- > 0) am_free(h, ap_block[i], size);
            *status = AM_ERR_OOM;
            return 0;
        }
        ap_stamp(p, base + i, wide);
        am_escape(p);
        ap_block[i] = p;
    }
    if (order != AP_SHUFFLED) return ap_free_range(h, size, order, 0, AP_BLOCKS, wide);
    /* from the seed's start to the end, then from the beginning: no modulo */
    size_t start = (size_t)(job->seed % AP_BLOCKS);
    sum = ap_free_range(h, size, order, start, AP_BLOCKS, wide);
    return sum + ap_free_range(h, size, order, 0, start, wide);
}

/* forced inline: each workload gets a copy specialised for its order and the
 * stamp's width, also when the row is one translation unit and the four
 * share this header */
AM_FORCE_INLINE uint64_t ap_run(am_heap *h, am_job *job, int *status, int order) {
    if (order == AP_SHUFFLED && !ap_perm_ready) ap_make_perm();
    if (job->size >= sizeof(uint64_t)) return ap_loop(h, job, status, order, 1);
    return ap_loop(h, job, status, order, 0);
}

/* The stamps summed without any block: what an allocator that keeps every
 * live block apart must give. */
static uint64_t ap_oracle(am_job *job) {
    uint64_t sum = 0;
    for (size_t i = 0; i < AP_BLOCKS; i++) {
        uint64_t v = ap_value(job->seed, i);
        sum += job->size >= sizeof(uint64_t) ? v : (v & 0xff);
    }
    return sum;
}

static unsigned ap_reps(size_t size) { (void)size; return 16; }
static double ap_ops(size_t size) { (void)size; return AP_BLOCKS; }

#endif
