/* query_heap.c: OSRM's query heap. Random source-target queries on a generated
 * road-like graph (a grid with random weights plus some cheap long edges), each a Dijkstra
 * with the 4-ary QueryHeap whose node -> index storage is a hash map with one
 * allocation per entry (the std::unordered_map OSRM's profile blamed), every byte from
 * the strategy. The graph itself is plain malloc, built once per process: it is not
 * what is measured.
 *
 * T threads (swept): each builds its own QueryHeap, on its own heap made in
 * that thread, or on the cell's heap where the strategy is thread-safe. A heap
 * is never copied into another thread (OSRM's bug). With one thread the
 * queries run in the calling thread on the cell's heap.
 *
 * Metrics: per-query latency (mean, p50, p95, p99, max) over the last
 * repetition's queries, timed one by one and kept in a plain array. */
#include <stdlib.h>
#include <string.h>

#include "thread_group.h"
#include "query_heap.h"

#define AM_QHEAP_NAME qh
#define AM_QHEAP_KEY uint32_t
#define AM_QHEAP_DATA uint32_t
#define AM_QHEAP_HASH 1
#include "heap.h"

#define QH_GRAPH_SEED 0x6F73726Dull /* one graph per size, whatever the cell's seed */

/* ---------------------------------------------------------------- the graph */

typedef struct graph_cache {
    am_graph g;
    uint32_t *first, *target, *weight;
} graph_cache;

static graph_cache cache;

static void add_edge(uint32_t *deg_or_fill, uint32_t *target, uint32_t *weight, uint32_t u, uint32_t v,
                     uint32_t w) {
    if (!target) {
        deg_or_fill[u]++;
        deg_or_fill[v]++;
        return;
    }
    uint32_t i = deg_or_fill[u]++;
    target[i] = v;
    weight[i] = w;
    i = deg_or_fill[v]++;
    target[i] = u;
    weight[i] = w;
}

/* Two passes over the same edge stream: degrees, then placement. Grid edges
 * cost 50..149 a hop; every 32nd node gets a long edge at about a third of the
 * grid's price per hop, a road network's highways. */
static void edges(uint32_t n, uint32_t *deg_or_fill, uint32_t *target, uint32_t *weight) {
    uint32_t width = 1;
    while ((uint64_t)width * width < n) width++;
    uint64_t rng = QH_GRAPH_SEED ^ n;
    for (uint32_t i = 0; i < n; i++) {
        if (i % width) add_edge(deg_or_fill, target, weight, i, i - 1, 50 + (uint32_t)am_rand_below(&rng, 100));
        if (i >= width) add_edge(deg_or_fill, target, weight, i, i - width, 50 + (uint32_t)am_rand_below(&rng, 100));
    }
    for (uint32_t k = 0; n > 1 && k < n / 32; k++) {
        uint32_t a = (uint32_t)am_rand_below(&rng, n), b = (uint32_t)am_rand_below(&rng, n);
        if (a == b) continue;
        uint32_t dx = a % width > b % width ? a % width - b % width : b % width - a % width;
        uint32_t dy = a / width > b / width ? a / width - b / width : b / width - a / width;
        add_edge(deg_or_fill, target, weight, a, b, (dx + dy) * 30 + 1 + (uint32_t)am_rand_below(&rng, 20));
    }
}

const am_graph *am_query_heap_graph(size_t size) {
    if (size == 0 || size > UINT32_MAX / 8) return NULL;
    uint32_t n = (uint32_t)size;
    if (cache.g.n == n) return &cache.g;
    free(cache.first);
    free(cache.target);
    free(cache.weight);
    memset(&cache, 0, sizeof cache);
    uint32_t *first = calloc((size_t)n + 1, sizeof *first);
    uint32_t *fill = calloc((size_t)n + 1, sizeof *fill);
    if (!first || !fill) { free(first); free(fill); return NULL; }
    edges(n, fill, NULL, NULL);
    for (uint32_t i = 0; i < n; i++) first[i + 1] = first[i] + fill[i];
    uint32_t m = first[n];
    uint32_t *target = malloc((m ? m : 1) * sizeof *target);
    uint32_t *weight = malloc((m ? m : 1) * sizeof *weight);
    if (!target || !weight) { free(first); free(fill); free(target); free(weight); return NULL; }
    memcpy(fill, first, (size_t)n * sizeof *fill);
    edges(n, fill, target, weight);
    free(fill);
    cache.first = first;
    cache.target = target;
    cache.weight = weight;
    cache.g.n = n;
    cache.g.first = first;
    cache.g.target = target;
    cache.g.weight = weight;
    return &cache.g;
}

