/* test_boost_pool.c: the Boost.Pool engine and the pool / fast_pool strategies
 * called directly (no allocator.h): growth, list order, contiguous runs, purge,
 * limits, alignment, and fast_pool's shared pools. Not the generic contract
 * test, which runs on every row from tests/strategy/. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "boost_pool.h"
#include "fast_pool.h"
#include "pool.h"

#define A(p) ((uintptr_t)(p))

static size_t blocks_of(const bp_pool *p) {
    size_t n = 0;
    for (const bp_block *b = p->blocks; b; b = b->next) n++;
    return n;
}

static int list_sorted(const bp_pool *p) {
    for (void *c = p->first; c && bp_next(c); c = bp_next(c))
        if (A(bp_next(c)) <= A(c)) return 0;
    return 1;
}

static void set_up(bp_set *s, size_t limit, size_t max_chunk) {
    am_options o;
    am_options_default(&o);
    o.limit = limit;
    o.max_chunk = max_chunk;
    bp_set_init(s, &o);
}

static void test_next_size_doubles(void) {
    static bp_set s;
    set_up(&s, 0, 0);
    bp_pool *p = bp_set_pool(&s, 16);
    CHECK(p->partition == 16 && p->next_size == 32);
    size_t before = s.budget.reserved;
    for (int i = 0; i < 32; i++) CHECK(bp_malloc(p) != NULL);
    CHECK(blocks_of(p) == 1);
    CHECK(s.budget.reserved - before == BP_BLOCK_HDR + 32 * 16);
    CHECK(p->next_size == 64);
    CHECK(bp_malloc(p) != NULL); /* the 33rd chunk: a second block, twice as big */
    CHECK(blocks_of(p) == 2);
    CHECK(s.budget.reserved - before == 2 * BP_BLOCK_HDR + 96 * 16);
    CHECK(p->next_size == 128);
    CHECK(bp_free_count(p) == 63);
    bp_set_purge(&s);
}

static void test_max_size_caps_growth(void) {
    static bp_set s;
    set_up(&s, 0, 48 * 16); /* max_chunk in bytes: 48 chunks of 16 */
    bp_pool *p = bp_set_pool(&s, 16);
    CHECK(p->max_size == 48 && p->next_size == 32);
    for (int i = 0; i < 32 + 48 + 1; i++) CHECK(bp_malloc(p) != NULL);
    CHECK(blocks_of(p) == 3);
    CHECK(p->next_size == 48);
    CHECK(s.budget.reserved == 3 * BP_BLOCK_HDR + (32 + 48 + 48) * 16);
    bp_set_purge(&s);
    set_up(&s, 0, 8 * 16); /* a cap below the start size clamps the start */
    CHECK(bp_set_pool(&s, 16)->next_size == 8);
}

static void test_unordered_free_is_lifo(void) {
    static bp_set s;
    set_up(&s, 0, 0);
    bp_pool *p = bp_set_pool(&s, 32);
    void *a = bp_malloc(p), *b = bp_malloc(p), *c = bp_malloc(p);
    CHECK(a && b && c && a != b && b != c);
    bp_free(p, a);
    bp_free(p, c);
    bp_free(p, b);
    CHECK(bp_malloc(p) == b);
    CHECK(bp_malloc(p) == c);
    CHECK(bp_malloc(p) == a);
    bp_set_purge(&s);
}

static void test_ordered_free_keeps_list_sorted(void) {
    static bp_set s;
    set_up(&s, 0, 0);
    bp_pool *p = bp_set_pool(&s, 24);
    void *c[100];
    for (int i = 0; i < 100; i++) CHECK((c[i] = bp_ordered_malloc(p, 1)) != NULL);
    CHECK(blocks_of(p) == 3); /* 32 + 64 + 128 chunks */
    uint64_t rng = 7;
    for (int i = 99; i > 0; i--) { /* free in a shuffled order */
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        int j = (int)((rng >> 33) % (uint64_t)(i + 1));
        void *t = c[i]; c[i] = c[j]; c[j] = t;
    }
    for (int i = 0; i < 100; i++) {
        bp_ordered_free_n(p, c[i], 1);
        CHECK(list_sorted(p));
    }
    CHECK(bp_free_count(p) == 224);
    bp_set_purge(&s);
}

