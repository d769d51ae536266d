/* trace.c: the workload `trace`: a repetition replays a recorded program's
 * calls (workloads/replay.h, decoded by the cell from --trace FILE) through
 * the row's strategy, in the program's order, and frees what the program left
 * live. It writes each new block once, as the program would: a stamp in its
 * first bytes (8, or 1 in blocks below 8 bytes), read back when the block is
 * freed or resized, so that a block handed out twice while live changes the
 * checksum. Nothing else is written. docs/trace.md, "Replay". */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "thread_group.h"

const am_replay *am_replay_current;

static const size_t trace_sizes[] = {1, 0};

/* Strategies that serve one block size (S_ONE_SIZE: concurrent_pool and
 * locked_pool) serve a trace as their users do: a heap of the strategy per
 * size class, and the C library, through the row's own heap, beyond the
 * largest class (the pool's fallback to malloc). Pools that keep a pool per
 * size themselves (pool, fast_pool) serve every size from the row's heap and
 * send sizes beyond their largest chunk to malloc on their own. Either way the
 * allocations beyond the largest class are counted (a metric). */
#if AM_S(_ONE_SIZE)
#define TRACE_CLASSES 13
#define TRACE_CLASS_MAX 4096
static const size_t trace_class_size[TRACE_CLASSES] = {16, 32, 48, 64, 80, 96, 112, 128, 256, 512, 1024, 2048, 4096};
static am_heap *trace_class_heap[TRACE_CLASSES];
static const am_heap *trace_classes_for; /* the row's heap the class heaps serve beside */
/* a size's class by its 16-byte granule, filled once: a load, not a search */
static uint8_t trace_class_of[TRACE_CLASS_MAX / 16 + 1];

AM_FORCE_INLINE am_heap *trace_heap_of(am_heap *h, size_t n) {
    if (AM_UNLIKELY(n > TRACE_CLASS_MAX)) return h;
    return trace_class_heap[trace_class_of[(n + 15) / 16]];
}
#else
#if defined(BP_MAX_PARTITION)
#define TRACE_CLASS_MAX BP_MAX_PARTITION
#endif
AM_FORCE_INLINE am_heap *trace_heap_of(am_heap *h, size_t n) {
    (void)n;
    return h;
}
#endif

static void *trace_ptr_none;
static void **trace_ptr = &trace_ptr_none; /* by slot: the blocks live */
static uint32_t trace_ptr_slots;

AM_FORCE_INLINE void trace_stamp(void *p, size_t n, uint64_t v) {
    if (n >= sizeof v) memcpy(p, &v, sizeof v);
    else *(unsigned char *)p = (unsigned char)v;
}

AM_FORCE_INLINE uint64_t trace_read(const void *p, size_t n) {
    uint64_t v = 0;
    if (n >= sizeof v) memcpy(&v, p, sizeof v);
    else v = *(const unsigned char *)p;
    return v;
}

/* The one call of the strategy's allocate (and below, of its free) in the
 * replay: am_alloc_aligned serves the strategy's own alignment through its
 * plain allocate, so that an aligned and a plain call are one place for the
 * fast path to inline into. Each further call site is one more copy of it,
 * and beyond a few gcc kept an out-of-line copy of concurrent_pool's locked
 * fast path, which every workload of the row then called. */
AM_FORCE_INLINE size_t trace_align(unsigned align_log2) {
    return align_log2 ? (size_t)1 << align_log2 : AM_MIN_ALIGN;
}

AM_FORCE_INLINE void *trace_alloc(am_heap *h, size_t n, unsigned align_log2) {
    return am_alloc_aligned(trace_heap_of(h, n), n, trace_align(align_log2));
}

AM_FORCE_INLINE void trace_free(am_heap *h, void *p, size_t n, unsigned align_log2) {
    am_free_aligned(trace_heap_of(h, n), p, n, trace_align(align_log2));
}

/* realloc through the strategy's own where the old block has malloc's
 * alignment and one heap holds both; else the replay allocates, copies and
 * frees */
AM_FORCE_INLINE int trace_resizes_in_place(am_heap *h, const am_replay_op *o) {
    return !o->old_align_log2 && trace_heap_of(h, o->old_size) == trace_heap_of(h, o->size);
}

/* the value a call's stamp holds: the call's place and the seed */
AM_INLINE uint64_t trace_value(uint64_t seed, size_t i) { return seed * 0x9E3779B97F4A7C15ull + i; }

/* Out of line, before the calls: the slot table, the class heaps, and the
 * memory a strategy that frees nothing needs. AM_OK, or the status to end with. */