/* 50 queries a thread, fewer on large graphs so that a repetition stays short */
size_t am_query_heap_queries(size_t n) {
    size_t q = n > 10000 ? 500000 / n : 50;
    return q < 4 ? 4 : q;
}

/* Every repetition runs the same queries (a fixed set per size and thread),
 * starting at a place the seed picks: cells whose calibration chose different
 * repetition counts then still do equal work, though a few long queries
 * weigh much more than the many short ones. */
void am_query_heap_pairs(uint64_t seed, unsigned thread, uint32_t n, size_t count, uint32_t *pairs) {
    uint64_t rng = QH_GRAPH_SEED * 0x100000001B3ull + ((uint64_t)thread << 32) + thread + n;
    size_t shift = count ? (size_t)(seed % count) : 0;
    for (size_t k = 0; k < count; k++) {
        size_t at = (k + count - shift) % count;
        pairs[2 * at] = (uint32_t)am_rand_below(&rng, n);
        pairs[2 * at + 1] = (uint32_t)am_rand_below(&rng, n);
    }
}

uint64_t am_query_heap_term(unsigned thread, size_t queries, size_t k, uint64_t dist) {
    return dist * (2 * ((uint64_t)thread * queries + k) + 1);
}

/* ---------------------------------------------------------------- the queries */

/* One Dijkstra from s, stopped when t is settled, as OSRM's routing plugins
 * do: one lookup per relaxed edge (get), decrease_key where shorter. */
static int shortest(qh *q, const am_graph *g, uint32_t s, uint32_t t, uint64_t *dist) {
    qh_clear(q);
    if (qh_insert(q, s, 0, s)) return AM_ERR_OOM;
    while (!qh_empty(q)) {
        uint32_t du = qh_min_key(q);
        uint32_t u = qh_delete_min(q);
        if (u == t) { *dist = du; return AM_OK; }
        for (uint32_t e = g->first[u]; e < g->first[u + 1]; e++) {
            uint32_t v = g->target[e], d = du + g->weight[e];
            qh_node *node = qh_get(q, v);
            if (!node) {
                if (qh_insert(q, v, d, u)) return AM_ERR_OOM;
            } else if (node->handle != AM_QHEAP_REMOVED && d < node->key) {
                node->data = u;
                qh_decrease_key(q, v, d);
            }
        }
    }
    return AM_ERR_FAILED; /* the graph is connected: t is always reached */
}

typedef struct qh_thread {
    am_start_line *line;     /* NULL: the one thread is the caller, timed by itself */
    uint64_t timed_ns;       /* that caller's time */
    am_heap *heap;           /* NULL: make one in the thread */
    const am_options *options;
    am_owner *owner;
    const am_graph *g;
    uint64_t seed;
    unsigned id;
    size_t queries;
    uint32_t *pairs;         /* 2 x queries, plain memory */
    uint64_t *latency;       /* queries of them, plain memory */
    uint64_t sum;
    int status;
} qh_thread;

/* Set up (heap, QueryHeap, the queries), wait for the start, run the
 * queries, stop, tear down: only the queries are timed. */