/* every address of a run of n chunks lies in `have` */
static int run_within(void *run, size_t n, size_t part, void **have, size_t count) {
    for (size_t k = 0; k < n; k++) {
        int found = 0;
        for (size_t i = 0; i < count; i++) found |= A(have[i]) == A(run) + k * part;
        if (!found) return 0;
    }
    return 1;
}

static void test_ordered_malloc_contiguous_and_fragmented(void) {
    static bp_set s;
    set_up(&s, 0, 0);
    bp_pool *p = bp_set_pool(&s, 16);
    char *r = bp_ordered_malloc(p, 5);
    CHECK(r != NULL && blocks_of(p) == 1);
    memset(bp_handout(r, 5 * 16), 0xab, 5 * 16);
    CHECK(bp_ordered_malloc(p, 5) == r + 5 * 16); /* carved from the ordered rest */
    bp_ordered_free_n(p, r, 5);
    bp_ordered_free_n(p, r + 5 * 16, 5);
    CHECK(bp_free_count(p) == 32 && list_sorted(p));

    /* the whole first block taken, every other chunk given back: no pair left */
    void *one[32];
    for (int i = 0; i < 32; i++) CHECK((one[i] = bp_ordered_malloc(p, 1)) != NULL);
    CHECK(blocks_of(p) == 1 && p->first == NULL);
    for (int i = 0; i < 32; i += 2) bp_ordered_free_n(p, one[i], 1);
    size_t reserved = s.budget.reserved;
    char *two = bp_ordered_malloc(p, 2);
    CHECK(two != NULL && blocks_of(p) == 2 && s.budget.reserved > reserved);
    CHECK(!run_within(two, 1, 16, one, 32));
    /* the other half back: the first block is one run again and serves 4 */
    for (int i = 1; i < 32; i += 2) bp_ordered_free_n(p, one[i], 1);
    CHECK(list_sorted(p));
    reserved = s.budget.reserved;
    char *four = bp_ordered_malloc(p, 4);
    CHECK(four != NULL && s.budget.reserved == reserved);
    /* the lowest run of 4 in address order: block one, or the rest of block two */
    if (A(one[0]) < A(two)) CHECK(four == one[0]);
    else CHECK(four == two + 2 * 16);
    bp_set_purge(&s);
}

static void test_ordered_malloc_larger_than_next_size(void) {
    static bp_set s;
    set_up(&s, 0, 0);
    bp_pool *p = bp_set_pool(&s, 8);
    char *big = bp_ordered_malloc(p, 1000); /* Boost: next_size = max(next_size, n) */
    CHECK(big != NULL && blocks_of(p) == 1 && p->first == NULL);
    CHECK(p->next_size == 2000);
    memset(bp_handout(big, 8000), 1, 8000); /* engine chunks come poisoned under ASan */
    bp_ordered_free_n(p, big, 1000);
    CHECK(bp_free_count(p) == 1000 && list_sorted(p));
    bp_set_purge(&s);
}

static void test_purge_returns_all(void) {
    static bp_set s;
    set_up(&s, 0, 0);
    for (size_t part = 8; part <= BP_MAX_PARTITION; part += 8)
        for (int i = 0; i < 40; i++) CHECK(bp_malloc(bp_set_pool(&s, part)) != NULL);
    CHECK(bp_big_alloc(&s, 5000, 16) != NULL);
    CHECK(bp_big_alloc(&s, 100, 256) != NULL);
    CHECK(s.budget.reserved > 0 && s.budget.peak == s.budget.reserved);
    size_t peak = s.budget.peak;
    bp_set_purge(&s);
    CHECK(s.budget.reserved == 0 && s.budget.peak == peak && s.bigs == NULL);
    for (size_t part = 8; part <= BP_MAX_PARTITION; part += 8) {
        bp_pool *p = bp_set_pool(&s, part);
        CHECK(p->blocks == NULL && p->first == NULL && p->next_size == BP_START_SIZE);
    }
}