static AM_NOINLINE int trace_prepare(am_heap *h, am_job *job, const am_replay *r) {
    (void)h;
    if (!r) {
        job->reason = "not run: the trace workload replays a recorded trace: give --trace FILE";
        return AM_ERR_NA;
    }
    if (trace_ptr_slots < r->slots) {
        void **t = calloc(r->slots, sizeof *t);
        if (!t) return AM_ERR_OOM;
        if (trace_ptr != &trace_ptr_none) free(trace_ptr);
        trace_ptr = t;
        trace_ptr_slots = r->slots;
    }
#if !AM_FREE_REUSES
    /* a strategy that frees nothing takes every byte the trace allocates */
    static int fits = -1;
    if (fits < 0) {
        uint64_t need = r->total_bytes;
        fits = !(job->options.limit && need > job->options.limit) && need <= SIZE_MAX;
        void *probe = fits && need ? am_vm_reserve((size_t)need) : NULL;
        if (probe) am_vm_release(probe, (size_t)need);
        else if (need) fits = 0;
    }
    if (!fits) {
        job->reason = "not run: the trace allocates more in all than the memory limit allows, and this strategy frees nothing";
        return AM_ERR_NA;
    }
#endif
#if AM_S(_ONE_SIZE)
    if (trace_classes_for != h) {
        for (size_t g = 0, c = 0; g <= TRACE_CLASS_MAX / 16; g++) {
            while (trace_class_size[c] < g * 16) c++;
            trace_class_of[g] = (uint8_t)c;
        }
        for (int c = 0; c < TRACE_CLASSES; c++) {
            if (trace_class_heap[c]) am_destroy(trace_class_heap[c]);
            am_options o = job->options;
            o.block_size = trace_class_size[c];
            trace_class_heap[c] = am_create(&o);
            if (!trace_class_heap[c]) return AM_ERR_OOM;
        }
        trace_classes_for = h;
    }
#endif
    return AM_OK;
}

/* After an allocation failed: the blocks live after the first `done` calls,
 * freed (which they are, the table does not say: the calls do) */
static AM_NOINLINE void trace_unwind(am_heap *h, const am_replay *r, size_t done) {
    const am_replay_op **made = calloc(r->slots ? r->slots : 1, sizeof *made);
    if (!made) return; /* left to the heap's reset or destroy */
    for (size_t i = 0; i < done; i++) {
        const am_replay_op *o = &r->ops[i];
        if (o->kind == AM_RP_REALLOC) made[o->old_slot] = NULL;
        made[o->slot] = o->kind == AM_RP_FREE ? NULL : o;
    }
    for (uint32_t k = 0; k < r->slots; k++)
        if (made[k]) trace_free(h, trace_ptr[k], made[k]->size, made[k]->align_log2);
    free(made);
}

/* The -stats build counts, as the replay makes them, the calls of each
 * recorded kind and the live bytes as the program asked them, for the
 * faithfulness test to hold against the trace's closing record; the
 * measured build counts nothing. */
#if AM_STATS
static const char *const trace_call_metric[AM_REPLAY_KINDS] = {
    "calls_malloc", "calls_calloc", "calls_realloc", "calls_reallocarray", "calls_free",
    "calls_posix_memalign", "calls_aligned_alloc", "calls_memalign", "calls_valloc", "calls_pvalloc"};
/* a thread's own: the threads of a threaded replay count apart (trace_threads_run adds them up) */
static AM_THREAD_LOCAL uint64_t trace_calls[AM_REPLAY_KINDS], trace_live, trace_peak;

AM_INLINE void trace_count(const am_replay *r, const am_replay_op *o) {
    if (o >= r->ops + r->nops) return; /* a closing free: no call of the program's */
    size_t size = o->call & AM_RP_ZERO_SIZE ? 0 : o->size, old = o->call & AM_RP_ZERO_OLD ? 0 : o->old_size;
    trace_calls[o->call & AM_RP_CALL_MASK]++;
    if (o->kind == AM_RP_REALLOC) trace_live -= old;
    if (o->kind == AM_RP_FREE) trace_live -= size;
    else trace_live += size;
    if (trace_live > trace_peak) trace_peak = trace_live;
}

static void trace_count_report(am_job *job, const am_replay *r) {
    for (int k = 0; k < AM_REPLAY_KINDS; k++)
        am_job_metric(job, trace_call_metric[k], (double)(trace_calls[k] + r->skipped[k]));
    am_job_metric(job, "peak_live_bytes", (double)trace_peak);
    am_job_metric(job, "final_live_bytes", (double)trace_live);
    memset(trace_calls, 0, sizeof trace_calls);
    trace_live = trace_peak = 0;
}
#else
#define trace_count(r, o) ((void)0)
#define trace_count_report(job, r) ((void)0)
#endif

