/* mmap_pressure.c: the memory-pressure runs of OSRM's mmap allocator. A read-mostly
 * structure of `size` MiB (64-byte nodes linked in one random cycle) lives in the
 * strategy's memory; each repetition drops param % of its pages from memory, then T
 * threads run random pointer-chasing queries over it, faulting pages back in. The
 * slowdown against param 0 is what memory pressure costs the strategy.
 *
 * The structure is built once per process (its own heap, made with the cell's
 * options) and kept between repetitions: building it is not what is measured.
 * A repetition's time is the eviction (a few system calls a page run, reported
 * as evict_ms) plus the queries (query_ms); measuring residency, checking the
 * evicted contents and starting the threads are outside it.
 *
 * Eviction: rows with regions (mmap_arena, mmap_file) use mmap_arena_evict:
 * file pages are written back and dropped, to be re-read from the file.
 * Everything else gets am_vm_evict on the whole pages inside its blocks. For
 * anonymous memory that is MADV_PAGEOUT, which keeps contents, but with no swap
 * the pages simply stay resident: resident_pct (measured before the queries)
 * shows how much eviction really happened. Where the system could only discard
 * anonymous pages (zero-filled on the next touch) the cell is skipped rather
 * than computing on lost data: a value in every evicted run is checked. */
#include <stdlib.h>
#include <string.h>

#include "thread_group.h"
#include "mmap_pressure.h"

#define MP_NODE 64                       /* one cache line a node */
#define MP_BLOCK ((size_t)256 << 10)     /* the structure's blocks, from the strategy */
#define MP_NODES_PER_BLOCK (MP_BLOCK / MP_NODE)
#define MP_RUN_PAGES 8                   /* pages evicted together: 32 KiB runs */
#define MP_CHASE 64                      /* nodes a query visits */
#define MP_SEED 0x6D6D6170ull

typedef struct mp_node {
    struct mp_node *next;
    uint64_t value;
    uint64_t payload[6]; /* a record's other fields: read by nobody, there for the bytes */
} mp_node;

/* ---------------------------------------------------------------- the shape */

/* The successor of every node, one cycle (Sattolo), in plain memory: the
 * oracle walks it, and the strategy's copy is linked from it. */
static struct { size_t nodes; uint32_t *next; } shape;

static size_t nodes_of(size_t mib) { return mib * ((size_t)1 << 20) / MP_NODE; }

static uint64_t value_of(size_t i) {
    uint64_t s = MP_SEED + i;
    return (am_rand(&s) & 0xFFFFFFFFu) | 1; /* never 0: a zero means the page was lost */
}

static const uint32_t *shape_of(size_t nodes) {
    if (shape.nodes == nodes) return shape.next;
    free(shape.next);
    shape.nodes = 0;
    shape.next = malloc(nodes * sizeof *shape.next);
    if (!shape.next) return NULL;
    for (size_t i = 0; i < nodes; i++) shape.next[i] = (uint32_t)i;
    uint64_t rng = MP_SEED ^ nodes;
    for (size_t i = nodes - 1; i > 0; i--) { /* Sattolo: a single cycle through every node */
        size_t j = (size_t)am_rand_below(&rng, i);
        uint32_t t = shape.next[i];
        shape.next[i] = shape.next[j];
        shape.next[j] = t;
    }
    shape.nodes = nodes;
    return shape.next;
}

/* ---------------------------------------------------------------- the structure */

typedef struct mp_block { char *raw; mp_node *nodes; } mp_block;

static struct {
    size_t mib, limit, nodes, count;
    am_heap *heap;
    mp_block *blocks;     /* plain memory */
    unsigned char *evict; /* per page run: evicted this repetition (plain memory) */
    size_t evictable, resident;
    int registered;
} st;

static mp_node *node_at(size_t i) {
    return &st.blocks[i / MP_NODES_PER_BLOCK].nodes[i % MP_NODES_PER_BLOCK];
}

