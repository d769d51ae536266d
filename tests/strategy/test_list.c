/* test_list.c: containers/list.h against a plain-array model, under each
 * strategy: contents and both link directions after every operation, stable
 * sort, deep copy, out of memory, and every byte returned. */
#include <stdlib.h>
#include <string.h>
#include "container_util.h"

typedef struct rec {
    int key;
    unsigned seq; /* insertion order, to see that sort is stable */
} rec;

#define AM_LIST_NAME rlist
#define AM_LIST_T rec
#define AM_LIST_LESS(a, b) ((a).key < (b).key)
#include "list.h"

#define MODEL_MAX 65536

typedef struct model {
    rec a[MODEL_MAX];
    size_t n;
} model;

static int rec_eq(rec x, rec y) { return x.key == y.key && x.seq == y.seq; }

/* 1 if l holds exactly m's records, forwards and backwards, links consistent */
static int list_matches(const rlist *l, const model *m) {
    if (rlist_size(l) != m->n) return 0;
    if (!l->head != !l->tail) return 0;
    if (l->head && (l->head->prev || l->tail->next)) return 0;
    size_t i = 0;
    const rlist_node *prev = NULL;
    for (const rlist_node *n = rlist_first(l); n; n = rlist_next(n), i++) {
        if (i >= m->n || !rec_eq(n->value, m->a[i]) || n->prev != prev) return 0;
        prev = n;
    }
    if (i != m->n || prev != l->tail) return 0;
    for (const rlist_node *n = rlist_last(l); n; n = rlist_prev(n)) {
        if (i == 0 || !rec_eq(n->value, m->a[--i])) return 0;
    }
    return i == 0;
}

static void model_insert(model *m, size_t at, rec r) {
    memmove(m->a + at + 1, m->a + at, (m->n - at) * sizeof(rec));
    m->a[at] = r;
    m->n++;
}

static void model_erase(model *m, size_t at) {
    memmove(m->a + at, m->a + at + 1, (m->n - at - 1) * sizeof(rec));
    m->n--;
}

