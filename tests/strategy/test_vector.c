/* test_vector.c: containers/vector.h against a plain-array model, under each
 * strategy: push, pop, resize (zero fill), reserve, copy, sort (equal to
 * qsort's result), out of memory, and every byte returned. */
#include <stdlib.h>
#include <string.h>
#include "container_util.h"

#define AM_VEC_NAME ivec
#define AM_VEC_T int
#define AM_VEC_LESS(a, b) ((a) < (b))
#include "vector.h"

typedef struct ic {
    int i;
    char c;
} ic;

#define AM_VEC_NAME icvec
#define AM_VEC_T ic
#define AM_VEC_LESS(a, b) ((a).i < (b).i)
#include "vector.h"

#define MODEL_MAX 200000

static int g_model[MODEL_MAX], g_sorted[MODEL_MAX];

static int same(const ivec *v, const int *m, size_t n) {
    return v->size == n && v->cap >= n && (n == 0 || memcmp(v->data, m, n * sizeof(int)) == 0);
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void test_random_operations(void) {
    am_heap *h = new_heap(), *h2 = new_heap();
    CHECK(h && h2);
    ivec v;
    ivec_init(&v, h);
    int *m = g_model;
    size_t n = 0;
    uint64_t rng = 3;
    for (int step = 0; step < 20000; step++) {
        int op = (int)am_rand_below(&rng, 100);
        if (op < 50) {
            int x = (int)am_rand(&rng);
            CHECK(ivec_push_back(&v, x) == 0);
            m[n++] = x;
        } else if (op < 70) {
            if (!n) continue;
            ivec_pop_back(&v);
            n--;
        } else if (op < 85) {
            size_t to = (size_t)am_rand_below(&rng, 3000);
            size_t cap = v.cap;
            CHECK(ivec_resize(&v, to) == 0);
            if (to <= cap) CHECK(v.cap == cap); /* shrinking or fitting does not reallocate */
            for (size_t i = n; i < to; i++) m[i] = 0; /* value-initialised */
            n = to;
        } else if (op < 92) {
            size_t want = (size_t)am_rand_below(&rng, 4000);
            size_t cap = v.cap;
            CHECK(ivec_reserve(&v, want) == 0);
            CHECK(v.cap == (want > cap ? want : cap));
        } else if (op < 97) {
            /* a copy into another heap is equal and independent */
            ivec c;
            CHECK(ivec_copy(&c, &v, h2) == 0);
            CHECK(same(&c, m, n) && c.heap == h2);
            CHECK(live_bytes(h2) == c.cap * sizeof(int));
            if (n) {
                c.data[0] ^= 1;
                CHECK(v.data[0] == m[0]);
            }
            CHECK(ivec_push_back(&c, 5) == 0);
            CHECK(v.size == n);
            ivec_destroy(&c);
            CHECK(live_bytes(h2) == 0);
        } else if (op < 99) {
            ivec_sort(&v);
            qsort(m, n, sizeof(int), cmp_int);
        } else {
            ivec_clear(&v);
            n = 0;
        }
        CHECK_MSG(same(&v, m, n), "step %d op %d", step, op);
        CHECK(live_bytes(h) == v.cap * sizeof(int));
    }
    ivec_destroy(&v);
    CHECK(v.data == NULL && v.size == 0 && v.cap == 0);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
    am_destroy(h2);
}

static void fill(int *a, size_t n, int kind, uint64_t *rng) {
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: a[i] = (int)am_rand(rng); break;
        case 1: a[i] = (int)am_rand_below(rng, 5); break;                 /* few distinct */
        case 2: a[i] = (int)i; break;                                     /* sorted */
        case 3: a[i] = (int)(n - i); break;                               /* reversed */
        case 4: a[i] = 7; break;                                          /* all equal */
        case 5: a[i] = (int)(i < n / 2 ? i : n - i); break;               /* organ pipe */
        case 6: a[i] = (int)(i % 2 ? (int)i : -(int)i); break;            /* sawtooth */
        default: a[i] = i + 1 == n ? -1 : (int)i; break;                  /* sorted, min last */
        }
    }
}

/* The sorted vector equals qsort's result on a copy, for every size up to 40
 * (the insertion-sort cut-over and around it) and large inputs of every shape. */