void am_mmap_pressure_release(void) {
    for (size_t b = 0; b < st.count; b++)
        if (st.blocks[b].raw) am_free(st.heap, st.blocks[b].raw, MP_BLOCK + MP_NODE);
    if (st.heap) am_destroy(st.heap);
    free(st.blocks);
    free(st.evict);
    size_t keep = st.registered;
    memset(&st, 0, sizeof st);
    st.registered = (int)keep;
}

void am_mmap_pressure_residency(size_t *evictable, size_t *resident) {
    *evictable = st.evictable;
    *resident = st.resident;
}

static void release_at_exit(void) {
    am_mmap_pressure_release();
    free(shape.next);
    shape.next = NULL;
    shape.nodes = 0;
}

/* whole pages of block b, nodes aligned to 64 inside it */
static void block_pages(size_t b, char **from, size_t *pages) {
    size_t page = am_page_size();
    uintptr_t lo = AM_ALIGN_UP((uintptr_t)st.blocks[b].nodes, page);
    uintptr_t hi = ((uintptr_t)st.blocks[b].nodes + MP_BLOCK) & ~(uintptr_t)(page - 1);
    *from = (char *)lo;
    *pages = hi > lo ? (hi - lo) / page : 0;
}

static size_t runs_of(size_t pages) { return (pages + MP_RUN_PAGES - 1) / MP_RUN_PAGES; }

static int evict_range(char *p, size_t bytes) {
#if AM_S(_HAS_REGIONS)
    return AM_S(_evict)(st.heap, p, bytes);
#else
    return am_vm_evict(p, bytes);
#endif
}

static int file_backed(void) {
#if AM_S(_HAS_REGIONS)
    return st.count && AM_S(_file_handle)(st.heap, st.blocks[0].nodes) >= 0;
#else
    return 0;
#endif
}

static int build(const am_job *job) {
    const uint32_t *next = shape_of(nodes_of(job->size));
    if (!next) return AM_ERR_OOM;
    st.mib = job->size;
    st.limit = job->options.limit;
    st.nodes = nodes_of(job->size);
    size_t count = (st.nodes + MP_NODES_PER_BLOCK - 1) / MP_NODES_PER_BLOCK;
    st.blocks = calloc(count, sizeof *st.blocks);
    st.evict = calloc(count * runs_of(MP_BLOCK / am_page_size() + 1), 1);
    st.heap = am_create(&job->options);
    if (!st.blocks || !st.evict || !st.heap) return AM_ERR_OOM;
    for (size_t b = 0; b < count; b++) {
        char *raw = am_alloc(st.heap, MP_BLOCK + MP_NODE);
        if (!raw) return AM_ERR_OOM;
        st.blocks[b].raw = raw;
        st.blocks[b].nodes = (mp_node *)AM_ALIGN_UP((uintptr_t)raw, MP_NODE);
        st.count = b + 1;
    }
    for (size_t i = 0; i < st.nodes; i++) {
        mp_node *n = node_at(i);
        n->next = node_at(next[i]);
        n->value = value_of(i);
        for (int k = 0; k < 6; k++) n->payload[k] = n->value + (uint64_t)k;
    }
    /* Written pages of a file are dirty: write them back now, so that every
     * repetition's eviction finds clean pages, and read them in again. */
    if (file_backed()) {
        for (size_t b = 0; b < st.count; b++) {
            char *from;
            size_t pages;
            block_pages(b, &from, &pages);
            if (pages) evict_range(from, pages * am_page_size());
        }
        uint64_t sum = 0;
        for (size_t i = 0; i < st.nodes; i++) sum += node_at(i)->value;
        am_escape(&sum);
    }
    return AM_OK;
}

/* Drops `percent` of the page runs, spread evenly (run j goes when
 * floor((j + 1) f) > floor(j f)). */
