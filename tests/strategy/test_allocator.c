/* test_allocator.c: the contract of allocators/allocator.h, checked for one
 * strategy row (this file is compiled once per row, with AM_STATS=1). It uses
 * only the am_* calls and the traits; it says nothing about speed. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "workload.h" /* am_rand */

/* Huge requests must come back NULL: under ASan, tests/check.c sets
 * allocator_may_return_null so that they do. AM_ASAN (sanitize.h) skips what
 * ASan's quarantine would distort. */

/* ---- block patterns: every byte written is a function of (key, offset), so
 * a block that another block overlaps, or a copy that lost bytes, is seen ---- */

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t key_of(const void *p, size_t n) {
    return mix64((uint64_t)(uintptr_t)p ^ ((uint64_t)n << 40) ^ 0x5bd1e995u);
}

#define STEP 0x9E3779B97F4A7C15ull

static void fill(void *p, size_t n, uint64_t key) {
    unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = key + i * STEP;
        memcpy(b + i, &w, 8);
    }
    if (i < n) {
        uint64_t w = key + i * STEP;
        memcpy(b + i, &w, n - i);
    }
}

/* the first n bytes still hold fill(p, >= n, key) */
static int intact(const void *p, size_t n, uint64_t key) {
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = key + i * STEP;
        if (memcmp(b + i, &w, 8) != 0) return 0;
    }
    if (i < n) {
        uint64_t w = key + i * STEP;
        if (memcmp(b + i, &w, n - i) != 0) return 0;
    }
    return 1;
}

static int aligned_to(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

/* What an n-byte block must be aligned to: AM_MIN_ALIGN, or less for blocks too
 * small to hold an object that needs it (the C23 rule for malloc; jemalloc,
 * tcmalloc and mimalloc hand out 8-byte-aligned blocks for n <= 8). */
static size_t min_align_of(size_t n) {
    size_t a = AM_MIN_ALIGN;
    while (a > n) a /= 2;
    return a;
}

static am_heap *new_heap(size_t limit) {
    am_options o;
    am_options_default(&o);
    o.limit = limit;
    return am_create(&o);
}

static am_stats stats_of(am_heap *h) {
    am_stats s;
    am_get_stats(h, &s);
    return s;
}

typedef struct block {
    unsigned char *p;
    size_t n;
    uint64_t key;
} block;

/* Allocates and fills one block; 0 when the heap said NULL. */
static int take(am_heap *h, block *b, size_t n) {
    b->p = am_alloc(h, n);
    if (!b->p) return 0;
    b->n = n;
    b->key = key_of(b->p, n);
    fill(b->p, n, b->key);
    return 1;
}

/* Checks and frees one block; 0 when its contents had changed. */
static int give(am_heap *h, block *b) {
    int ok = intact(b->p, b->n, b->key);
    am_free(h, b->p, b->n);
    b->p = NULL;
    return ok;
}

/* Gives every block back so that the heap is empty: by free, then reset, so
 * the same code serves strategies whose reset does or does not free live blocks. */
static int give_all(am_heap *h, block *b, size_t count) {
    int ok = 1;
    for (size_t i = 0; i < count; i++)
        if (b[i].p) ok &= give(h, &b[i]);
    am_reset(h);
    return ok;
}

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

static size_t fill_heap(am_heap *h, block *b, size_t count, uint64_t seed, size_t max_size) {
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        size_t n = 1 + (size_t)am_rand_below(&seed, max_size);
        if (!take(h, &b[i], n)) return i;
        bytes += n;
    }
    (void)bytes;
    return count;
}

/* reset, freeing first where the strategy's reset leaves live blocks alone */
static int reset_heap(am_heap *h, block *b, size_t count) {
    int ok = 1;
    if (!AM_RESET_FREES_LIVE) return give_all(h, b, count);
    for (size_t i = 0; i < count; i++) {
        if (b[i].p) ok &= intact(b[i].p, b[i].n, b[i].key);
        b[i].p = NULL;
    }
    am_reset(h);
    return ok;
}

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

/* ---- statistics against a shadow count ---- */

