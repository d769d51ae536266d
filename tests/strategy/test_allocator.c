/* test_allocator.c: the contract of allocators/allocator.h, checked for one
 * strategy row (this file is compiled once per row, with AM_STATS=1): alignment,
 * no overlap, realloc, reuse and reset; the accounting, the byte limit, stress
 * and threads are test_heap_accounting.c's. It uses only the am_* calls and
 * the traits; it says nothing about speed. */
#include "blocks.h"

/* Huge requests must come back NULL: under ASan, tests/check.c sets
 * allocator_may_return_null so that they do. AM_ASAN (sanitize.h) skips what
 * ASan's quarantine would distort. */

/* ---- alignment ---- */

static void test_alignment_every_size(void) {
    enum { SMALL = 4096, RANDOM = 1000 };
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    block *b = calloc(SMALL + RANDOM, sizeof *b);
    CHECK(b != NULL);
    uint64_t rng = 11;
    int ok = 1;
    for (size_t i = 0; i < SMALL + RANDOM && ok; i++) {
        size_t n = i < SMALL ? i + 1 : 1 + (size_t)am_rand_below(&rng, 16384);
        ok = take(h, &b[i], n);
        CHECK_MSG(ok, "alloc(%zu) returned NULL", n);
        CHECK_MSG(aligned_to(b[i].p, min_align_of(n)), "alloc(%zu) = %p, not %zu-aligned", n,
                  (void *)b[i].p, min_align_of(n));
    }
    for (size_t i = 0; i < SMALL + RANDOM; i++) ok &= intact(b[i].p, b[i].n, b[i].key);
    CHECK(ok);
    CHECK(give_all(h, b, SMALL + RANDOM));
    CHECK(stats_of(h).bytes_live == 0);
    free(b);
    am_destroy(h);
}

static void test_alignment_aligned_alloc(void) {
    enum { PER = 12 };
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    uint64_t rng = 12;
    for (size_t align = 32; align <= 4096; align *= 2) {
        void *p[PER], *odd[PER];
        size_t n[PER], odd_n[PER];
        uint64_t key[PER];
        size_t sizes[PER] = {1, 7, align / 2, align - 1, align, align + 1, 3 * align + 5, 0, 0, 0, 0, 0};
        for (int i = 0; i < PER; i++) {
            n[i] = sizes[i] ? sizes[i] : 1 + (size_t)am_rand_below(&rng, 8192);
            /* an odd-sized plain block in between, so the heap's cursor is rarely aligned */
            odd_n[i] = 1 + (size_t)am_rand_below(&rng, 40);
            odd[i] = am_alloc(h, odd_n[i]);
            CHECK(odd[i] != NULL);
            p[i] = am_alloc_aligned(h, n[i], align);
            CHECK_MSG(p[i] != NULL, "alloc_aligned(%zu, %zu) returned NULL", n[i], align);
            CHECK_MSG(aligned_to(p[i], align), "alloc_aligned(%zu, %zu) = %p", n[i], align, p[i]);
            key[i] = key_of(p[i], n[i]);
            fill(p[i], n[i], key[i]);
        }
        for (int i = 0; i < PER; i++) {
            CHECK_MSG(intact(p[i], n[i], key[i]), "aligned block %zu/%zu overwritten", n[i], align);
            am_free_aligned(h, p[i], n[i], align);
            am_free(h, odd[i], odd_n[i]);
        }
    }
    CHECK(stats_of(h).bytes_live == 0);
    am_destroy(h);
}

/* An array of elem-sized elements is aligned at least as its element must be. */
static void test_alignment_array(void) {
    static const size_t elems[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 100, 128, 0};
    static const size_t counts[] = {1, 2, 3, 7, 10, 100, 1000, 0};
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    for (int e = 0; elems[e]; e++) {
        size_t elem = elems[e];
        size_t want = elem & (~elem + 1); /* largest power of two dividing elem */
        if (want > 16) want = 16;
        void *p[8];
        uint64_t key[8];
        int c;
        for (c = 0; counts[c]; c++) {
            size_t bytes = counts[c] * elem;
            p[c] = am_alloc_array(h, counts[c], elem);
            CHECK_MSG(p[c] != NULL, "alloc_array(%zu, %zu) returned NULL", counts[c], elem);
            CHECK_MSG(aligned_to(p[c], want), "alloc_array(%zu, %zu) = %p, not %zu-aligned", counts[c],
                      elem, p[c], want);
            key[c] = key_of(p[c], bytes);
            fill(p[c], bytes, key[c]);
        }
        /* grow the last array as a vector would, keeping contents and alignment */
        c--;
        size_t count = counts[c];
        for (int g = 0; g < 4; g++) {
            void *q = am_realloc_array(h, p[c], count, count * 2, elem);
            CHECK_MSG(q != NULL, "realloc_array to %zu x %zu returned NULL", count * 2, elem);
            CHECK(aligned_to(q, want));
            CHECK_MSG(intact(q, count * elem, key[c]), "realloc_array lost contents (elem %zu)", elem);
            count *= 2;
            p[c] = q;
            key[c] = key_of(q, count * elem);
            fill(q, count * elem, key[c]);
        }
        for (int i = 0; counts[i]; i++) {
            size_t n = i == c ? count : counts[i];
            CHECK_MSG(intact(p[i], n * elem, key[i]), "array %zu x %zu overwritten", n, elem);
            am_free_array(h, p[i], n, elem);
        }
    }
    CHECK(stats_of(h).bytes_live == 0);
    am_destroy(h);
}