static int evict(double percent) {
    size_t page = am_page_size(), j = 0;
    double f = percent / 100.0;
    st.evictable = 0;
    for (size_t b = 0; b < st.count; b++) {
        char *from;
        size_t pages;
        block_pages(b, &from, &pages);
        for (size_t r = 0; r < runs_of(pages); r++, j++) {
            size_t first = r * MP_RUN_PAGES;
            size_t n = pages - first < MP_RUN_PAGES ? pages - first : MP_RUN_PAGES;
            st.evict[j] = (size_t)((double)(j + 1) * f) > (size_t)((double)j * f);
            if (st.evict[j] && evict_range(from + first * page, n * page) != 0) return AM_ERR_FAILED;
        }
        st.evictable += pages * page;
    }
    return AM_OK;
}

/* What stayed resident after the eviction (mincore: no page is touched). */
static void measure_residency(void) {
    size_t page = am_page_size();
    st.resident = 0;
    for (size_t b = 0; b < st.count; b++) {
        char *from;
        size_t pages;
        block_pages(b, &from, &pages);
        if (pages) st.resident += am_vm_resident(from, pages * page);
    }
}

/* Anonymous pages that the system discarded read back as zeros: the first
 * node of every evicted run must still hold its value. */
static int contents_survived(void) {
    size_t page = am_page_size(), j = 0;
    for (size_t b = 0; b < st.count; b++) {
        char *from;
        size_t pages;
        block_pages(b, &from, &pages);
        for (size_t r = 0; r < runs_of(pages); r++, j++) {
            if (!st.evict[j]) continue;
            size_t off = (size_t)(from + r * MP_RUN_PAGES * page - (char *)st.blocks[b].nodes);
            size_t i = b * MP_NODES_PER_BLOCK + off / MP_NODE;
            if (i < st.nodes && node_at(i)->value != value_of(i)) return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------- the queries */

static size_t queries_of(size_t mib) {
    size_t q = nodes_of(mib) / (4 * MP_CHASE); /* a quarter of the nodes visited per thread */
    return q ? q : 1;
}

static uint64_t start_rng(uint64_t seed, unsigned thread) {
    return seed * 0x100000001B3ull + ((uint64_t)thread << 32) + thread;
}

static uint64_t term(unsigned thread, size_t queries, size_t k, uint64_t sum) {
    return sum * (2 * ((uint64_t)thread * queries + k) + 1);
}

typedef struct mp_thread {
    am_start_line *line; /* NULL: the caller, which times itself */
    uint64_t timed_ns;
    uint64_t seed;
    unsigned id;
    size_t queries;
    uint64_t sum;
} mp_thread;

static void chase(void *arg) {
    mp_thread *t = arg;
    uint64_t rng = start_rng(t->seed, t->id), total = 0;
    if (t->line) am_start_wait(t->line);
    uint64_t start = am_now_ns();
    for (size_t k = 0; k < t->queries; k++) {
        const mp_node *n = node_at((size_t)am_rand_below(&rng, st.nodes));
        uint64_t sum = 0;
        for (int s = 0; s < MP_CHASE; s++) {
            sum += n->value;
            n = n->next;
        }
        total += term(t->id, t->queries, k, sum);
    }
    if (t->line) am_start_stop(t->line);
    else t->timed_ns = am_now_ns() - start;
    t->sum = total;
}

static uint64_t mmap_pressure_run(am_heap *h, am_job *job, int *status) {
    (void)h; /* the structure has its own heap, kept between repetitions */
    unsigned n = am_job_threads(job);
    if (n > AM_MAX_THREADS || job->param > 100) { *status = AM_ERR_FAILED; return 0; }
    int keep = 1;
#if AM_STATS
    keep = !am_counting_active; /* counted blocks must be gone before counting stops */
#endif
    if (!st.registered) st.registered = atexit(release_at_exit) == 0;
    if (!st.heap || st.mib != job->size || st.limit != job->options.limit) {
        am_mmap_pressure_release();
        *status = build(job);
        if (*status != AM_OK) { am_mmap_pressure_release(); return 0; }
    }
    uint64_t t0 = am_now_ns();
    *status = evict(job->param);
    uint64_t evict_ns = am_now_ns() - t0;
    /* untimed: residency, and whether anonymous pages kept their contents
     * (one read per evicted run, which brings that page back) */
    measure_residency();
    if (*status == AM_OK && job->param > 0 && !file_backed() && !contents_survived()) {
        job->reason = "anonymous memory cannot be evicted without swap: its pages were discarded";
        *status = AM_ERR_NA;
        am_mmap_pressure_release(); /* the structure is lost */
        return 0;
    }
    if (*status != AM_OK) return 0;
    mp_thread t[AM_MAX_THREADS];
    am_start_line line;
    uint64_t query_ns = 0;
    size_t queries = queries_of(job->size);
    for (unsigned i = 0; i < n; i++) {
        t[i].line = n == 1 ? NULL : &line;
        t[i].seed = job->seed;
        t[i].id = i;
        t[i].queries = queries;
        t[i].sum = 0;
    }
    if (n == 1) {
        chase(&t[0]);
        query_ns = t[0].timed_ns;
    } else {
        *status = am_thread_group_run(chase, t, sizeof *t, n, &line, &query_ns);
    }
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) sum += t[i].sum;
    job->timed_ns = evict_ns + query_ns;
    am_job_metric(job, "resident_pct", st.evictable ? 100.0 * (double)st.resident / (double)st.evictable : 100);
    am_job_metric(job, "evict_ms", (double)evict_ns / 1e6);
    am_job_metric(job, "query_ms", (double)query_ns / 1e6);
    am_job_metric(job, "file_backed", file_backed());
    if (!keep) am_mmap_pressure_release();
    return sum;
}

static uint64_t mmap_pressure_oracle(am_job *job) {
    unsigned n = am_job_threads(job);
    size_t nodes = nodes_of(job->size), queries = queries_of(job->size);
    const uint32_t *next = shape_of(nodes);
    if (!next) return UINT64_MAX;
    uint64_t total = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t rng = start_rng(job->seed, i);
        for (size_t k = 0; k < queries; k++) {
            size_t v = (size_t)am_rand_below(&rng, nodes);
            uint64_t sum = 0;
            for (int s = 0; s < MP_CHASE; s++) {
                sum += value_of(v);
                v = next[v];
            }
            total += term(i, queries, k, sum);
        }
    }
    return total;
}

/* 8 MiB by default for make bench's budget (mmap_file at 50 % re-reads 4 MiB a
 * repetition); smaller ones are gone in a millisecond and measure the system
 * calls' noise. SIZES=log for 16 and 64 MiB. */
static const size_t mmap_pressure_sizes[] = {8, 0};
static const size_t mmap_pressure_log_sizes[] = {4, 16, 64, 0};
static const double mmap_pressure_params[] = {0, 10, 20, 30, 50, -1};
static const double mmap_pressure_quick_params[] = {0, 30, -1};

static unsigned mmap_pressure_reps(size_t size) { (void)size; return 1; }
static double mmap_pressure_ops(size_t size) { return (double)queries_of(size); }
static double mmap_pressure_job_ops(const am_job *job) {
    return (double)am_job_threads(job) * (double)queries_of(job->size);
}

const am_workload am_workload_mmap_pressure = {
    .name = "mmap_pressure",
    .summary = "a `size` MiB read-mostly structure of linked 64-byte nodes in the strategy's memory; each repetition "
        "evicts param % of its pages, then T threads chase 64-node paths from random nodes (OSRM's mmap allocator)",
    .sizes = mmap_pressure_sizes,
    .log_sizes = mmap_pressure_log_sizes,
    .reps = mmap_pressure_reps,
    .ops = mmap_pressure_ops,
    .run = mmap_pressure_run,
    .oracle = mmap_pressure_oracle,
    .threaded = 1,
    .seeds = 1,
    .age = 0,
    .min_bytes = NULL,
    .slowdown = 1,
};

const am_sweep am_sweep_mmap_pressure = {
    .workload = "mmap_pressure",
    .params = mmap_pressure_params,
    .threads = 0,
    .ops = mmap_pressure_job_ops,
    .quick_params = mmap_pressure_quick_params,
};