typedef struct shadow {
    uint64_t requested, allocs, frees;
    size_t live, peak;
} shadow;

static void shadow_alloc(shadow *s, size_t n) {
    s->requested += n;
    s->live += n;
    s->allocs++;
    if (s->live > s->peak) s->peak = s->live;
}

static void shadow_free(shadow *s, size_t n) {
    s->live -= n;
    s->frees++;
}

static int stats_match(am_heap *h, const shadow *w) {
    am_stats s = stats_of(h);
    return s.bytes_requested == w->requested && s.bytes_live == w->live && s.bytes_peak == w->peak &&
           s.allocs == w->allocs && s.frees == w->frees;
}

typedef struct sblock {
    void *p;
    size_t n;     /* bytes, or elements for arrays */
    size_t extra; /* alignment for aligned blocks, element size for arrays */
    int kind;     /* 0 plain, 1 aligned, 2 array */
} sblock;

static size_t sbytes(const sblock *b) { return b->kind == 2 ? b->n * b->extra : b->n; }

static void sfree(am_heap *h, sblock *b) {
    if (b->kind == 0) am_free(h, b->p, b->n);
    else if (b->kind == 1) am_free_aligned(h, b->p, b->n, b->extra);
    else am_free_array(h, b->p, b->n, b->extra);
    b->p = NULL;
}

static void test_stats_match_shadow(void) {
    enum { SLOTS = 256, OPS = 20000 };
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    shadow w;
    memset(&w, 0, sizeof w);
    CHECK_MSG(stats_match(h, &w), "a new heap's statistics are not zero");
    sblock b[SLOTS];
    memset(b, 0, sizeof b);
    uint64_t rng = 18;
    for (int i = 0; i < OPS; i++) {
        sblock *x = &b[am_rand_below(&rng, SLOTS)];
        unsigned op = (unsigned)am_rand_below(&rng, 100);
        if (op == 0) {
            /* reset: where it frees live blocks the count drops to zero, else free first */
            for (int k = 0; k < SLOTS; k++) {
                if (!b[k].p) continue;
                if (AM_RESET_FREES_LIVE) b[k].p = NULL;
                else { shadow_free(&w, sbytes(&b[k])); sfree(h, &b[k]); }
            }
            am_reset(h);
            if (AM_RESET_FREES_LIVE) w.live = 0;
        } else if (op == 1) {
            /* a failed allocation counts nothing */
            CHECK(am_alloc(h, SIZE_MAX / 2) == NULL);
        } else if (!x->p) {
            size_t n = 1 + (size_t)am_rand_below(&rng, 1000);
            x->kind = (int)am_rand_below(&rng, 3);
            x->n = n;
            if (x->kind == 0) {
                x->p = op < 50 ? am_alloc(h, n) : am_realloc(h, NULL, 0, n);
            } else if (x->kind == 1) {
                x->extra = (size_t)32 << am_rand_below(&rng, 5);
                x->p = am_alloc_aligned(h, n, x->extra);
            } else {
                x->extra = 1 + (size_t)am_rand_below(&rng, 24);
                x->n = 1 + n / 8;
                x->p = am_alloc_array(h, x->n, x->extra);
            }
            CHECK(x->p != NULL);
            shadow_alloc(&w, sbytes(x));
        } else if (op < 60 && x->kind != 1) {
            /* a resize counts as the free of the old block and the alloc of the new */
            size_t old = sbytes(x);
            size_t n = 1 + (size_t)am_rand_below(&rng, 1000);
            void *q;
            if (x->kind == 0) q = am_realloc(h, x->p, x->n, n);
            else { n = 1 + n / 8; q = am_realloc_array(h, x->p, x->n, n, x->extra); }
            CHECK(q != NULL);
            x->p = q;
            x->n = n;
            shadow_free(&w, old);
            shadow_alloc(&w, sbytes(x));
        } else {
            shadow_free(&w, sbytes(x));
            sfree(h, x);
        }
        CHECK_MSG(stats_match(h, &w), "statistics differ from the shadow count after op %d", i);
    }
    for (int k = 0; k < SLOTS; k++)
        if (b[k].p) { shadow_free(&w, sbytes(&b[k])); sfree(h, &b[k]); }
    am_stats s = stats_of(h);
    CHECK(stats_match(h, &w));
    CHECK(s.bytes_live == 0);
    CHECK(s.allocs > OPS / 4);
    am_destroy(h);
}