static void test_limit_gives_null(void) {
    static bp_set s;
    /* room for 20 chunks but not 32: the block is shrunk to fit, the limit used to the byte */
    set_up(&s, BP_BLOCK_HDR + 20 * 64, 0);
    bp_pool *p = bp_set_pool(&s, 64);
    int got = 0;
    while (bp_malloc(p)) got++;
    CHECK(got == 20);
    CHECK(s.budget.reserved == BP_BLOCK_HDR + 20 * 64);
    CHECK(bp_malloc(p) == NULL); /* still out: asking again does not shrink further */
    CHECK(p->next_size == 64);
    CHECK(bp_ordered_malloc(p, 2) == NULL);
    CHECK(bp_big_alloc(&s, 4096, 16) == NULL);
    CHECK(s.budget.reserved <= s.budget.limit);
    bp_set_purge(&s);
    /* a failed ordered_malloc leaves next_size alone (Boost keeps the n it asked for) */
    set_up(&s, 4096, 0);
    p = bp_set_pool(&s, 8);
    CHECK(bp_ordered_malloc(p, 4096) == NULL && p->next_size == BP_START_SIZE);
    CHECK(bp_ordered_malloc(p, 400) != NULL && p->next_size == 2 * 400);
    bp_set_purge(&s);
    /* the heap's own descriptors do not count: a limit below them still
     * creates a heap, and its blocks are shrunk to the limit */
    am_options o;
    am_options_default(&o);
    o.limit = 100;
    pool_heap *h = pool_create(&o);
    CHECK(h != NULL);
    CHECK(pool_alloc(h, 48) != NULL); /* a block of one 48-byte chunk: 64 bytes */
    CHECK(pool_alloc(h, 48) == NULL && pool_alloc(h, 24) == NULL); /* 36 bytes left: no block fits */
    CHECK(pool_alloc(h, 8) != NULL); /* but one of a single 16-byte chunk does */
    CHECK(pool_alloc(h, 101) == NULL);
    size_t reserved, peak;
    pool_usage(h, &reserved, &peak);
    CHECK(reserved == 2 * BP_BLOCK_HDR + 48 + 16 && peak == reserved);
    pool_destroy(h);
    o.limit = 4096;
    h = pool_create(&o);
    CHECK(h != NULL);
    int n = 0;
    while (pool_alloc(h, 48) && n < 100000) n++;
    pool_usage(h, &reserved, &peak);
    CHECK(n > 0 && n < 4096 / 48 + 1 && peak <= o.limit && peak > o.limit - 64);
    pool_destroy(h);
    /* sizes whose rounding would wrap */
    h = pool_create(NULL);
    fast_pool_heap *f = fast_pool_create(NULL);
    CHECK(h && f);
    CHECK(pool_alloc(h, SIZE_MAX) == NULL && fast_pool_alloc(f, SIZE_MAX - 3) == NULL);
    CHECK(pool_alloc_array(h, 1, SIZE_MAX) == NULL && fast_pool_alloc_array(f, 1, SIZE_MAX - 3) == NULL);
    CHECK(pool_alloc_array(h, SIZE_MAX / 4, 8) == NULL && fast_pool_alloc_array(f, 3, SIZE_MAX / 2) == NULL);
    pool_destroy(h);
    fast_pool_destroy(f);
}

static size_t pow2_of(size_t x) { return x & (~x + 1); }

static void test_alignment_rules(void) {
    pool_heap *h = pool_create(NULL);
    fast_pool_heap *f = fast_pool_create(NULL);
    CHECK(h && f);
    for (size_t n = 1; n <= 1200; n += 7) {
        void *a = pool_alloc(h, n), *b = fast_pool_alloc(f, n);
        CHECK_MSG(a && A(a) % AM_MIN_ALIGN == 0, "pool_alloc(%zu)", n);
        CHECK_MSG(b && A(b) % AM_MIN_ALIGN == 0, "fast_pool_alloc(%zu)", n);
        memset(a, 1, n);
        memset(b, 1, n);
    }
    static const size_t elems[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 1000, 1040, 4096};
    for (size_t e = 0; e < sizeof elems / sizeof elems[0]; e++) {
        size_t elem = elems[e];
        size_t want = pow2_of(elem) < AM_MIN_ALIGN ? pow2_of(elem) : AM_MIN_ALIGN;
        for (size_t count = 1; count <= 9; count++) {
            void *a = pool_alloc_array(h, count, elem), *b = fast_pool_alloc_array(f, count, elem);
            CHECK_MSG(a && A(a) % want == 0, "pool array %zu x %zu", count, elem);
            CHECK_MSG(b && A(b) % want == 0, "fast_pool array %zu x %zu", count, elem);
            memset(a, 2, count * elem);
            memset(b, 2, count * elem);
        }
    }
    for (size_t align = 32; align <= 8192; align *= 2) {
        void *a = pool_alloc_aligned(h, 40, align), *b = fast_pool_alloc_aligned(f, 40, align);
        CHECK(a && A(a) % align == 0 && b && A(b) % align == 0);
        pool_free_aligned(h, a, 40, align);
        fast_pool_free_aligned(f, b, 40, align);
    }
    pool_destroy(h); /* returns what was never freed too */
    fast_pool_destroy(f);
}