/* ---- no overlap: many live blocks of mixed sizes, all patterns intact ---- */

static void test_no_two_live_blocks_overlap(void) {
    enum { N = 20000 };
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    block *b = calloc(N, sizeof *b);
    CHECK(b != NULL);
    uint64_t rng = 13;
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < N; i++) {
            if (b[i].p) continue;
            size_t n = am_rand_below(&rng, 8) ? 1 + (size_t)am_rand_below(&rng, 256)
                                              : 1 + (size_t)am_rand_below(&rng, 8192);
            CHECK(take(h, &b[i], n));
        }
        for (size_t i = 0; i < N; i++)
            CHECK_MSG(intact(b[i].p, b[i].n, b[i].key), "round %d: block %zu (%zu bytes at %p) overwritten",
                      round, i, b[i].n, (void *)b[i].p);
        /* free a random half so the next round's blocks land in the holes */
        for (size_t i = 0; i < N; i++)
            if (am_rand_below(&rng, 2)) CHECK(give(h, &b[i]));
    }
    CHECK(give_all(h, b, N));
    free(b);
    am_destroy(h);
}

/* ---- realloc ---- */

static void realloc_chain(am_heap *h, int interleave) {
    uint64_t rng = 14;
    size_t n = 1;
    unsigned char *p = am_realloc(h, NULL, 0, n);
    CHECK_MSG(p != NULL, "realloc(NULL) did not allocate");
    CHECK(aligned_to(p, min_align_of(n)));
    uint64_t key = key_of(p, n);
    fill(p, n, key);
    /* grow to 200 KB, then shrink back to 1 byte, then grow again */
    static const size_t steps[] = {3, 10, 16, 17, 100, 255, 256, 1000, 4096, 5000, 65536, 200000,
                                   70000, 4000, 300, 33, 8, 1, 500, 20000, 0};
    for (int i = 0; steps[i]; i++) {
        void *blocker = NULL;
        size_t bn = 1 + (size_t)am_rand_below(&rng, 100);
        if (interleave) { blocker = am_alloc(h, bn); CHECK(blocker != NULL); }
        size_t m = steps[i];
        unsigned char *q = am_realloc(h, p, n, m);
        CHECK_MSG(q != NULL, "realloc %zu -> %zu returned NULL", n, m);
        CHECK_MSG(aligned_to(q, min_align_of(m)), "realloc %zu -> %zu = %p", n, m, (void *)q);
        CHECK_MSG(intact(q, n < m ? n : m, key), "realloc %zu -> %zu lost contents%s", n, m,
                  interleave ? " (with other blocks between)" : "");
        p = q;
        n = m;
        key = key_of(p, n);
        fill(p, n, key);
        if (blocker) am_free(h, blocker, bn);
    }
    am_free(h, p, n);
    CHECK(stats_of(h).bytes_live == 0);
}

static void test_realloc_keeps_contents(void) {
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    realloc_chain(h, 0);
    if (am_check_failed) return;
    realloc_chain(h, 1);
    am_destroy(h);
}

/* ---- reuse of freed blocks ---- */

