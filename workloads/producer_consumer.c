/* producer_consumer.c: blocks allocated on one thread and freed on another, the
 * pattern of xmalloc-test and larson. T threads in a ring, all on the cell's
 * one heap: thread i allocates `size` blocks of PC_BLOCK bytes, writes each, and
 * passes it to thread i + 1 through a single-producer single-consumer queue;
 * each thread frees what it receives. With one thread the ring is a thread
 * passing blocks to itself. Rows whose heap is not thread-safe do not apply
 * (a heap per thread cannot take another thread's frees).
 * ops = T x size: blocks passed (each one allocated and freed). */
#include <stdatomic.h>
#include <stdlib.h>

#include "thread_group.h"

#define PC_BLOCK 64
#define PC_QUEUE 256 /* blocks in flight between two threads; a power of two */

/* one producer, one consumer: head is written by the consumer, tail by the
 * producer, each on a cache line of its own */
typedef struct pc_queue {
    atomic_size_t head;
    char head_line[64 - sizeof(atomic_size_t)];
    atomic_size_t tail;
    char tail_line[64 - sizeof(atomic_size_t)];
    void *slot[PC_QUEUE];
} pc_queue;

typedef struct pc_thread {
    am_start_line *line;
    am_heap *heap;
    am_owner *owner;
    pc_queue *out, *in;      /* to the next thread, from the previous one */
    atomic_int *out_done;    /* set once this thread puts nothing more in `out` */
    atomic_int *in_done;     /* the previous thread's */
    atomic_int *abort;       /* someone ran out of memory: stop allocating */
    unsigned id;
    size_t blocks;
    uint64_t first;
    uint64_t sum;
    int status;
} pc_thread;

static uint64_t pc_first(uint64_t seed, unsigned id) { return seed * 1000003u + ((uint64_t)id << 40); }

static int pc_push(pc_queue *q, void *b) {
    size_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
    if (t - atomic_load_explicit(&q->head, memory_order_acquire) == PC_QUEUE) return 0;
    q->slot[t & (PC_QUEUE - 1)] = b;
    atomic_store_explicit(&q->tail, t + 1, memory_order_release);
    return 1;
}

/* frees every block waiting in q, adding their values to *sum; how many */
static size_t pc_drain(pc_queue *q, am_heap *h, uint64_t *sum) {
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    size_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    for (size_t i = head; i != tail; i++) {
        uint64_t *b = q->slot[i & (PC_QUEUE - 1)];
        *sum += b[0] + b[PC_BLOCK / 8 - 1];
        am_free(h, b, PC_BLOCK);
    }
    atomic_store_explicit(&q->head, tail, memory_order_release);
    return tail - head;
}

static void pc_run_thread(void *arg) {
    pc_thread *t = arg;
    am_owner_enter_thread(t->owner, t->id);
    am_heap *h = t->heap;
    uint64_t sum = 0;
    size_t made = 0;
    int done = 0;
    am_start_wait(t->line);
    for (;;) {
        size_t moved = 0;
        if (!done) {
            if (made == t->blocks || atomic_load_explicit(t->abort, memory_order_relaxed)) {
                atomic_store_explicit(t->out_done, 1, memory_order_release);
                done = 1;
            } else {
                uint64_t *b = am_alloc(h, PC_BLOCK);
                if (AM_UNLIKELY(!b)) {
                    t->status = AM_ERR_OOM;
                    atomic_store(t->abort, 1);
                    continue;
                }
                b[0] = b[PC_BLOCK / 8 - 1] = t->first + made;
                while (!pc_push(t->out, b)) { /* full: make room by taking in ours */
                    if (!pc_drain(t->in, h, &sum)) am_thread_yield();
                }
                made++;
                moved = 1;
            }
        }
        /* the previous thread's flag first: once it is set, what is in the
         * queue after it is all that will come */
        int prev_done = atomic_load_explicit(t->in_done, memory_order_acquire);
        moved += pc_drain(t->in, h, &sum);
        if (done && prev_done && !moved) break;
        if (!moved) am_thread_yield();
    }
    am_start_stop(t->line);
    t->sum = sum;
}

static uint64_t producer_consumer_run(am_heap *h, am_job *job, int *status) {
#if !AM_THREAD_SAFE
    job->reason = "blocks are freed by another thread: needs a thread-safe heap";
    *status = AM_ERR_NA;
    return 0;
#endif
    unsigned n = am_job_threads(job);
    *status = am_threads_check(job, n);
    if (*status != AM_OK) return 0;
    pc_thread *t = calloc(n, sizeof *t);
    pc_queue *q = calloc(n, sizeof *q);
    atomic_int *done = calloc(n, sizeof *done);
    atomic_int abort_flag;
    if (!t || !q || !done) {
        free(t);
        free(q);
        free(done);
        *status = AM_ERR_OOM;
        return 0;
    }
    atomic_init(&abort_flag, 0);
    am_start_line line;
    for (unsigned i = 0; i < n; i++) {
        atomic_init(&q[i].head, 0);
        atomic_init(&q[i].tail, 0);
        atomic_init(&done[i], 0);
    }
    for (unsigned i = 0; i < n; i++) {
        t[i].line = &line;
        t[i].heap = h;
        t[i].owner = am_owner_current();
        t[i].out = &q[i];
        t[i].in = &q[(i + n - 1) % n];
        t[i].out_done = &done[i];
        t[i].in_done = &done[(i + n - 1) % n];
        t[i].abort = &abort_flag;
        t[i].id = i;
        t[i].blocks = job->size;
        t[i].first = pc_first(job->seed, i);
    }
    *status = am_thread_group_run(pc_run_thread, t, sizeof *t, n, &line, &job->timed_ns);
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        if (t[i].status != AM_OK) *status = t[i].status;
        sum += t[i].sum;
    }
    free(t);
    free(q);
    free(done);
    return *status == AM_OK ? sum : 0;
}

/* every block's value, read back twice (its first and last word) */
static uint64_t producer_consumer_oracle(am_job *job) {
    unsigned n = am_job_threads(job);
    uint64_t k = job->size, sum = 0;
    for (unsigned i = 0; i < n; i++) sum += 2 * (k * pc_first(job->seed, i) + k * (k - (k ? 1 : 0)) / 2);
    return sum;
}

static const size_t producer_consumer_sizes[] = {100000, 0};
static const size_t producer_consumer_log_sizes[] = {10000, 100000, 0};

static unsigned producer_consumer_reps(size_t size) { (void)size; return 1; }
static double producer_consumer_ops(size_t size) { return (double)size; }
static double producer_consumer_job_ops(const am_job *job) {
    return (double)am_job_threads(job) * (double)job->size;
}

const am_workload am_workload_producer_consumer = {
    .name = "producer_consumer",
    .summary = "T threads in a ring on one heap: each allocates `size` 64-byte blocks and passes them to the next, "
        "which frees them (xmalloc-test, larson); thread-safe rows only",
    .sizes = producer_consumer_sizes,
    .log_sizes = producer_consumer_log_sizes,
    .reps = producer_consumer_reps,
    .ops = producer_consumer_ops,
    .run = producer_consumer_run,
    .oracle = producer_consumer_oracle,
    .threaded = 1,
    .seeds = 1,
    .age = 0,
    .min_bytes = NULL,
    .dimension = "contention",
};

const am_sweep am_sweep_producer_consumer = {
    .workload = "producer_consumer",
    .params = NULL,
    .threads = 0,
    .ops = producer_consumer_job_ops,
};
