/* record_buffer.c: a thread's buffer in the recording library (make record):
 * made at the thread's first call, written out as a unit of the trace when
 * full, when the thread ends and when the trace closes. The writing of records
 * into it is record_calls.c's fast path; only these slow paths are here. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "record.h"

_Atomic(struct tstate *) g_states;
atomic_uint g_threads;
_Atomic uint64_t g_peak_of_ended;
TLS struct tstate *t_state;
TLS int t_busy;
static pthread_key_t g_key;

/* writes [flushed, committed) as one unit; the caller holds flush_lock */
void write_records(struct tstate *t)
{
    size_t from = atomic_load(&t->flushed), to = atomic_load_explicit(&t->committed, memory_order_acquire);
    if (to <= from)
        return;
    unsigned char head[24], *o = head;
    *o++ = AM_UNIT_RECORDS;
    o = put(o, t->tid);
    o = put(o, to - from);
    struct iovec iov[2] = {{head, (size_t)(o - head)}, {t->buf + from, to - from}};
    int saved = errno;
    trace_write(iov, 2);
    errno = saved;
    atomic_store(&t->flushed, to);
}

void lock_buffer(struct tstate *t)
{
    int spins = 0;
    while (atomic_exchange(&t->flush_lock, 1) != 0)
        if (++spins > 100)
            sched_yield();
}

/* the buffers close_trace left locked, after an exec that failed */
void unlock_buffers(void)
{
    for (struct tstate *t = atomic_load(&g_states); t; t = t->next)
        atomic_store(&t->flush_lock, 0);
}

void flush_own(struct tstate *t)
{
    lock_buffer(t);
    write_records(t);
    atomic_store(&t->flushed, 0);
    atomic_store(&t->committed, 0);
    t->pos = 0;
    atomic_store(&t->flush_lock, 0);
}

static void thread_ended(void *p)
{
    struct tstate *t = p;
    flush_own(t);
    /* the state stays listed: its counts belong to the closing record, and
     * the C library's own clean-up may still call free in this thread */
    uint64_t old = atomic_load(&g_peak_of_ended);
    while (t->peak > old && !atomic_compare_exchange_weak(&g_peak_of_ended, &old, t->peak)) {
    }
}

int buffers_start(void)
{
    return pthread_key_create(&g_key, thread_ended) == 0;
}

/* mmap'd, not malloc'd: the recorder allocates nothing through malloc */
struct tstate *new_state(void)
{
    t_busy = 1;
    struct tstate *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED) {
        t_busy = 0;
        return NULL;
    }
    t->tid = atomic_fetch_add(&g_threads, 1);
    struct tstate *head = atomic_load(&g_states);
    do
        t->next = head;
    while (!atomic_compare_exchange_weak(&g_states, &head, t));
    pthread_setspecific(g_key, t);
    t_state = t;
    t_busy = 0;
    return t;
}

/* a child of fork: one thread, which has allocated nothing yet */
void buffers_after_fork(void)
{
    atomic_store(&g_peak_of_ended, 0);
    atomic_store(&g_states, NULL);
    atomic_store(&g_threads, 0);
    struct tstate *t = t_state;
    if (t) {
        t->tid = atomic_fetch_add(&g_threads, 1);
        t->next = NULL;
        t->seq = 0;
        t->nalloc = 0;
        memset(t->counts, 0, sizeof t->counts);
        t->foreign_reallocs = t->untracked = t->peak = 0;
        atomic_store(&t->flush_lock, 0);
        atomic_store(&t->flushed, 0);
        atomic_store(&t->committed, 0);
        t->pos = 0;
        atomic_store(&g_states, t);
    }
}