static void test_freed_blocks_are_reused(void) {
    if (!AM_FREE_REUSES) return; /* freeing is a no-op by design: reset reclaims */
    /* (a) under a byte limit, alloc/free pairs adding up to many times the
     * limit never fail */
    static const size_t sizes[] = {1, 8, 24, 64, 100, 256, 1000, 4096, 65536, 0};
    const size_t limit = 256 * 1024;
    for (int s = 0; sizes[s]; s++) {
        am_heap *h = new_heap(limit);
        CHECK(h != NULL);
        size_t n = sizes[s];
        /* every block takes at least AM_MIN_ALIGN bytes: these rounds ask for twice the limit */
        size_t taken = n < AM_MIN_ALIGN ? AM_MIN_ALIGN : n;
        size_t rounds = 2 * limit / taken + 100;
        for (size_t i = 0; i < rounds; i++) {
            unsigned char *p = am_alloc(h, n);
            CHECK_MSG(p != NULL, "alloc(%zu) failed after %zu alloc/free pairs under a %zu-byte limit", n, i,
                      limit);
            p[0] = p[n - 1] = (unsigned char)i;
            am_free(h, p, n);
        }
        /* batches: up to 32 live at once, then all freed; aligned blocks too */
        block b[32];
        size_t per = limit / (4 * n);
        if (per > 32) per = 32;
        if (per < 1) per = 1;
        for (size_t i = 0; i < 2 * limit / (per * taken) + 20; i++) {
            for (size_t k = 0; k < per; k++)
                CHECK_MSG(take(h, &b[k], n), "batch %zu: alloc(%zu) failed under a limit", i, n);
            for (size_t k = 0; k < per; k++) CHECK(give(h, &b[k]));
            void *a = am_alloc_aligned(h, n, 64);
            CHECK_MSG(a != NULL, "alloc_aligned(%zu, 64) failed after %zu batches under a limit", n, i);
            am_free_aligned(h, a, n, 64);
        }
        am_destroy(h);
    }
    /* (b) without a limit, what the strategy reports reserved stays bounded */
    for (int s = 0; sizes[s]; s++) {
        am_heap *h = new_heap(0);
        CHECK(h != NULL);
        size_t n = sizes[s];
        block b[64];
        size_t first = 0;
        size_t rounds = (8u << 20) / (64 * (n < AM_MIN_ALIGN ? AM_MIN_ALIGN : n)) + 2;
        for (size_t r = 0; r < rounds; r++) {
            for (int k = 0; k < 64; k++) CHECK(take(h, &b[k], n));
            for (int k = 63; k >= 0; k--) CHECK(give(h, &b[k]));
            if (r == 0) first = stats_of(h).bytes_reserved;
        }
        size_t end = stats_of(h).bytes_reserved;
        CHECK_MSG(end <= 2 * first + 256 * 1024,
                  "size %zu: reserved grew from %zu to %zu bytes over %zu alloc/free rounds", n, first, end,
                  rounds);
        am_destroy(h);
    }
#if !AM_ASAN /* ASan's quarantine holds freed blocks back on purpose */
    /* (c) where the strategy cannot tell what it reserved (malloc), the peak
     * resident set does: 128 MiB of touched blocks, freed as they go, must not
     * raise it by more than a fraction of that */
    {
        am_heap *h = new_heap(0);
        CHECK(h != NULL);
        size_t before = am_peak_rss_bytes();
        block b[64];
        for (int r = 0; r < 512; r++) {
            for (int k = 0; k < 64; k++) CHECK(take(h, &b[k], 4096));
            for (int k = 0; k < 64; k++) CHECK(give(h, &b[k]));
        }
        size_t after = am_peak_rss_bytes();
        CHECK_MSG(after < before + (48u << 20), "peak RSS grew from %zu to %zu bytes over 128 MiB of "
                  "alloc/free", before, after);
        am_destroy(h);
    }
#endif
}

/* ---- reset ---- */

static void test_reset_releases_everything(void) {
    enum { N = 2000, CYCLES = 40 };
    block *b = calloc(N, sizeof *b);
    CHECK(b != NULL);
    /* (a) the same fill, reset, repeated: nothing live after, nothing grows */
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    size_t first = 0;
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        CHECK_MSG(fill_heap(h, b, N, 15, 2048) == N, "cycle %d: alloc failed", cycle);
        CHECK(stats_of(h).bytes_live > 0);
        CHECK_MSG(reset_heap(h, b, N), "cycle %d: a block changed before the reset", cycle);
        am_stats s = stats_of(h);
        CHECK_MSG(s.bytes_live == 0, "cycle %d: %zu bytes live after reset", cycle, s.bytes_live);
        if (cycle == 0) first = s.bytes_reserved;
        CHECK_MSG(s.bytes_reserved <= 2 * first + 64 * 1024,
                  "cycle %d: reserved grew from %zu to %zu bytes across fill/reset", cycle, first,
                  s.bytes_reserved);
    }
    /* the heap works after reset */
    CHECK(fill_heap(h, b, N, 16, 300) == N);
    CHECK(give_all(h, b, N));
    am_destroy(h);

    /* (b) under a limit, fill/reset cycles adding up to many times the limit never fail */
    const size_t limit = 1 << 20;
    h = new_heap(limit);
    CHECK(h != NULL);
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        size_t got = fill_heap(h, b, 1000, 17 + (uint64_t)cycle, 512); /* ~256 KB */
        CHECK_MSG(got == 1000, "cycle %d: alloc %zu failed under a %zu-byte limit", cycle, got, limit);
        CHECK(reset_heap(h, b, 1000));
    }
    am_destroy(h);
    free(b);
}


int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"alignment_every_size", test_alignment_every_size},
        {"alignment_aligned_alloc", test_alignment_aligned_alloc},
        {"alignment_array", test_alignment_array},
        {"no_two_live_blocks_overlap", test_no_two_live_blocks_overlap},
        {"realloc_keeps_contents", test_realloc_keeps_contents},
        {"freed_blocks_are_reused", test_freed_blocks_are_reused},
        {"reset_releases_everything", test_reset_releases_everything},
        {NULL, NULL}};
    return am_run_tests("allocator[" AM_ROW_NAME "]", tests, argc, argv);
}