static void run_queries(qh_thread *t) {
    am_heap *h = t->heap ? t->heap : am_create(t->options);
    qh q;
    t->status = h && qh_init(&q, h, t->g->n) == 0 ? AM_OK : AM_ERR_OOM;
    am_query_heap_pairs(t->seed, t->id, t->g->n, t->queries, t->pairs);
    if (t->line) am_start_wait(t->line);
    uint64_t sum = 0, start = am_now_ns();
    for (size_t k = 0; k < t->queries && t->status == AM_OK; k++) {
        uint64_t dist = 0, t0 = am_now_ns();
        t->status = shortest(&q, t->g, t->pairs[2 * k], t->pairs[2 * k + 1], &dist);
        t->latency[k] = am_now_ns() - t0;
        sum += am_query_heap_term(t->id, t->queries, k, dist);
    }
    if (t->line) am_start_stop(t->line);
    else t->timed_ns = am_now_ns() - start;
    if (h) qh_destroy(&q); /* also after a failed init */
    if (h && !t->heap) am_destroy(h);
    t->sum = sum;
}

static void thread_main(void *arg) {
    qh_thread *t = arg;
    am_owner_enter_thread(t->owner, t->id);
    run_queries(t);
}

/* Bookkeeping kept between repetitions, in plain memory (never the strategy's). */
static struct {
    size_t cap;
    uint32_t *pairs;
    uint64_t *latency;
    qh_thread *threads;
} book;

static int book_reserve(unsigned n, size_t queries) {
    size_t need = (size_t)n * queries;
    if (need <= book.cap && book.threads) return 0;
    free(book.pairs);
    free(book.latency);
    free(book.threads);
    book.pairs = malloc(2 * need * sizeof *book.pairs);
    book.latency = malloc(need * sizeof *book.latency);
    book.threads = malloc(AM_MAX_THREADS * sizeof *book.threads);
    book.cap = need;
    if (book.pairs && book.latency && book.threads) return 0;
    book.cap = 0;
    return -1;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* nearest rank */
static double percentile(const uint64_t *sorted, size_t n, double p) {
    size_t i = (size_t)(p / 100.0 * (double)n + 0.999999);
    return (double)sorted[(i ? i : 1) - 1];
}

static void report_latency(am_job *job, uint64_t *lat, size_t n) {
    double mean = 0;
    for (size_t i = 0; i < n; i++) mean += (double)lat[i];
    qsort(lat, n, sizeof *lat, compare_u64);
    am_job_metric(job, "latency_mean_ns", mean / (double)n);
    am_job_metric(job, "latency_p50_ns", percentile(lat, n, 50));
    am_job_metric(job, "latency_p95_ns", percentile(lat, n, 95));
    am_job_metric(job, "latency_p99_ns", percentile(lat, n, 99));
    am_job_metric(job, "latency_max_ns", (double)lat[n - 1]);
}

static uint64_t query_heap_run(am_heap *h, am_job *job, int *status) {
    unsigned n = am_job_threads(job);
    *status = am_threads_check(job, n);
    if (*status != AM_OK) return 0;
    const am_graph *g = am_query_heap_graph(job->size);
    size_t queries = am_query_heap_queries(job->size);
    if (!g || book_reserve(n, queries)) { *status = AM_ERR_OOM; return 0; }
    am_job_metric(job, "queries_per_thread", (double)queries);
    am_job_metric(job, "shared_heap", AM_THREAD_SAFE ? 1 : 0); /* as contention: one heap for every thread */
    qh_thread *t = book.threads;
    am_start_line line;
    for (unsigned i = 0; i < n; i++) {
        memset(&t[i], 0, sizeof t[i]);
        t[i].line = n == 1 ? NULL : &line;
        t[i].heap = n == 1 || AM_THREAD_SAFE ? h : NULL;
        t[i].options = &job->options;
        t[i].owner = am_owner_current();
        t[i].g = g;
        t[i].seed = job->seed;
        t[i].id = i;
        t[i].queries = queries;
        t[i].pairs = book.pairs + 2 * (size_t)i * queries;
        t[i].latency = book.latency + (size_t)i * queries;
    }
    if (n == 1) {
        run_queries(&t[0]);
        job->timed_ns = t[0].timed_ns;
    } else {
        *status = am_thread_group_run(thread_main, t, sizeof *t, n, &line, &job->timed_ns);
    }
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        if (t[i].status != AM_OK) *status = t[i].status;
        sum += t[i].sum;
    }
    if (*status == AM_OK) report_latency(job, book.latency, (size_t)n * queries);
    return sum;
}