/* Figures beside the time, once a process: the allocations beyond the
 * largest class (served by the C library), where the row has classes. */
static void trace_metrics(am_job *job, const am_replay *r) {
#ifdef TRACE_CLASS_MAX
    static const am_replay *counted;
    static uint64_t beyond;
    if (counted != r) {
        beyond = 0;
        for (size_t i = 0; i < r->nops; i++)
            if (r->ops[i].kind != AM_RP_FREE && r->ops[i].size > TRACE_CLASS_MAX) beyond++;
        counted = r;
    }
    am_job_metric(job, "largest_class_bytes", TRACE_CLASS_MAX);
    am_job_metric(job, "allocs_beyond_classes", (double)beyond);
#else
    (void)job;
    (void)r;
#endif
}

/* After a new block p of a call that is neither malloc nor an aligned
 * allocation: calloc's zeroing, or a resize by copy's copy of the old block
 * (read back into *sum). The block the call ends, or NULL. Out of the loop:
 * the common calls pay no test of it but the one of their kind. */
static AM_NOINLINE void *trace_fill(void *p, const am_replay_op *op, void **ptr, uint64_t *sum) {
    if (op->kind == AM_RP_CALLOC) {
        memset(p, 0, op->size);
        return NULL;
    }
    void *gone = ptr[op->old_slot]; /* read before the new block takes its slot: it may be the old one's */
    size_t kept = op->old_size < op->size ? op->old_size : op->size;
    memcpy(p, gone, kept);
    *sum += trace_read(p, kept);
    return gone;
}

/* The calls from op to end, the stamps from v on, the stamps read back added
 * to *sum: the replay's one loop, and in it the one call site of the
 * strategy's allocate and the one of its free. Where it stopped: end, or the
 * call whose allocation failed. A threaded replay runs it on the stretches of
 * a thread's calls between its waits and signals. */
static AM_NOINLINE const am_replay_op *trace_calls_run(am_heap *h, const am_replay *r, const am_replay_op *op,
                                                       const am_replay_op *end, uint64_t v, uint64_t *sum_out) {
    void **ptr = trace_ptr;
    uint64_t sum = 0;
    (void)r;
    for (; op < end; op++, v++) {
        size_t n = op->size;
        void *p, *gone; /* the block the call frees, */
        size_t gone_n;  /* its size */
        unsigned gone_align;
        trace_count(r, op);
        if (op->kind == AM_RP_FREE) {
            gone = ptr[op->slot];
            gone_n = n;
            gone_align = op->align_log2;
            sum += trace_read(gone, n);
        } else {
            if (AM_UNLIKELY(op->kind == AM_RP_REALLOC) && trace_resizes_in_place(h, op)) {
                size_t old_n = op->old_size;
                p = am_realloc(trace_heap_of(h, n), ptr[op->old_slot], old_n, n);
                if (AM_UNLIKELY(!p)) break;
                sum += trace_read(p, old_n < n ? old_n : n);
                trace_stamp(p, n, v);
                ptr[op->slot] = p;
                continue;
            }
            p = trace_alloc(h, n, op->align_log2);
            if (AM_UNLIKELY(!p)) break;
            gone = AM_LIKELY(op->kind <= AM_RP_ALIGNED) ? NULL : trace_fill(p, op, ptr, &sum);
            trace_stamp(p, n, v);
            ptr[op->slot] = p;
            if (AM_LIKELY(!gone)) continue;
            gone_n = op->old_size; /* a resize by copy: the old block goes below */
            gone_align = op->old_align_log2;
        }
        trace_free(h, gone, gone_n, gone_align);
    }
    *sum_out += sum;
    return op;
}

static int trace_out_of_memory(am_job *job) {
    if (!AM_FREE_REUSES) job->reason = "not run: the trace outgrew the memory limit, and this strategy frees nothing";
    return AM_FREE_REUSES ? AM_ERR_OOM : AM_ERR_NA;
}

static int trace_threads_run(am_heap *h, am_job *job, const am_replay *r, uint64_t base, uint64_t *sum);