static void test_pool_heap_arrays_and_reset(void) {
    pool_heap *h = pool_create(NULL);
    CHECK(h != NULL);
    size_t empty, peak;
    pool_usage(h, &empty, &peak);
    CHECK(empty == 0); /* the descriptors are not counted */
    int *v = NULL;
    size_t cap = 0;
    for (int i = 0; i < 5000; i++) { /* a vector<int> growing by doubling */
        if ((size_t)i == cap) {
            size_t ncap = cap ? cap * 2 : 1;
            int *nv = pool_realloc_array(h, v, cap, ncap, sizeof(int));
            CHECK(nv != NULL && nv != v);
            v = nv;
            cap = ncap;
        }
        v[i] = i * 3;
    }
    for (int i = 0; i < 5000; i++) CHECK(v[i] == i * 3);
    /* every old buffer went back in order: the free list is sorted */
    CHECK(list_sorted(bp_set_pool(&h->set, 8)));
    char *s = pool_realloc(h, NULL, 0, 10);
    CHECK(s != NULL);
    memcpy(s, "abcdefghi", 10);
    char *t = pool_realloc(h, s, 10, 100);
    CHECK(t != NULL && memcmp(t, "abcdefghi", 10) == 0);
    pool_reset(h);
    size_t now;
    pool_usage(h, &now, &peak);
    CHECK(now == empty && peak > empty);
    CHECK(pool_alloc(h, 16) != NULL);
    pool_destroy(h);
}

static void test_fast_pool_handles_share_pools(void) {
    fast_pool_heap *h1 = fast_pool_create(NULL), *h2 = fast_pool_create(NULL);
    CHECK(h1 && h2 && fast_pool_singletons.handles == 2);
    void *p = fast_pool_alloc(h1, 24);
    fast_pool_free(h1, p, 24);
    CHECK(fast_pool_alloc(h2, 32) == p); /* 24 and 32 bytes: one 32-byte chunk pool */
    long *keep = fast_pool_alloc(h1, 8);
    CHECK(keep != NULL);
    *keep = 12345;
    size_t r1, r2, peak;
    fast_pool_usage(h1, &r1, &peak);
    fast_pool_usage(h2, &r2, &peak);
    CHECK(r1 == r2 && r1 > 0);
    fast_pool_destroy(h2); /* one handle left: the pools stay */
    fast_pool_usage(h1, &r2, &peak);
    CHECK(r2 == r1 && *keep == 12345);
    fast_pool_destroy(h1); /* the last: everything purged */
    CHECK(fast_pool_singletons.handles == 0);
    CHECK(fast_pool_singletons.set.budget.reserved == 0);
    for (size_t part = 8; part <= BP_MAX_PARTITION; part += 8)
        CHECK(bp_set_pool(&fast_pool_singletons.set, part)->blocks == NULL);
}

static void test_fast_pool_first_handle_sets_limit(void) {
    am_options o;
    am_options_default(&o);
    o.limit = 64 * 1024;
    fast_pool_heap *h1 = fast_pool_create(&o);
    CHECK(h1 != NULL);
    o.limit = 0;
    fast_pool_heap *h2 = fast_pool_create(&o);
    CHECK(h2 != NULL);
    int n = 0;
    while (fast_pool_alloc(h2, 64) && n < 100000) n++;
    CHECK(n > 0 && n < 64 * 1024 / 64);
    fast_pool_destroy(h1);
    fast_pool_destroy(h2);
    /* after the last handle, the next first handle sets it again */
    fast_pool_heap *h3 = fast_pool_create(NULL);
    CHECK(h3 != NULL && fast_pool_singletons.set.budget.limit == 0);
    fast_pool_destroy(h3);
}

