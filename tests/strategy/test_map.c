/* test_map.c: containers/map.h against a plain-array model, under each
 * strategy: ordered iteration, lower_bound, red-black invariants, maps whose
 * values are lists (the 2009 Boost monotonic comparison), out of memory, and every byte returned. */
#include <stdlib.h>
#include <string.h>
#include "container_util.h"

#define AM_MAP_NAME imap
#define AM_MAP_K int
#define AM_MAP_V long
#include "map.h"

typedef struct ic {
    int i;
    char c; /* the 2009 comparison's unaligned {int; char} */
} ic;

#define AM_LIST_NAME iclist
#define AM_LIST_T ic
#include "list.h"

#define AM_MAP_NAME lmap
#define AM_MAP_K int
#define AM_MAP_V iclist
#define AM_MAP_VALUE_INIT(vp, heap) iclist_init(vp, heap)
#define AM_MAP_VALUE_DESTROY(vp) iclist_destroy(vp)
#include "map.h"

#define KEYS 2000

typedef struct model {
    unsigned char present[KEYS];
    long value[KEYS];
    size_t n;
} model;

/* Black height of the subtree at n, or -1 if a red-black rule or a parent
 * link is broken below it. */
static int rb_check(const imap_node *n, const imap_node *parent) {
    if (!n) return 1;
    if (n->parent != parent) return -1;
    if (n->red && ((n->left && n->left->red) || (n->right && n->right->red))) return -1;
    if (n->left && !(n->left->key < n->key)) return -1;
    if (n->right && !(n->key < n->right->key)) return -1;
    int l = rb_check(n->left, n), r = rb_check(n->right, n);
    if (l < 0 || r < 0 || l != r) return -1;
    return l + !n->red;
}

static int height(const imap_node *n) {
    if (!n) return 0;
    int l = height(n->left), r = height(n->right);
    return 1 + (l > r ? l : r);
}

static int map_valid(const imap *m) {
    if (m->root && (m->root->red || m->root->parent)) return 0;
    return rb_check(m->root, NULL) > 0;
}

/* 1 if m holds exactly the model's keys and values, in order both ways */
static int map_matches(const imap *m, const model *md) {
    if (imap_size(m) != md->n) return 0;
    const imap_node *n = imap_first(m);
    for (int k = 0; k < KEYS; k++) {
        if (!md->present[k]) continue;
        if (!n || n->key != k || n->value != md->value[k]) return 0;
        n = imap_next(n);
    }
    if (n) return 0;
    n = imap_last(m);
    for (int k = KEYS - 1; k >= 0; k--) {
        if (!md->present[k]) continue;
        if (!n || n->key != k) return 0;
        n = imap_prev(n);
    }
    return n == NULL;
}

static model g_model;