static uint64_t trace_run(am_heap *h, am_job *job, int *status) {
    const am_replay *r = am_replay_current;
    *status = trace_prepare(h, job, r);
    if (*status != AM_OK) return 0;
    uint64_t base = trace_value(job->seed, 0), sum = 0;
    /* the calls, then the frees of what the program left live, so that
     * repetitions are alike; a trace of several threads makes its calls on
     * threads of its own, and its frees here, after they are joined */
    const am_replay_op *op = r->ops, *end = r->ops + r->nops + r->nclose;
    if (r->threads > 1) {
        *status = trace_threads_run(h, job, r, base, &sum);
        if (*status != AM_OK) return 0; /* the blocks still live are left to the heap's reset or destroy */
        op += r->nops;
    }
    op = trace_calls_run(h, r, op, end, base + (size_t)(op - r->ops), &sum);
    if (AM_UNLIKELY(op != end)) {
        if (r->threads == 1) trace_unwind(h, r, (size_t)(op - r->ops));
        *status = trace_out_of_memory(job);
        return 0;
    }
    trace_count_report(job, r);
    trace_metrics(job, r);
    return sum;
}

/* ---- a trace of several threads: each on a thread of its own, on the row's
 * one heap, each thread's calls in its order. A call that ends a block made
 * in another thread first waits for the flag of that block's making call;
 * the flag holds the number of the repetition that made the block, so that
 * flags are never cleared. Not waiting costs one load. */
static atomic_uint *trace_flag;
static uint32_t trace_flags;
static unsigned trace_repetition;

typedef struct trace_thread {
    am_start_line *line;
    am_heap *heap;
    am_owner *owner;
    const am_replay *r;
    atomic_int *abort; /* a thread ran out of memory: the others stop waiting */
    unsigned id, repetition;
    uint64_t base; /* the stamp of ops[0] */
    uint64_t sum;
    int status;
#if AM_STATS
    uint64_t calls[AM_REPLAY_KINDS], live;
#endif
} trace_thread;

/* 0 when the wait ended because another thread gave up */
AM_INLINE int trace_wait(const trace_thread *t, uint32_t flag) {
    while (atomic_load_explicit(&trace_flag[flag], memory_order_acquire) != t->repetition) {
        if (atomic_load_explicit(t->abort, memory_order_relaxed)) return 0;
        am_thread_yield();
    }
    return 1;
}

static void trace_thread_run(void *arg) {
    trace_thread *t = arg;
    const am_replay *r = t->r;
    am_owner_enter_thread(t->owner, t->id);
    size_t i = r->thread_first[t->id], end = r->thread_first[t->id + 1];
    const am_replay_sync *s = r->sync, *s_end = r->sync + r->nsync;
    while (s < s_end && s->at < i) s++; /* this thread's first */
    am_start_wait(t->line);
    while (i < end) {
        if (s < s_end && s->at == i && s->wait) {
            if (!trace_wait(t, s->signal)) break;
            s++;
        }
        size_t stop = end; /* up to the next wait, or through the next signal */
        if (s < s_end && s->at < end) stop = s->wait ? s->at : s->at + 1;
        const am_replay_op *at = trace_calls_run(t->heap, r, r->ops + i, r->ops + stop, t->base + i, &t->sum);
        if (AM_UNLIKELY(at != r->ops + stop)) {
            t->status = AM_ERR_OOM;
            atomic_store(t->abort, 1);
            break;
        }
        i = stop;
        if (s < s_end && !s->wait && s->at + 1 == i) {
            atomic_store_explicit(&trace_flag[s->signal], t->repetition, memory_order_release);
            s++;
        }
    }
    am_start_stop(t->line);
#if AM_STATS
    memcpy(t->calls, trace_calls, sizeof trace_calls);
    t->live = trace_live;
    memset(trace_calls, 0, sizeof trace_calls);
    trace_live = trace_peak = 0;
#endif
}

/* Out of line, before the threads: the flags */
static AM_NOINLINE int trace_threads_prepare(am_job *job, const am_replay *r) {
#if !AM_THREAD_SAFE
    job->reason = "a trace of several threads replays on as many threads on one heap: needs a thread-safe heap";
    return AM_ERR_NA;
#endif
    int status = am_threads_check(job, r->threads);
    if (status != AM_OK) return status;
    if (trace_flags < r->nsignals) {
        atomic_uint *f = calloc(r->nsignals, sizeof *f);
        if (!f) return AM_ERR_OOM;
        free(trace_flag);
        trace_flag = f;
        trace_flags = r->nsignals;
        trace_repetition = 0;
    }
    if (++trace_repetition == 0) { /* after 2^32 repetitions: clear the flags and count again */
        for (uint32_t k = 0; k < trace_flags; k++) atomic_store(&trace_flag[k], 0);
        trace_repetition = 1;
    }
    return AM_OK;
}

