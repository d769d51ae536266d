/* heap_cases.h: the query-heap test cases, included by test_heap.c once per
 * node -> index storage kind with HQ naming the heap type and HQ_HASH its kind.
 * Not a test on its own. */
#define HC_CAT_(a, b) a##_##b
#define HC_CAT(a, b) HC_CAT_(a, b)
#define HF(f) HC_CAT(HQ, f)

/* Heap order, handles and keys agree; hash storage holds one entry a node. */
static int HF(consistent)(const HQ *q) {
    const HC_CAT(HQ, entry) *e = q->heap.data;
    const HC_CAT(HQ, node) *nodes = q->inserted.data;
    size_t in_heap = 0;
    for (size_t p = 0; p < q->heap.size; p++) {
        if (e[p].index >= q->inserted.size) return 0;
        if (nodes[e[p].index].handle != p || nodes[e[p].index].key != e[p].key) return 0;
        if (p && HF(less)(e[p], e[(p - 1) / 4])) return 0;
    }
    for (size_t i = 0; i < q->inserted.size; i++) {
        if (HF(get)(q, nodes[i].node) != &nodes[i]) return 0;
        if (nodes[i].handle != AM_QHEAP_REMOVED) in_heap++;
    }
#if HQ_HASH
    if (q->slots != q->inserted.size) return 0;
#endif
    return in_heap == q->heap.size;
}

#define HC_NODES 3000

/* Random inserts, decrease-keys and delete-mins against a model that scans for
 * the least (key, insertion index); three queries with clear between. */