/* ---- byte limit ---- */

static void test_byte_limit(void) {
    const size_t limit = 64 * 1024, n = 64;
    const size_t most = limit / n;
    block *b = calloc(most + 1, sizeof *b);
    CHECK(b != NULL);
    am_heap *h = new_heap(limit);
    CHECK_MSG(h != NULL, "a heap with a %zu-byte limit could not be created", limit);
    CHECK_MSG(am_alloc(h, limit + 1) == NULL, "a block larger than the limit was granted");
    size_t count = 0;
    while (count <= most && take(h, &b[count], n)) count++;
    /* the limit counts what was taken from the system, which is at least what was asked */
    CHECK_MSG(count <= most, "%zu blocks of %zu bytes granted under a %zu-byte limit", count, n, limit);
    CHECK_MSG(count * n >= limit / 4, "only %zu blocks of %zu bytes fit in %zu bytes", count, n, limit);
    am_stats s = stats_of(h);
    CHECK_MSG(s.reserved_peak <= limit, "reserved %zu bytes under a %zu-byte limit", s.reserved_peak, limit);
    CHECK(am_alloc(h, n) == NULL); /* still exhausted: asking again is fine */
    CHECK(am_alloc_aligned(h, n, 256) == NULL);
    for (size_t i = 0; i < count; i++)
        CHECK_MSG(intact(b[i].p, n, b[i].key), "block %zu changed after the heap ran out", i);
    /* a failed realloc leaves the block as it was */
    CHECK(am_realloc(h, b[0].p, n, limit) == NULL);
    CHECK(intact(b[0].p, n, b[0].key));

    if (AM_FREE_REUSES) {
        for (size_t i = 0; i < count; i++) CHECK(give(h, &b[i]));
        for (size_t i = 0; i < count; i++)
            CHECK_MSG(take(h, &b[i], n), "after freeing all, alloc %zu of %zu failed", i, count);
    }
    CHECK(reset_heap(h, b, count));
    for (size_t i = 0; i < count; i++)
        CHECK_MSG(take(h, &b[i], n), "after reset, alloc %zu of %zu failed", i, count);
    CHECK(give_all(h, b, count));
    am_destroy(h);
    free(b);

    /* a huge request fails cleanly with and without a limit */
    h = new_heap(0);
    CHECK(h != NULL);
    CHECK(am_alloc(h, SIZE_MAX / 2) == NULL);
    CHECK(am_alloc_aligned(h, SIZE_MAX / 2, 64) == NULL);
    /* sizes that wrap to a small block when rounded up to the alignment */
    CHECK(am_alloc_aligned(h, SIZE_MAX - 10, 64) == NULL);
    CHECK(am_alloc_aligned(h, SIZE_MAX - 100, 4096) == NULL);
    CHECK(am_alloc(h, SIZE_MAX - 2) == NULL);
    CHECK(am_alloc_array(h, SIZE_MAX / 16, 8) == NULL);
    block x;
    CHECK(take(h, &x, 100));
    CHECK(am_realloc(h, x.p, 100, SIZE_MAX / 2) == NULL);
    CHECK(give(h, &x));
    CHECK(stats_of(h).bytes_live == 0);
    am_destroy(h);
}

/* ---- randomised stress against a shadow record ---- */

enum { STRESS_SLOTS = 4096, STRESS_RESET_EVERY = 1 << 16 };

/* Mixed alloc / free / realloc / reset over one heap; returns NULL or what went
 * wrong. check_stats compares the live-byte shadow with the heap's counters,
 * which only one thread may do. */