/* the model's stable sort: by key, then by position, which seq records */
static int cmp_key_seq(const void *pa, const void *pb) {
    const rec *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void model_stable_sort(model *m) {
    /* insertion sort: stable by construction, whatever the seq values */
    for (size_t i = 1; i < m->n; i++) {
        rec x = m->a[i];
        size_t j = i;
        while (j > 0 && x.key < m->a[j - 1].key) { m->a[j] = m->a[j - 1]; j--; }
        m->a[j] = x;
    }
}

static rlist_node *node_at(const rlist *l, size_t i) {
    rlist_node *n = rlist_first(l);
    while (i--) n = rlist_next(n);
    return n;
}

static model g_model, g_model2;

static void test_random_operations(void) {
    am_heap *h = new_heap();
    CHECK(h);
    rlist l;
    rlist_init(&l, h);
    model *m = &g_model;
    m->n = 0;
    uint64_t rng = 42;
    unsigned seq = 0;
    for (int step = 0; step < 20000; step++) {
        int op = (int)am_rand_below(&rng, 100);
        rec r = {(int)am_rand_below(&rng, 50), seq++};
        if (m->n >= 300) op = 50 + op / 2; /* drift back down */
        if (op < 14) {
            CHECK(rlist_push_back(&l, r) == 0);
            model_insert(m, m->n, r);
        } else if (op < 28) {
            CHECK(rlist_push_front(&l, r) == 0);
            model_insert(m, 0, r);
        } else if (op < 48) {
            size_t at = (size_t)am_rand_below(&rng, m->n + 1);
            rlist_node *pos = at < m->n ? node_at(&l, at) : NULL;
            rlist_node *n = rlist_insert_before(&l, pos, r);
            CHECK(n && rec_eq(n->value, r));
            model_insert(m, at, r);
        } else if (op < 60) {
            if (!m->n) continue;
            rlist_pop_back(&l);
            model_erase(m, m->n - 1);
        } else if (op < 72) {
            if (!m->n) continue;
            rlist_pop_front(&l);
            model_erase(m, 0);
        } else if (op < 94) {
            if (!m->n) continue;
            size_t at = (size_t)am_rand_below(&rng, m->n);
            rlist_node *next = rlist_erase(&l, node_at(&l, at));
            model_erase(m, at);
            CHECK(at < m->n ? next && rec_eq(next->value, m->a[at]) : next == NULL);
        } else if (op < 97) {
            rlist_sort(&l);
            model_stable_sort(m);
        } else if (op < 99) {
            /* a copy is equal, and independent of the original both ways */
            rlist c;
            CHECK(rlist_copy(&c, &l, h) == 0);
            CHECK(list_matches(&c, m));
            rec extra = {-1, 0};
            CHECK(rlist_push_front(&c, extra) == 0);
            if (l.head) l.head->value.key += 1000;
            CHECK(c.head->value.key == -1);
            if (l.head) {
                CHECK(c.head->next->value.key == l.head->value.key - 1000);
                l.head->value.key -= 1000;
            }
            rlist_destroy(&c);
        } else {
            rlist_clear(&l);
            m->n = 0;
        }
        CHECK_MSG(list_matches(&l, m), "step %d op %d", step, op);
    }
    rlist_destroy(&l);
    CHECK(l.size == 0 && l.head == NULL);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

/* Sorted by key, equal keys in insertion order, the same records as before. */
static void test_sort_stable(void) {
    am_heap *h = new_heap();
    CHECK(h);
    static const size_t sizes[] = {0, 1, 2, 3, 5, 17, 64, 65, 1000, 4096};
    uint64_t rng = 7;
    for (int kind = 0; kind < 5; kind++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            rlist l;
            rlist_init(&l, h);
            model *m = &g_model;
            m->n = 0;
            for (size_t i = 0; i < n; i++) {
                int key;
                switch (kind) {
                case 0: key = (int)am_rand_below(&rng, 8); break;           /* many ties */
                case 1: key = (int)am_rand_below(&rng, 1000000); break;     /* few ties */
                case 2: key = (int)i; break;                                /* sorted */
                case 3: key = (int)(n - i); break;                          /* reversed */
                default: key = 3; break;                                    /* all equal */
                }
                rec r = {key, (unsigned)i};
                CHECK(rlist_push_back(&l, r) == 0);
                m->a[m->n++] = r;
            }
            size_t before = live_bytes(h);
            rlist_sort(&l);
            CHECK(live_bytes(h) == before); /* relinks, allocates nothing */
            qsort(m->a, m->n, sizeof(rec), cmp_key_seq);
            CHECK_MSG(list_matches(&l, m), "kind %d size %zu", kind, n);
            rlist_destroy(&l);
        }
    }
    /* a large run: stable and complete. Its nodes are freed in sorted, not
     * address, order, quadratic where a free walks an ordered free list
     * (pool: 6.6 s of make test's C stage, a minute under ASan): there a fifth
     * of it; the sort is the container's, and every other row runs the whole */
    rlist l;
    rlist_init(&l, h);
    const unsigned big = AM_ASAN || AM_FREE_WALKS ? 20000 : 100000;
    for (unsigned i = 0; i < big; i++) {
        rec r = {(int)am_rand_below(&rng, 100), i};
        CHECK(rlist_push_back(&l, r) == 0);
    }
    rlist_sort(&l);
    unsigned char *seen = calloc(big, 1);
    CHECK(seen);
    const rlist_node *prev = NULL;
    size_t count = 0;
    int ok = 1;
    for (const rlist_node *n = l.head; n; n = n->next, count++) {
        if (n->prev != prev || n->value.seq >= big || seen[n->value.seq]) { ok = 0; break; }
        seen[n->value.seq] = 1;
        if (prev && (prev->value.key > n->value.key ||
                     (prev->value.key == n->value.key && prev->value.seq > n->value.seq))) {
            ok = 0;
            break;
        }
        prev = n;
    }
    free(seen);
    CHECK(ok);
    CHECK(count == big && prev == l.tail && l.size == big);
    rlist_destroy(&l);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

/* A copy into another heap takes its bytes there, and each heap gets them back. */
static void test_copy_other_heap(void) {
    am_heap *h1 = new_heap(), *h2 = new_heap();
    CHECK(h1 && h2);
    rlist a, b;
    rlist_init(&a, h1);
    model *m = &g_model;
    m->n = 0;
    for (unsigned i = 0; i < 500; i++) {
        rec r = {(int)(i * 7 % 13), i};
        CHECK(rlist_push_back(&a, r) == 0);
        m->a[m->n++] = r;
    }
    size_t live1 = live_bytes(h1);
    CHECK(live1 == 500 * sizeof(rlist_node));
    CHECK(rlist_copy(&b, &a, h2) == 0);
    CHECK(b.heap == h2);
    CHECK(live_bytes(h1) == live1);
    CHECK(live_bytes(h2) == 500 * sizeof(rlist_node));
    CHECK(list_matches(&b, m));
    rlist_sort(&b);
    CHECK(list_matches(&a, m)); /* the original is untouched */
    rlist_destroy(&a);
    CHECK(live_bytes(h1) == 0);
    model_stable_sort(m);
    CHECK(list_matches(&b, m));
    rlist_destroy(&b);
    CHECK(live_bytes(h2) == 0);
    /* copying an empty list takes nothing */
    rlist_init(&a, h1);
    CHECK(rlist_copy(&b, &a, h2) == 0);
    CHECK(b.size == 0 && b.head == NULL && live_bytes(h2) == 0);
    am_destroy(h1);
    am_destroy(h2);
}

/* Out of memory: the failing call says so and changes nothing; the list keeps
 * working and still returns every byte. */
static void test_out_of_memory(void) {
    size_t limit = 0;
    am_heap *h = new_limited_heap(&limit);
    CHECK(h);
    rlist l;
    rlist_init(&l, h);
    model *m = &g_model;
    m->n = 0;
    uint64_t rng = 99;
    int failures = 0;
    unsigned seq = 0;
    /* more nodes than the limit can hold, so some call must fail */
    size_t attempts = limit / sizeof(rlist_node) + 64;
    CHECK(attempts < MODEL_MAX);
    for (size_t i = 0; i < attempts; i++) {
        rec r = {(int)am_rand_below(&rng, 10), seq++};
        int op = (int)am_rand_below(&rng, 3);
        if (op == 0) {
            if (rlist_push_back(&l, r)) failures++;
            else { CHECK(m->n < MODEL_MAX); model_insert(m, m->n, r); }
        } else if (op == 1) {
            if (rlist_push_front(&l, r)) failures++;
            else { CHECK(m->n < MODEL_MAX); model_insert(m, 0, r); }
        } else {
            size_t at = (size_t)am_rand_below(&rng, m->n + 1);
            rlist_node *pos = at < m->n ? node_at(&l, at) : NULL;
            if (!rlist_insert_before(&l, pos, r)) failures++;
            else { CHECK(m->n < MODEL_MAX); model_insert(m, at, r); }
        }
        if (m->n < 512 || i % 256 == 0) CHECK(list_matches(&l, m));
    }
    CHECK_MSG(failures > 0, "limit %zu never reached", limit);
    CHECK(m->n > 0);
    /* a copy into the full heap fails cleanly */
    rlist c;
    size_t live = live_bytes(h);
    int rc = rlist_copy(&c, &l, h);
    if (rc) {
        CHECK(rc == AM_LIST_OOM);
        CHECK(c.size == 0 && c.head == NULL && c.tail == NULL);
        CHECK(live_bytes(h) == live);
    } else {
        CHECK(list_matches(&c, m));
        rlist_destroy(&c);
    }
    /* still usable: erase half, sort, and (where frees are reused) push again */
    for (size_t k = m->n / 2; k > 0; k--) {
        size_t at = (size_t)am_rand_below(&rng, m->n);
        rlist_erase(&l, node_at(&l, at));
        model_erase(m, at);
    }
    rlist_sort(&l);
    model_stable_sort(m);
    CHECK(list_matches(&l, m));
#if AM_FREE_REUSES
    rec r = {5, seq++};
    CHECK(rlist_push_back(&l, r) == 0);
    model_insert(m, m->n, r);
    CHECK(list_matches(&l, m));
#endif
    rlist_destroy(&l);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

/* A copy that fails half way frees what it took. */
static void test_copy_out_of_memory(void) {
    if (AM_HEAPS_SHARE_STATE)
        CHECK_SKIP("the limited heap is a handle onto the pools the unlimited one set up ("
                   AM_STR(AM_STRATEGY) "_HEAPS_SHARE_STATE): the first heap's limit binds both");
    am_heap *big = new_heap();
    size_t limit = 0;
    am_heap *small = new_limited_heap(&limit);
    CHECK(big && small);
    rlist a, c;
    rlist_init(&a, big);
    model *m = &g_model2;
    m->n = 0;
    size_t n = limit / sizeof(rlist_node) + 100;
    CHECK(n <= MODEL_MAX);
    for (size_t i = 0; i < n; i++) {
        rec r = {(int)i, (unsigned)i};
        CHECK(rlist_push_back(&a, r) == 0);
        m->a[m->n++] = r;
    }
    CHECK(rlist_copy(&c, &a, small) == AM_LIST_OOM);
    CHECK(c.size == 0 && c.head == NULL && c.tail == NULL && c.heap == small);
    CHECK(live_bytes(small) == 0);
    CHECK(list_matches(&a, m));
    rlist_destroy(&c); /* harmless on the emptied copy */
    rlist_destroy(&a);
    CHECK(live_bytes(big) == 0);
    am_destroy(big);
    am_destroy(small);
}

static const am_test tests[] = {
    {"list_random_operations", test_random_operations},
    {"list_sort_stable", test_sort_stable},
    {"list_copy_other_heap", test_copy_other_heap},
    {"list_out_of_memory", test_out_of_memory},
    {"list_copy_out_of_memory", test_copy_out_of_memory},
    {NULL, NULL}};

int main(int argc, char **argv) { return am_run_tests("list/" AM_ROW_NAME, tests, argc, argv); }