static void HF(test_pops_in_order)(void) {
    am_heap *h = new_heap();
    CHECK(h);
    HQ q;
    CHECK(HF(init)(&q, h, HC_NODES) == 0);
    static int state[HC_NODES]; /* 0 never inserted, 1 in heap, 2 removed */
    static int32_t key[HC_NODES];
    static uint32_t order[HC_NODES], data[HC_NODES];
    uint64_t rng = 21;
    for (int query = 0; query < 3; query++) {
        memset(state, 0, sizeof state);
        uint32_t inserted = 0, live = 0, popped = 0;
        int32_t last_key = INT32_MIN;
        for (int step = 0; step < 12000; step++) {
            int op = (int)am_rand_below(&rng, 100);
            uint32_t v = (uint32_t)am_rand_below(&rng, HC_NODES);
            if (op < 40) {
                if (state[v]) {
                    CHECK(HF(was_inserted)(&q, v));
                    CHECK(HF(was_removed)(&q, v) == (state[v] == 2));
                    CHECK(HF(key)(&q, v) == key[v] && *HF(data)(&q, v) == data[v]);
                    continue;
                }
                CHECK(!HF(was_inserted)(&q, v) && HF(get)(&q, v) == NULL);
                /* keys from a small range, so ties are common; never below
                 * what was popped, as in Dijkstra */
                int32_t k = last_key + (int32_t)am_rand_below(&rng, 40);
                if (k < 0) k = (int32_t)am_rand_below(&rng, 40);
                CHECK(HF(insert)(&q, v, k, v * 3u + 1) == 0);
                state[v] = 1;
                key[v] = k;
                data[v] = v * 3u + 1;
                order[v] = inserted++;
                live++;
            } else if (op < 65) {
                if (state[v] != 1) continue;
                int32_t k = key[v] - (int32_t)am_rand_below(&rng, 20);
                if (k < last_key) k = last_key;
                HF(decrease_key)(&q, v, k);
                key[v] = k;
                *HF(data)(&q, v) = data[v] = 7;
            } else {
                CHECK(HF(empty)(&q) == (live == 0));
                if (!live) continue;
                int best = -1;
                for (int u = 0; u < HC_NODES; u++) {
                    if (state[u] != 1) continue;
                    if (best < 0 || key[u] < key[best] ||
                        (key[u] == key[best] && order[u] < order[best]))
                        best = u;
                }
                CHECK(HF(min)(&q) == (uint32_t)best && HF(min_key)(&q) == key[best]);
                uint32_t got = HF(delete_min)(&q);
                CHECK_MSG(got == (uint32_t)best, "query %d step %d: popped %u, want %d", query, step,
                          got, best);
                CHECK(key[best] >= last_key);
                last_key = key[best];
                state[best] = 2;
                live--;
                popped++;
                CHECK(HF(was_removed)(&q, got) && HF(key)(&q, got) == key[best]);
            }
            CHECK(HF(size)(&q) == live && HF(inserted_count)(&q) == inserted);
            if (step % 199 == 0) CHECK(HF(consistent)(&q));
        }
        CHECK(HF(consistent)(&q));
        CHECK(popped > 1000 && inserted > 1000);
        HF(clear)(&q);
        CHECK(HF(empty)(&q) && HF(inserted_count)(&q) == 0);
        for (uint32_t u = 0; u < HC_NODES; u++) CHECK(!HF(was_inserted)(&q, u));
    }
    HF(destroy)(&q);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

/* Dijkstra with this heap equals Bellman-Ford on random graphs, from several
 * sources with one heap cleared between queries; parents form shortest paths. */
#define HC_V 300
#define HC_E 1500
static void HF(test_dijkstra)(void) {
    am_heap *h = new_heap();
    CHECK(h);
    static uint32_t from[HC_E], to[HC_E], first[HC_V + 1], adj[HC_E];
    static int32_t w[HC_E];
    static int64_t bf[HC_V];
    uint64_t rng = 8;
    HQ q;
    CHECK(HF(init)(&q, h, HC_V) == 0);
    for (int graph = 0; graph < 3; graph++) {
        /* random directed edges, grouped by source (counting sort) */
        memset(first, 0, sizeof first);
        for (int e = 0; e < HC_E; e++) {
            from[e] = (uint32_t)am_rand_below(&rng, HC_V);
            to[e] = (uint32_t)am_rand_below(&rng, HC_V);
            w[e] = 1 + (int32_t)am_rand_below(&rng, graph == 2 ? 3 : 100); /* graph 2: many ties */
            first[from[e] + 1]++;
        }
        for (int v = 0; v < HC_V; v++) first[v + 1] += first[v];
        {
            static uint32_t fill[HC_V];
            memcpy(fill, first, sizeof fill);
            for (uint32_t e = 0; e < HC_E; e++) adj[fill[from[e]]++] = e;
        }
        for (int s = 0; s < 6; s++) {
            uint32_t src = (uint32_t)am_rand_below(&rng, HC_V);
            /* Bellman-Ford */
            for (int v = 0; v < HC_V; v++) bf[v] = INT64_MAX;
            bf[src] = 0;
            for (int round = 0; round < HC_V; round++) {
                int changed = 0;
                for (int e = 0; e < HC_E; e++)
                    if (bf[from[e]] != INT64_MAX && bf[from[e]] + w[e] < bf[to[e]]) {
                        bf[to[e]] = bf[from[e]] + w[e];
                        changed = 1;
                    }
                if (!changed) break;
            }
            /* Dijkstra */
            HF(clear)(&q);
            CHECK(HF(insert)(&q, src, 0, src) == 0);
            while (!HF(empty)(&q)) {
                uint32_t u = HF(delete_min)(&q);
                int32_t du = HF(key)(&q, u);
                for (uint32_t i = first[u]; i < first[u + 1]; i++) {
                    uint32_t e = adj[i], v = to[e];
                    int32_t nd = du + w[e];
                    HC_CAT(HQ, node) *n = HF(get)(&q, v);
                    if (!n) {
                        CHECK(HF(insert)(&q, v, nd, u) == 0);
                    } else if (n->handle != AM_QHEAP_REMOVED && nd < n->key) {
                        HF(decrease_key)(&q, v, nd);
                        *HF(data)(&q, v) = u;
                    }
                }
            }
            for (uint32_t v = 0; v < HC_V; v++) {
                if (bf[v] == INT64_MAX) { CHECK(!HF(was_inserted)(&q, v)); continue; }
                CHECK(HF(was_inserted)(&q, v) && HF(was_removed)(&q, v));
                CHECK_MSG(HF(key)(&q, v) == bf[v], "graph %d node %u: %d, want %lld", graph, v,
                          (int)HF(key)(&q, v), (long long)bf[v]);
                if (v == src) continue;
                uint32_t p = *HF(data)(&q, v);
                int tight = 0;
                for (uint32_t i = first[p]; i < first[p + 1]; i++)
                    if (to[adj[i]] == v && bf[p] + w[adj[i]] == bf[v]) tight = 1;
                CHECK(tight);
            }
        }
    }
    HF(destroy)(&q);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

/* clear keeps the arrays for the next query; hash storage gives back its
 * per-node entries (the allocations OSRM's profile saw), dense gives nothing. */
static void HF(test_clear_and_bytes)(void) {
    am_heap *h = new_heap();
    CHECK(h);
    HQ q;
    CHECK(HF(init)(&q, h, 5000) == 0);
#if !HQ_HASH
    CHECK(live_bytes(h) == 5000 * sizeof(uint32_t));
#else
    CHECK(live_bytes(h) == 0);
#endif
    uint64_t rng = 4;
    for (int round = 0; round < 4; round++) {
        for (uint32_t v = 0; v < 5000; v += 1 + (uint32_t)am_rand_below(&rng, 3))
            CHECK(HF(insert)(&q, v, (int32_t)am_rand_below(&rng, 1000), v) == 0);
        size_t n = HF(inserted_count)(&q);
        size_t before = live_bytes(h);
        size_t arrays = q.inserted.cap * sizeof(q.inserted.data[0]) +
                        q.heap.cap * sizeof(q.heap.data[0]);
#if HQ_HASH
        CHECK(before == arrays + q.bucket_count * sizeof(void *) + n * sizeof(HC_CAT(HQ, slot)));
#else
        CHECK(before == arrays + 5000 * sizeof(uint32_t));
#endif
        for (size_t i = 0; i < n / 2; i++) HF(delete_min)(&q);
        HF(clear)(&q);
#if HQ_HASH
        CHECK(live_bytes(h) == before - n * sizeof(HC_CAT(HQ, slot)));
        CHECK(q.slots == 0);
#else
        CHECK(live_bytes(h) == before);
#endif
        CHECK(HF(empty)(&q) && !HF(was_inserted)(&q, 0));
    }
    HF(destroy)(&q);
    CHECK(live_bytes(h) == 0);
    /* destroy right after init, and after a clear of nothing */
    CHECK(HF(init)(&q, h, 10) == 0);
    HF(clear)(&q);
    HF(destroy)(&q);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

/* Out of memory: init or insert reports it; the heap keeps every node
 * inserted so far, pops them in order, and destroy returns every byte. */
static void HF(test_out_of_memory)(void) {
    size_t limit = 0;
    am_heap *h = new_limited_heap(&limit);
    CHECK(h);
    HQ q;
    /* a dense array bigger than the limit; hash storage takes nothing up front */
    int rc = HF(init)(&q, h, (uint32_t)limit);
#if HQ_HASH
    CHECK(rc == 0);
#else
    CHECK(rc == AM_QHEAP_OOM);
#endif
    HF(destroy)(&q);
    CHECK(live_bytes(h) == 0);
    /* Boost's pool keeps asking for the block size that failed, even after a
     * purge when it holds no block: go on with a new heap */
    if (AM_FAILED_GROWTH_STICKS) {
        am_destroy(h);
        h = new_limited_heap(&limit);
        CHECK(h);
    }

    uint32_t nodes = (uint32_t)(limit / 16); /* 24+ bytes a node: cannot all fit */
    rc = HF(init)(&q, h, nodes);
    /* Pools that grow apart take a chunk of many blocks for the first block of
     * a size, which under the least limits may not fit the dense array's (a
     * 1 KiB block takes a 16 KiB chunk in libstdc++): the next limit up, and
     * its limit/16 nodes, until the array fits */
    while (AM_POOLS_GROW_APART && rc == AM_QHEAP_OOM) {
        HF(destroy)(&q);
        am_destroy(h);
        h = new_limited_heap_above(limit, &limit);
        CHECK_MSG(h, "the dense array of limit/16 nodes fits under no limit up to 1 MiB");
        nodes = (uint32_t)(limit / 16);
        rc = HF(init)(&q, h, nodes);
    }
    CHECK(rc == 0);
    static int32_t key[1u << 16];
    static uint32_t perm[1u << 16];
    CHECK(nodes <= (1u << 16));
    for (uint32_t i = 0; i < nodes; i++) perm[i] = i;
    uint64_t rng = 6;
    for (uint32_t i = nodes; i > 1; i--) {
        uint32_t j = (uint32_t)am_rand_below(&rng, i), t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    uint32_t ok = 0;
    int failed = 0;
    for (uint32_t i = 0; i < nodes; i++) {
        uint32_t v = perm[i];
        int32_t k = (int32_t)am_rand_below(&rng, 100);
        size_t before = HF(inserted_count)(&q);
        int r = HF(insert)(&q, v, k, v);
        if (r) {
            failed = 1;
            CHECK(r == AM_QHEAP_OOM);
            CHECK(HF(inserted_count)(&q) == before && !HF(was_inserted)(&q, v));
            CHECK(HF(consistent)(&q));
            break;
        }
        key[v] = k;
        ok++;
    }
    CHECK_MSG(failed, "limit %zu never reached", limit);
    CHECK(HF(size)(&q) == ok && HF(consistent)(&q));
    /* pops come out in (key, insertion order) order and match what went in */
    int32_t last = -1;
    uint32_t last_order = 0, count = 0;
    while (!HF(empty)(&q)) {
        uint32_t v = HF(delete_min)(&q);
        uint32_t at = (uint32_t)(HF(get)(&q, v) - q.inserted.data);
        CHECK(key[v] > last || (key[v] == last && at > last_order));
        CHECK(HF(key)(&q, v) == key[v] && *HF(data)(&q, v) == v);
        last = key[v];
        last_order = at;
        count++;
    }
    CHECK(count == ok);
    HF(clear)(&q);
    HF(destroy)(&q);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

#undef HF
#undef HC_CAT
#undef HC_CAT_
#undef HC_NODES
#undef HC_V
#undef HC_E