static void test_fast_pool_arrays_free_unordered(void) {
    fast_pool_heap *h = fast_pool_create(NULL);
    CHECK(h != NULL);
    bp_pool *p = bp_set_pool(&fast_pool_singletons.set, 8);
    void *one = fast_pool_alloc_array(h, 1, 8); /* count 1: unordered malloc() */
    fast_pool_free_array(h, one, 1, 8);
    CHECK(fast_pool_alloc_array(h, 1, 8) == one);
    char *a = fast_pool_alloc_array(h, 6, 4); /* 24 bytes: 3 chunks of 8 */
    char *b = fast_pool_alloc_array(h, 4, 8);
    CHECK(a && b);
    fast_pool_free_array(h, a, 6, 4);
    /* free(p, n): the run goes on the front in its own order, whatever the rest */
    CHECK(p->first == a && bp_next(a) == a + 8 && bp_next(a + 8) == a + 16);
    fast_pool_free_array(h, b, 4, 8);
    CHECK(p->first == b);
    fast_pool_destroy(h);
}

/* Vectors growing side by side, then freed: the thrash_pool_sort shape of the 2009 Boost monotonic comparison.
 * Ordered frees rebuild runs; unordered ones scatter them, so fast_pool keeps
 * taking new blocks where pool reuses its own. */
static void grow_vectors(void *heap, int fast, size_t *reserved_peak) {
    enum { VECS = 4, ROUNDS = 60 };
    for (int r = 0; r < ROUNDS; r++) {
        int *v[VECS] = {0};
        size_t cap[VECS] = {0};
        size_t len = 16 + (size_t)(r * 37 % 200);
        for (size_t i = 0; i < len; i++)
            for (int k = 0; k < VECS; k++) {
                if (i == cap[k]) {
                    size_t ncap = cap[k] ? cap[k] * 2 : 1;
                    v[k] = fast ? fast_pool_realloc_array(heap, v[k], cap[k], ncap, sizeof(int))
                                : pool_realloc_array(heap, v[k], cap[k], ncap, sizeof(int));
                    if (!v[k]) return;
                    cap[k] = ncap;
                }
                v[k][i] = (int)i;
            }
        for (int k = 0; k < VECS; k++) {
            if (fast) fast_pool_free_array(heap, v[k], cap[k], sizeof(int));
            else pool_free_array(heap, v[k], cap[k], sizeof(int));
        }
    }
    size_t now;
    if (fast) fast_pool_usage(heap, &now, reserved_peak);
    else pool_usage(heap, &now, reserved_peak);
}

static void test_fast_pool_vector_pathology(void) {
    pool_heap *h = pool_create(NULL);
    fast_pool_heap *f = fast_pool_create(NULL);
    CHECK(h && f);
    size_t pool_peak = 0, fast_peak = 0;
    grow_vectors(h, 0, &pool_peak);
    grow_vectors(f, 1, &fast_peak);
    size_t pool_blocks = blocks_of(bp_set_pool(&h->set, 8));
    size_t fast_blocks = blocks_of(bp_set_pool(&fast_pool_singletons.set, 8));
    pool_destroy(h);
    fast_pool_destroy(f);
    CHECK(pool_peak > 0 && fast_peak > 0);
    /* about 9x here; the factor is not the point, the direction is */
    CHECK_MSG(fast_blocks > pool_blocks && fast_peak > 3 * pool_peak,
              "blocks %zu vs %zu, reserved peak %zu vs %zu", fast_blocks, pool_blocks, fast_peak, pool_peak);
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"next_size_doubles", test_next_size_doubles},
        {"max_size_caps_growth", test_max_size_caps_growth},
        {"unordered_free_is_lifo", test_unordered_free_is_lifo},
        {"ordered_free_keeps_list_sorted", test_ordered_free_keeps_list_sorted},
        {"ordered_malloc_contiguous_and_fragmented", test_ordered_malloc_contiguous_and_fragmented},
        {"ordered_malloc_larger_than_next_size", test_ordered_malloc_larger_than_next_size},
        {"purge_returns_all", test_purge_returns_all},
        {"limit_gives_null", test_limit_gives_null},
        {"alignment_rules", test_alignment_rules},
        {"pool_heap_arrays_and_reset", test_pool_heap_arrays_and_reset},
        {"fast_pool_handles_share_pools", test_fast_pool_handles_share_pools},
        {"fast_pool_first_handle_sets_limit", test_fast_pool_first_handle_sets_limit},
        {"fast_pool_arrays_free_unordered", test_fast_pool_arrays_free_unordered},
        {"fast_pool_vector_pathology", test_fast_pool_vector_pathology},
        {NULL, NULL}};
    return am_run_tests("boost_pool", tests, argc, argv);
}