static const char *stress(am_heap *h, uint64_t seed, long ops, int check_stats) {
    block *s = calloc(STRESS_SLOTS, sizeof *s);
    if (!s) return "out of memory for the shadow";
    const char *err = NULL;
    size_t live = 0;
    for (long i = 0; i < ops && !err; i++) {
        uint64_t r = am_rand(&seed);
        block *b = &s[r % STRESS_SLOTS];
        unsigned op = (unsigned)(r >> 32) % 16;
        uint64_t r2 = am_rand(&seed);
        size_t n = (r2 & 63) ? 1 + (size_t)((r2 >> 8) % 512) : 512 + (size_t)((r2 >> 8) % 65536);
        if (!b->p) {
            if (!take(h, b, n)) err = "alloc returned NULL";
            else live += n;
        } else if (op < 10) {
            live -= b->n;
            if (!give(h, b)) err = "a block changed while live (checked at free)";
        } else if (op < 14) {
            unsigned char *q = am_realloc(h, b->p, b->n, n);
            if (!q) { err = "realloc returned NULL"; break; }
            if (!intact(q, b->n < n ? b->n : n, b->key)) err = "realloc lost contents";
            live = live - b->n + n;
            b->p = q;
            b->n = n;
            b->key = key_of(q, n);
            fill(q, n, b->key);
        } else if (!intact(b->p, b->n, b->key)) {
            err = "a block changed while live";
        }
        if ((i + 1) % STRESS_RESET_EVERY == 0) {
            if (!reset_heap(h, s, STRESS_SLOTS)) err = "a block changed before reset";
            live = 0;
        }
        if (check_stats && (i & 255) == 0 && stats_of(h).bytes_live != live)
            err = "bytes_live differs from the shadow";
    }
    for (size_t i = 0; i < STRESS_SLOTS; i++)
        if (s[i].p && !give(h, &s[i]) && !err) err = "a block changed while live (final free)";
    if (!err && check_stats && stats_of(h).bytes_live != 0) err = "bytes_live not 0 after freeing all";
    free(s);
    return err;
}

static void test_random_stress(void) {
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    const char *err = stress(h, 19, 1000000, 1);
    CHECK_MSG(err == NULL, "stress: %s", err);
    am_destroy(h);
}

/* ---- threads ---- */

enum { THREADS = 3 };

typedef struct shared_job {
    am_heap *h;
    uint64_t seed;
    long ops;
    block *left;      /* blocks left live for another thread to free */
    size_t left_count;
    const char *err;
} shared_job;

/* On a shared heap the AM_STATS counters (plain integers, one set per heap)
 * would race, so this calls the strategy itself: the contract's S_alloc/S_free. */
static void shared_worker(void *arg) {
    shared_job *j = arg;
    enum { SLOTS = 512 };
    block *s = calloc(SLOTS, sizeof *s);
    if (!s) { j->err = "out of memory for the shadow"; return; }
    uint64_t seed = j->seed;
    for (long i = 0; i < j->ops && !j->err; i++) {
        uint64_t r = am_rand(&seed);
        block *b = &s[r % SLOTS];
        size_t n = 1 + (size_t)((r >> 32) % 700);
        if (!b->p) {
            b->p = AM_S(_alloc)(j->h, n);
            if (!b->p) { j->err = "alloc returned NULL"; break; }
            b->n = n;
            b->key = key_of(b->p, n);
            fill(b->p, n, b->key);
        } else {
            if (!intact(b->p, b->n, b->key)) j->err = "a block changed while live";
            AM_S(_free)(j->h, b->p, b->n);
            b->p = NULL;
        }
    }
    j->left = s;
    j->left_count = SLOTS;
}

static void test_threads_share_one_heap(void) {
    if (!AM_THREAD_SAFE) return; /* see test_threads_own_heaps */
    am_heap *h = new_heap(0);
    CHECK(h != NULL);
    shared_job jobs[THREADS];
    am_thread *t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].h = h;
        jobs[i].seed = 100 + (uint64_t)i;
        jobs[i].ops = 300000;
        t[i] = am_thread_start(shared_worker, &jobs[i]);
        CHECK(t[i] != NULL);
    }
    for (int i = 0; i < THREADS; i++) am_thread_join(t[i]);
    for (int i = 0; i < THREADS; i++) CHECK_MSG(jobs[i].err == NULL, "thread %d: %s", i, jobs[i].err);
    /* what each thread left live, another thread (this one) frees */
    for (int i = 0; i < THREADS; i++) {
        for (size_t k = 0; k < jobs[i].left_count; k++) {
            block *b = &jobs[i].left[k];
            if (!b->p) continue;
            CHECK_MSG(intact(b->p, b->n, b->key), "thread %d's block changed after it ended", i);
            AM_S(_free)(h, b->p, b->n);
        }
        free(jobs[i].left);
    }
    am_destroy(h);
}