static void test_sort_equals_qsort(void) {
    am_heap *h = new_heap();
    CHECK(h);
    uint64_t rng = 11;
    static const size_t big[] = {100, 1000, 4097, 100000};
    for (int kind = 0; kind < 8; kind++) {
        for (size_t k = 0; k < 40 + sizeof big / sizeof big[0]; k++) {
            size_t n = k < 40 ? k : big[k - 40];
            fill(g_model, n, kind, &rng);
            ivec v;
            ivec_init(&v, h);
            for (size_t i = 0; i < n; i++) CHECK(ivec_push_back(&v, g_model[i]) == 0);
            memcpy(g_sorted, g_model, n * sizeof(int));
            qsort(g_sorted, n, sizeof(int), cmp_int);
            ivec_sort(&v);
            CHECK_MSG(same(&v, g_sorted, n), "kind %d size %zu", kind, n);
            ivec_destroy(&v);
        }
    }
    /* the heapsort fallback, forced by a zero depth budget */
    fill(g_model, 5000, 0, &rng);
    memcpy(g_sorted, g_model, 5000 * sizeof(int));
    qsort(g_sorted, 5000, sizeof(int), cmp_int);
    ivec_intro_sort(g_model, 5000, 0);
    CHECK(memcmp(g_model, g_sorted, 5000 * sizeof(int)) == 0);
    /* a struct sorted on one field: ordered, and the same records */
    icvec s;
    icvec_init(&s, h);
    for (int i = 0; i < 3000; i++) {
        ic x = {(int)am_rand_below(&rng, 100), (char)(i % 100)};
        CHECK(icvec_push_back(&s, x) == 0);
    }
    long sum_before = 0, sum_after = 0;
    for (size_t i = 0; i < s.size; i++) sum_before += s.data[i].i * 1000 + s.data[i].c;
    icvec_sort(&s);
    for (size_t i = 0; i < s.size; i++) {
        sum_after += s.data[i].i * 1000 + s.data[i].c;
        if (i) CHECK(s.data[i - 1].i <= s.data[i].i);
    }
    CHECK(sum_before == sum_after);
    icvec_destroy(&s);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

/* Out of memory: push, resize, reserve and copy fail with AM_VEC_OOM and leave
 * the vector as it was; it keeps working and returns every byte. A failed push
 * proves only that twice the vector does not fit: where a resize is
 * allocate-copy-free (pool rows) the old buffers are free again and a copy of
 * the vector may well fit, so the heap is filled to the last element before
 * the copy is tried. */
static void test_out_of_memory(void) {
    size_t limit = 0;
    am_heap *h = new_limited_heap(&limit);
    CHECK(h);
    ivec v;
    ivec_init(&v, h);
    size_t n = 0;
    int failed = 0;
    for (size_t i = 0; i < limit / sizeof(int) + 16; i++) {
        if (ivec_push_back(&v, (int)i)) { failed = 1; break; }
        g_model[n++] = (int)i;
    }
    CHECK_MSG(failed, "limit %zu never reached", limit);
    CHECK(same(&v, g_model, n));
    size_t cap = v.cap;
    CHECK(ivec_resize(&v, limit) == AM_VEC_OOM);
    CHECK(v.cap == cap && same(&v, g_model, n));
    CHECK(ivec_reserve(&v, limit * 2) == AM_VEC_OOM);
    CHECK(v.cap == cap && same(&v, g_model, n));
    CHECK(ivec_reserve(&v, SIZE_MAX / 2) == AM_VEC_OOM); /* overflowing byte count */
    CHECK(v.cap == cap && same(&v, g_model, n));
    /* where pools grow apart, ints fill the pool of ints alone: fillers the
     * copy's size fill the one it needs */
    size_t filler_n = AM_POOLS_GROW_APART ? v.size : 1;
    size_t most = limit / sizeof(int) + 1, fillers = 0;
    int **filler = calloc(most, sizeof *filler);
    CHECK(filler != NULL);
    while (fillers < most && (filler[fillers] = am_alloc_array(h, filler_n, sizeof(int))) != NULL) fillers++;
    CHECK_MSG(fillers < most, "%zu arrays of %zu ints allocated under a %zu-byte limit", fillers, filler_n, limit);
    ivec c;
    CHECK(ivec_copy(&c, &v, h) == AM_VEC_OOM);
    CHECK(c.size == 0 && c.data == NULL);
    ivec_destroy(&c);
    for (size_t i = 0; i < fillers; i++) am_free_array(h, filler[i], filler_n, sizeof(int));
    free(filler);
    /* still usable within its capacity */
    ivec_pop_back(&v);
    n--;
    CHECK(ivec_push_back(&v, -5) == 0);
    g_model[n++] = -5;
    ivec_sort(&v);
    qsort(g_model, n, sizeof(int), cmp_int);
    CHECK(same(&v, g_model, n));
    ivec_destroy(&v);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

static const am_test tests[] = {
    {"vector_random_operations", test_random_operations},
    {"vector_sort_equals_qsort", test_sort_equals_qsort},
    {"vector_out_of_memory", test_out_of_memory},
    {NULL, NULL}};

int main(int argc, char **argv) { return am_run_tests("vector/" AM_ROW_NAME, tests, argc, argv); }