static void test_random_operations(void) {
    am_heap *h = new_heap();
    CHECK(h);
    imap m;
    imap_init(&m, h);
    model *md = &g_model;
    memset(md, 0, sizeof *md);
    uint64_t rng = 1234;
    for (int step = 0; step < 40000; step++) {
        int op = (int)am_rand_below(&rng, 100);
        /* keys cluster in a window that moves, so the map grows and shrinks */
        int k = (int)((am_rand_below(&rng, 600) + (uint64_t)step / 20) % KEYS);
        if (op < 45) {
            int inserted = -1;
            long *v = imap_find_or_insert(&m, k, &inserted);
            CHECK(v);
            CHECK(inserted == !md->present[k]);
            if (inserted) CHECK(*v == 0); /* a new value starts at zero */
            else CHECK(*v == md->value[k]);
            *v += step + 1;
            if (!md->present[k]) { md->present[k] = 1; md->n++; md->value[k] = 0; }
            md->value[k] += step + 1;
        } else if (op < 70) {
            CHECK(imap_erase(&m, k) == md->present[k]);
            if (md->present[k]) { md->present[k] = 0; md->n--; }
        } else if (op < 80) {
            /* erase by node, through lower_bound, and check what comes after */
            imap_node *n = imap_lower_bound(&m, k);
            if (!n) continue;
            int key = n->key, want_next = -1;
            for (int j = key + 1; j < KEYS; j++)
                if (md->present[j]) { want_next = j; break; }
            imap_node *next = imap_erase_node(&m, n);
            CHECK(want_next < 0 ? next == NULL : next && next->key == want_next);
            md->present[key] = 0;
            md->n--;
        } else {
            /* lookups: lower_bound, find, get */
            int want = -1;
            for (int j = k; j < KEYS; j++)
                if (md->present[j]) { want = j; break; }
            imap_node *lb = imap_lower_bound(&m, k);
            CHECK(want < 0 ? lb == NULL : lb && lb->key == want && lb->value == md->value[want]);
            imap_node *f = imap_find(&m, k);
            CHECK(md->present[k] ? f && f->key == k : f == NULL);
            long *v = imap_get(&m, k);
            CHECK(md->present[k] ? v && *v == md->value[k] : v == NULL);
        }
        if (step % 97 == 0 || md->n < 8) {
            CHECK_MSG(map_valid(&m), "red-black rules broken at step %d", step);
            CHECK_MSG(map_matches(&m, md), "contents differ at step %d", step);
        }
    }
    CHECK(map_valid(&m) && map_matches(&m, md));
    CHECK(md->n > 100);
    CHECK(live_bytes(h) == md->n * sizeof(imap_node));
    imap_destroy(&m);
    CHECK(m.size == 0 && m.root == NULL);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

/* Sorted and reverse-sorted insertion are the rotation-heavy cases: the tree
 * must stay within 2 log2(n + 1) levels. Then erase every other node while
 * iterating, with erase_node's return value. */
static void test_ordered_insert_and_erase_while_iterating(void) {
    am_heap *h = new_heap();
    CHECK(h);
    for (int dir = 0; dir < 2; dir++) {
        imap m;
        imap_init(&m, h);
        const int n = 10000;
        for (int i = 0; i < n; i++) {
            int k = dir ? n - 1 - i : i;
            long *v = imap_find_or_insert(&m, k, NULL);
            CHECK(v);
            *v = k * 3;
        }
        CHECK(map_valid(&m));
        CHECK(height(m.root) <= 28); /* 2 log2(10001) = 26.6 */
        int expect = 0;
        for (imap_node *x = imap_first(&m); x; expect++) {
            CHECK(x->key == expect && x->value == expect * 3);
            x = (expect % 2 == 0) ? imap_erase_node(&m, x) : imap_next(x);
        }
        CHECK(expect == n);
        CHECK(imap_size(&m) == (size_t)n / 2 && map_valid(&m));
        expect = 1;
        for (imap_node *x = imap_first(&m); x; x = imap_next(x), expect += 2) CHECK(x->key == expect);
        imap_destroy(&m);
        CHECK(live_bytes(h) == 0);
    }
    am_destroy(h);
}

/* The 2009 comparison's map<int, list<{int; char}>>: map[rand() % (len / 10)].push_back(n).
 * Each value is a list from the same heap; erase and destroy free the lists. */
static void test_map_of_lists(void) {
    am_heap *h = new_heap();
    CHECK(h);
    enum { LEN = 3000, BUCKETS = LEN / 10 };
    static int count[BUCKETS];
    static long sum[BUCKETS];
    memset(count, 0, sizeof count);
    memset(sum, 0, sizeof sum);
    lmap m;
    lmap_init(&m, h);
    uint64_t rng = 5;
    for (int n = 0; n < LEN; n++) {
        int k = (int)am_rand_below(&rng, BUCKETS);
        iclist *l = lmap_find_or_insert(&m, k, NULL);
        CHECK(l && l->heap == h);
        ic x = {n, (char)(n & 0x7f)};
        CHECK(iclist_push_back(l, x) == 0);
        count[k]++;
        sum[k] += n;
    }
    size_t keys = 0, nodes = 0;
    for (int k = 0; k < BUCKETS; k++) {
        iclist *l = lmap_get(&m, k);
        CHECK(count[k] ? l != NULL : l == NULL);
        if (!l) continue;
        keys++;
        nodes += l->size;
        CHECK(l->size == (size_t)count[k]);
        long s = 0;
        int last = -1;
        for (iclist_node *x = iclist_first(l); x; x = iclist_next(x)) {
            CHECK(x->value.i > last); /* pushed in increasing n */
            CHECK(x->value.c == (char)(x->value.i & 0x7f));
            last = x->value.i;
            s += x->value.i;
        }
        CHECK(s == sum[k]);
    }
    CHECK(lmap_size(&m) == keys);
    CHECK(live_bytes(h) == keys * sizeof(lmap_node) + nodes * sizeof(iclist_node));
    /* erasing a key frees its list with it */
    for (int k = 0; k < BUCKETS; k += 3) {
        if (!count[k]) continue;
        CHECK(lmap_erase(&m, k) == 1);
        keys--;
        nodes -= (size_t)count[k];
    }
    CHECK(live_bytes(h) == keys * sizeof(lmap_node) + nodes * sizeof(iclist_node));
    lmap_destroy(&m);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

/* Out of memory: insertion returns NULL and the map is unchanged and valid;
 * erase still works; every byte comes back. */
static void test_out_of_memory(void) {
    size_t limit = 0;
    am_heap *h = new_limited_heap(&limit);
    CHECK(h);
    imap m;
    imap_init(&m, h);
    model *md = &g_model;
    memset(md, 0, sizeof *md);
    uint64_t rng = 77;
    int failures = 0;
    size_t attempts = limit / sizeof(imap_node) + 200;
    for (size_t i = 0; i < attempts && md->n < KEYS - 1; i++) {
        int k = (int)am_rand_below(&rng, KEYS);
        int was = md->present[k];
        long *v = imap_find_or_insert(&m, k, NULL);
        if (!v) {
            CHECK(!was); /* a present key needs no memory */
            failures++;
        } else {
            if (!was) { md->present[k] = 1; md->n++; md->value[k] = 0; }
            *v += 1;
            md->value[k] += 1;
        }
        if (md->n < 256 || i % 64 == 0) CHECK(map_valid(&m) && map_matches(&m, md));
    }
    CHECK_MSG(failures > 0, "limit %zu never reached", limit);
    CHECK(map_valid(&m) && map_matches(&m, md));
    for (int k = 0; k < KEYS; k += 2) {
        CHECK(imap_erase(&m, k) == md->present[k]);
        if (md->present[k]) { md->present[k] = 0; md->n--; }
    }
    CHECK(map_valid(&m) && map_matches(&m, md));
#if AM_FREE_REUSES
    if (!md->present[0]) {
        CHECK(imap_find_or_insert(&m, 0, NULL) != NULL);
        md->present[0] = 1;
        md->n++;
        CHECK(map_valid(&m) && map_matches(&m, md));
    }
#endif
    imap_destroy(&m);
    CHECK(live_bytes(h) == 0);

    /* a map of lists where a push into a value list fails */
    lmap lm;
    lmap_init(&lm, h);
    size_t pushed = 0;
    failures = 0;
    for (int n = 0; n < (int)(limit / sizeof(iclist_node)) + 100; n++) {
        iclist *l = lmap_find_or_insert(&lm, n % 17, NULL);
        if (!l) { failures++; continue; }
        size_t before = l->size;
        ic x = {n, 'x'};
        if (iclist_push_back(l, x)) {
            failures++;
            CHECK(l->size == before);
        } else {
            pushed++;
        }
    }
    CHECK(failures > 0);
    size_t total = 0;
    for (lmap_node *x = lmap_first(&lm); x; x = lmap_next(x)) {
        int prev = -1;
        for (iclist_node *y = iclist_first(&x->value); y; y = iclist_next(y)) {
            CHECK(y->value.i % 17 == x->key && y->value.i > prev);
            prev = y->value.i;
            total++;
        }
    }
    CHECK(total == pushed);
    lmap_destroy(&lm);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

static const am_test tests[] = {
    {"map_random_operations", test_random_operations},
    {"map_ordered_insert_and_erase_while_iterating", test_ordered_insert_and_erase_while_iterating},
    {"map_of_lists", test_map_of_lists},
    {"map_out_of_memory", test_out_of_memory},
    {NULL, NULL}};

int main(int argc, char **argv) { return am_run_tests("map/" AM_ROW_NAME, tests, argc, argv); }