/* The program's calls, each thread's on a thread of its own; AM_OK, or the
 * status to end with. The frees of what it left live are trace_run's. */
static int trace_threads_run(am_heap *h, am_job *job, const am_replay *r, uint64_t base, uint64_t *sum) {
    int status = trace_threads_prepare(job, r);
    if (status != AM_OK) return status;
    trace_thread *t = calloc(r->threads, sizeof *t);
    if (!t) return AM_ERR_OOM;
    atomic_int abort_flag;
    atomic_init(&abort_flag, 0);
    am_start_line line;
    for (unsigned i = 0; i < r->threads; i++) {
        t[i].line = &line;
        t[i].heap = h;
        t[i].owner = am_owner_current();
        t[i].r = r;
        t[i].abort = &abort_flag;
        t[i].id = i;
        t[i].repetition = trace_repetition;
        t[i].base = base;
    }
    status = am_thread_group_run(trace_thread_run, t, sizeof *t, r->threads, &line, &job->timed_ns);
    for (unsigned i = 0; i < r->threads; i++) {
        if (t[i].status != AM_OK) status = t[i].status;
        *sum += t[i].sum;
#if AM_STATS
        for (int k = 0; k < AM_REPLAY_KINDS; k++) trace_calls[k] += t[i].calls[k];
        trace_live += t[i].live;
#endif
    }
    free(t);
#if AM_STATS
    /* the peak of the calls in the program's order: the threads' own order
     * changes from run to run */
    trace_peak = r->peak_live;
#endif
    return status == AM_ERR_OOM ? trace_out_of_memory(job) : status;
}

/* The stamps the replay reads back, computed without any allocator: each
 * slot's first 8 bytes as the replay leaves them in its block. */
static uint64_t trace_oracle(am_job *job) {
    const am_replay *r = am_replay_current;
    if (!r) return trace_value(job->seed, 0); /* nothing replays: the run is skipped */
    unsigned char(*img)[8] = calloc(r->slots ? r->slots : 1, sizeof *img);
    if (!img) return 0; /* then no checksum agrees, and the cell fails */
    uint64_t sum = 0;
    for (size_t i = 0; i < r->nops + r->nclose; i++) {
        /* the program's order, the stamp of the call's place in ops */
        size_t at = r->order && i < r->nops ? r->order[i] : i;
        const am_replay_op *o = &r->ops[at];
        uint64_t v = trace_value(job->seed, 0) + at;
        size_t n = o->size;
        if (o->kind == AM_RP_FREE) {
            sum += trace_read(img[o->slot], n);
            continue;
        }
        if (o->kind == AM_RP_REALLOC) {
            size_t old_n = o->old_size;
            sum += trace_read(img[o->old_slot], old_n < n ? old_n : n);
            memmove(img[o->slot], img[o->old_slot], sizeof img[0]);
        }
        trace_stamp(img[o->slot], n, v);
    }
    free(img);
    return sum;
}

static double trace_ops(size_t size) {
    (void)size;
    return am_replay_current && am_replay_current->nops ? (double)am_replay_current->nops : 1.0;
}

static unsigned trace_reps(size_t size) {
    (void)size; /* about 100,000 calls a first sample */
    size_t calls = am_replay_current ? am_replay_current->nops : 0, reps = 100000 / (calls + 1) + 1;
    return (unsigned)(reps < 1000 ? reps : 1000);
}

/* The workload's table, and the one a trace of several threads runs by: the
 * same workload, threaded (its threads time themselves, and it runs without
 * the partner), not a workload of its own name. */
#define TRACE_WORKLOAD(summary_end, is_threaded)                                                                       \
    {.name = "trace",                                                                                                  \
     .summary = "a recorded program's calls (--trace FILE, docs/trace.md) replayed in order" summary_end,              \
     .sizes = trace_sizes,                                                                                             \
     .log_sizes = trace_sizes,                                                                                         \
     .reps = trace_reps,                                                                                               \
     .ops = trace_ops,                                                                                                 \
     .run = trace_run,                                                                                                 \
     .oracle = trace_oracle,                                                                                           \
     .threaded = is_threaded,                                                                                          \
     .seeds = 1,                                                                                                       \
     .age = 0,                                                                                                         \
     .min_bytes = NULL}
const am_workload am_workload_trace = TRACE_WORKLOAD("; size 1 (time per call)", 0);
static const am_workload trace_threaded = TRACE_WORKLOAD(", each thread's on a thread of its own", 1);

const am_workload *am_trace_workload(const am_workload *w) {
    return w == &am_workload_trace && am_replay_current && am_replay_current->threads > 1 ? &trace_threaded : w;
}