typedef struct own_job {
    uint64_t seed;
    const char *err;
} own_job;

static void own_heap_worker(void *arg) {
    own_job *j = arg;
    am_heap *h = new_heap(0);
    if (!h) { j->err = "heap could not be created"; return; }
    j->err = stress(h, j->seed, 150000, 1);
    am_destroy(h);
}

/* The per-thread-heap design: each thread creates its own heap and uses only
 * it. Valid for every strategy, thread safe or not, whose heaps are apart. */
static void test_threads_own_heaps(void) {
    if (AM_HEAPS_SHARE_STATE && !AM_THREAD_SAFE)
        CHECK_SKIP("the heaps are handles onto one set of pools (" AM_STR(AM_STRATEGY) "_HEAPS_SHARE_STATE) "
                   "that is not thread safe: one heap per thread does not separate them");
    if (AM_HEAPS_SHARE_STATE)
        CHECK_SKIP("each thread resets its heap, which purges the pools all heaps share (" AM_STR(AM_STRATEGY)
                   "_HEAPS_SHARE_STATE, Boost's purge_memory) under the other threads' live blocks; "
                   "threads_share_one_heap checks the locking");
    own_job jobs[THREADS];
    am_thread *t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i].seed = 200 + (uint64_t)i;
        jobs[i].err = NULL;
        t[i] = am_thread_start(own_heap_worker, &jobs[i]);
        CHECK(t[i] != NULL);
    }
    for (int i = 0; i < THREADS; i++) am_thread_join(t[i]);
    for (int i = 0; i < THREADS; i++) CHECK_MSG(jobs[i].err == NULL, "thread %d: %s", i, jobs[i].err);
}

/* Two heaps in one thread keep their blocks and counts apart. Where heaps
 * share one state (S_HEAPS_SHARE_STATE) a reset through b would purge a's
 * blocks too, by design: b's blocks are freed one by one instead, and the
 * destruction of b must still leave a's alone. */
static void test_heaps_are_independent(void) {
    enum { N = 500 };
    am_heap *a = new_heap(0), *c = new_heap(0);
    CHECK(a != NULL && c != NULL);
    block ba[N], bc[N];
    uint64_t rng = 20;
    size_t live_a = 0;
    for (int i = 0; i < N; i++) {
        size_t n = 1 + (size_t)am_rand_below(&rng, 600);
        CHECK(take(a, &ba[i], n));
        live_a += n;
        CHECK(take(c, &bc[i], 1 + (size_t)am_rand_below(&rng, 600)));
    }
    CHECK(stats_of(a).bytes_live == live_a);
    CHECK(stats_of(a).allocs == N && stats_of(c).allocs == N);
    if (AM_HEAPS_SHARE_STATE) {
        for (int i = 0; i < N; i++) CHECK(give(c, &bc[i]));
    } else {
        CHECK(reset_heap(c, bc, N));
    }
    am_destroy(c);
    for (int i = 0; i < N; i++) CHECK_MSG(intact(ba[i].p, ba[i].n, ba[i].key), "block %d of heap a changed "
                                          "when heap b was reset and destroyed", i);
    CHECK(stats_of(a).bytes_live == live_a);
    CHECK(give_all(a, ba, N));
    am_destroy(a);
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
        {"stats_match_shadow", test_stats_match_shadow},
        {"byte_limit", test_byte_limit},
        {"random_stress", test_random_stress},
        {"threads_share_one_heap", test_threads_share_one_heap},
        {"threads_own_heaps", test_threads_own_heaps},
        {"heaps_are_independent", test_heaps_are_independent},
        {NULL, NULL}};
    return am_run_tests("allocator[" AM_ROW_NAME "]", tests, argc, argv);
}