/* ---------------------------------------------------------------- oracle */

/* Dijkstra on plain arrays with a binary heap and lazy deletion: a different
 * queue from the QueryHeap, so a broken heap or strategy cannot agree with it. */
typedef struct ref_item { uint64_t d; uint32_t v; } ref_item;

static void ref_push(ref_item *h, size_t *n, ref_item x) {
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].d > x.d) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = x;
}

static ref_item ref_pop(ref_item *h, size_t *n) {
    ref_item top = h[0], x = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1].d < h[c].d) c++;
        if (h[c].d >= x.d) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = x;
    return top;
}

static uint64_t ref_shortest(const am_graph *g, uint64_t *dist, ref_item *heap, uint32_t s, uint32_t t) {
    for (uint32_t i = 0; i < g->n; i++) dist[i] = UINT64_MAX;
    size_t n = 0;
    dist[s] = 0;
    ref_item first = {0, s};
    ref_push(heap, &n, first);
    while (n) {
        ref_item it = ref_pop(heap, &n);
        if (it.d != dist[it.v]) continue;
        if (it.v == t) return it.d;
        for (uint32_t e = g->first[it.v]; e < g->first[it.v + 1]; e++) {
            uint64_t d = it.d + g->weight[e];
            uint32_t v = g->target[e];
            if (d < dist[v]) {
                dist[v] = d;
                ref_item x = {d, v};
                ref_push(heap, &n, x);
            }
        }
    }
    return UINT64_MAX;
}

static uint64_t query_heap_oracle(am_job *job) {
    unsigned n = am_job_threads(job);
    const am_graph *g = am_query_heap_graph(job->size);
    size_t queries = am_query_heap_queries(job->size);
    uint64_t *dist = g ? malloc((size_t)g->n * sizeof *dist) : NULL;
    /* lazy deletion: at most one entry per relaxation, plus the source */
    ref_item *heap = g ? malloc(((size_t)g->first[g->n] + 1) * sizeof *heap) : NULL;
    uint32_t *pairs = malloc(2 * queries * sizeof *pairs);
    uint64_t sum = 0;
    if (dist && heap && pairs)
        for (unsigned i = 0; i < n; i++) {
            am_query_heap_pairs(job->seed, i, g->n, queries, pairs);
            for (size_t k = 0; k < queries; k++)
                sum += am_query_heap_term(i, queries, k, ref_shortest(g, dist, heap, pairs[2 * k], pairs[2 * k + 1]));
        }
    else
        sum = UINT64_MAX; /* cannot agree with the run */
    free(dist);
    free(heap);
    free(pairs);
    return sum;
}

/* One default size, kept small for make bench's budget: Boost pool's ordered
 * free makes clearing a big heap quadratic (SIZES=log for the larger graphs). */
static const size_t query_heap_sizes[] = {2000, 0};
static const size_t query_heap_log_sizes[] = {1000, 3000, 10000, 30000, 100000, 0};

static unsigned query_heap_reps(size_t size) { (void)size; return 1; }
static double query_heap_ops(size_t size) { return (double)am_query_heap_queries(size); }
static double query_heap_job_ops(const am_job *job) {
    return (double)am_job_threads(job) * (double)am_query_heap_queries(job->size);
}

const am_workload am_workload_query_heap = {
    .name = "query_heap",
    .summary = "T threads x Q random shortest-path queries on a road-like grid graph of `size` nodes, each a "
        "Dijkstra with OSRM's 4-ary QueryHeap on hash-map node storage; latency percentiles (OSRM's query heap)",
    .sizes = query_heap_sizes,
    .log_sizes = query_heap_log_sizes,
    .reps = query_heap_reps,
    .ops = query_heap_ops,
    .run = query_heap_run,
    .oracle = query_heap_oracle,
    .threaded = 1,
    .seeds = 1,
    .age = 0,
    .min_bytes = NULL,
    .versus = "system",
    .bench_lines = "system",
};

const am_sweep am_sweep_query_heap = {
    .workload = "query_heap",
    .params = NULL,
    .threads = 1,
    .ops = query_heap_job_ops,
};
