/* map_erase.c: len random keys inserted into a map<int, int>, then len/2
 * times the first key not below a random one is erased (when there is one).
 * Frees land in random tree order between lookups: what a pool's free list or a
 * malloc's bins make of that shows in the later lookups' cache misses.
 * ops(len) = len + len/2: insertions, then lookups with their erasures. */
#include <stdlib.h>
#include "checksum.h"

#define AM_MAP_NAME me_map
#define AM_MAP_K int
#define AM_MAP_V int
#include "map.h"

static uint64_t map_erase_run(am_heap *h, am_job *job, int *status) {
    uint64_t x = am_values_start(job->seed);
    size_t len = job->size;
    me_map m;
    me_map_init(&m, h);
    for (size_t i = 0; i < len; i++) {
        int k = am_value(&x);
        int *v = me_map_find_or_insert(&m, k, NULL);
        if (!v) {
            me_map_destroy(&m);
            *status = AM_ERR_OOM;
            return 0;
        }
        *v = (int)i;
    }
    am_escape(&m);
    for (size_t i = 0; i < len / 2; i++) {
        me_map_node *n = me_map_lower_bound(&m, am_value(&x));
        if (n) me_map_erase_node(&m, n);
    }
    uint64_t hash = AM_FNV_OFFSET;
    for (const me_map_node *n = me_map_first(&m); n; n = me_map_next(n)) hash = am_fnv_add(hash, n->key);
    hash += me_map_size(&m);
    me_map_destroy(&m);
    *status = AM_OK;
    return hash;
}

/* The same on plain arrays: the distinct keys sorted, and a Fenwick tree of
 * "still there" flags over them, which finds the first remaining key at or
 * after a position in O(log n). */
static uint64_t map_erase_oracle(am_job *job) {
    uint64_t x = am_values_start(job->seed);
    size_t len = job->size;
    int *keys = malloc((len ? len : 1) * sizeof *keys);
    size_t *tree = malloc((len + 1) * sizeof *tree); /* 1-based */
    unsigned char *gone = calloc(len ? len : 1, 1);
    uint64_t hash = 0;
    if (!keys || !tree || !gone) goto out;
    for (size_t i = 0; i < len; i++) keys[i] = am_value(&x);
    qsort(keys, len, sizeof *keys, am_compare_int);
    size_t m = 0;
    for (size_t i = 0; i < len; i++)
        if (m == 0 || keys[i] != keys[m - 1]) keys[m++] = keys[i];
    for (size_t j = 1; j <= m; j++) tree[j] = j & (0 - j); /* every flag set */
    size_t top = 1;
    while (top * 2 <= m) top *= 2;
    size_t alive = m;
    for (size_t i = 0; i < len / 2; i++) {
        int q = am_value(&x);
        size_t lo = 0, hi = m; /* first position whose key is >= q */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (keys[mid] < q) lo = mid + 1;
            else hi = mid;
        }
        size_t before = 0; /* remaining keys at positions < lo */
        for (size_t j = lo; j; j &= j - 1) before += tree[j];
        if (before == alive) continue;
        size_t want = before + 1, pos = 0; /* the want-th remaining key */
        for (size_t step = top; step; step >>= 1) {
            if (pos + step <= m && tree[pos + step] < want) {
                pos += step;
                want -= tree[pos];
            }
        }
        for (size_t j = pos + 1; j <= m; j += j & (0 - j)) tree[j]--;
        gone[pos] = 1;
        alive--;
    }
    hash = AM_FNV_OFFSET;
    for (size_t i = 0; i < m; i++)
        if (!gone[i]) hash = am_fnv_add(hash, keys[i]);
    hash += alive;
out:
    free(keys);
    free(tree);
    free(gone);
    return hash;
}

/* no count from the 2009 Boost monotonic comparison: 1,000 repetitions capped
 * by size, as its map test */
static unsigned map_erase_reps(size_t size) { return am_reps_capped(size, 10000); }
static double map_erase_ops(size_t size) { return (double)(size + size / 2); }

/* the oracle's arrays alone: the map's keys may repeat */
static uint64_t map_erase_min_bytes(const am_job *job) { return (uint64_t)job->size * (sizeof(int) + sizeof(size_t) + 1); }

const am_workload am_workload_map_erase = {
    .name = "map_erase",
    .summary = "map<int, int> of len random keys; len/2 times the lower_bound of a random key erased",
    .sizes = am_sizes_linear,
    .log_sizes = am_sizes_log,
    .reps = map_erase_reps,
    .ops = map_erase_ops,
    .run = map_erase_run,
    .oracle = map_erase_oracle,
    .threaded = 0,
    .seeds = 4,
    .age = 0,
    .min_bytes = map_erase_min_bytes,
};
