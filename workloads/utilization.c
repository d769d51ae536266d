/* utilization.c: utilization, as in Bloomberg's allocator study (N4468,
 * section 9): far more bytes allocated than are ever live. A sliding window of
 * UT_WINDOW blocks of `size` bytes: each step frees the oldest block and
 * allocates a new one, writing a word in each of its pages (a program writes
 * what it allocates, so a row that hands out fresh memory pays its page
 * faults), until UT_TOTAL bytes have been allocated (at least four windows,
 * at most UT_MAX_STEPS blocks).
 * A row whose free reuses nothing takes all UT_TOTAL bytes from the system in
 * every repetition; the cell's peak_rss shows what each row held.
 * ops = blocks allocated (and freed). */
#include "workload.h"

#define UT_WINDOW 32 /* a power of two */
#define UT_TOTAL ((size_t)64 << 20)
#define UT_PAGE 4096
#define UT_MAX_STEPS ((size_t)1 << 18) /* 16 MiB of 64-byte blocks: smaller ones stop here */

static void *ut_ring[UT_WINDOW];

static size_t ut_steps(size_t size) {
    size_t n = UT_TOTAL / (size ? size : 1);
    return n < 4 * UT_WINDOW ? 4 * UT_WINDOW : n > UT_MAX_STEPS ? UT_MAX_STEPS : n;
}

AM_INLINE uint64_t ut_value(uint64_t seed, size_t i) { return seed * 0x9E3779B97F4A7C15ull + i; }

/* the offset of the last word written: one a page, from offset 0 */
static size_t ut_last(size_t size) { return size < 8 ? 0 : (size - 8) / UT_PAGE * UT_PAGE; }

/* wide: blocks of at least a word get words, smaller ones a byte */
AM_FORCE_INLINE void ut_write(char *b, size_t last, uint64_t v, int wide) {
    if (!wide) { *(unsigned char *)b = (unsigned char)v; return; }
    for (size_t off = 0; off <= last; off += UT_PAGE) *(uint64_t *)(void *)(b + off) = v;
}

AM_FORCE_INLINE uint64_t ut_read(const char *b, size_t last, int wide) {
    if (!wide) return 2u * *(const unsigned char *)b;
    return *(const uint64_t *)(const void *)b + *(const uint64_t *)(const void *)(b + last);
}

AM_FORCE_INLINE uint64_t ut_loop(am_heap *h, am_job *job, int *status, int wide) {
    size_t size = job->size, steps = ut_steps(size), last = ut_last(size), i;
    uint64_t base = ut_value(job->seed, 0), sum = 0;
    *status = AM_OK;
    for (i = 0; i < steps; i++) {
        size_t slot = i & (UT_WINDOW - 1);
        if (i >= UT_WINDOW) {
            sum += ut_read(ut_ring[slot], last, wide);
            am_free(h, ut_ring[slot], size);
        }
        char *b = am_alloc(h, size);
        if (AM_UNLIKELY(!b)) {
            ut_ring[slot] = NULL;
            *status = AM_ERR_OOM;
            break;
        }
        ut_write(b, last, base + i, wide);
        am_escape(b);
        ut_ring[slot] = b;
    }
    /* the window's last blocks, oldest first (the slot after the newest) */
    for (size_t k = 0; k < UT_WINDOW; k++) {
        size_t slot = (i + k) & (UT_WINDOW - 1);
        char *b = ut_ring[slot];
        if (!b) continue;
        sum += ut_read(b, last, wide);
        am_free(h, b, size);
        ut_ring[slot] = NULL;
    }
    return *status == AM_OK ? sum : 0;
}

static uint64_t utilization_run(am_heap *h, am_job *job, int *status) {
    for (size_t k = 0; k < UT_WINDOW; k++) ut_ring[k] = NULL;
    if (job->size >= sizeof(uint64_t)) return ut_loop(h, job, status, 1);
    return ut_loop(h, job, status, 0);
}

/* each block's value, read back twice (its first and its last word) */
static uint64_t utilization_oracle(am_job *job) {
    uint64_t sum = 0;
    for (size_t i = 0, n = ut_steps(job->size); i < n; i++) {
        uint64_t v = ut_value(job->seed, i);
        sum += 2 * (job->size >= sizeof(uint64_t) ? v : (v & 0xff));
    }
    return sum;
}

static const size_t utilization_sizes[] = {64, 1024, 32768, 0};
static const size_t utilization_log_sizes[] = {64, 256, 1024, 4096, 16384, 32768, 0};

static unsigned utilization_reps(size_t size) { (void)size; return 1; }
static double utilization_ops(size_t size) { return (double)ut_steps(size); }

const am_workload am_workload_utilization = {
    .name = "utilization",
    .summary = "a sliding window of 32 blocks of `size` bytes, one word written a page, until 64 MiB are allocated "
        "(Bloomberg's allocator study)",
    .sizes = utilization_sizes,
    .log_sizes = utilization_log_sizes,
    .reps = utilization_reps,
    .ops = utilization_ops,
    .run = utilization_run,
    .oracle = utilization_oracle,
    .threaded = 0,
    .seeds = 1,
    .age = 0,
    .min_bytes = NULL,
    .dimension = "utilization",
};
