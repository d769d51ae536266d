/* thread_group.h: the threads of a threaded workload's repetition: how many the
 * job asks for, whether this strategy can run them, starting them, timing
 * them between a start line and their stop, and joining them, and the counting
 * owner each one files its blocks under. Not a thread pool: the threads live
 * for one repetition. */
#ifndef AM_THREAD_GROUP_H
#define AM_THREAD_GROUP_H

#include <stdatomic.h>
#include <stdio.h>
#include "workload.h"

#define AM_MAX_THREADS 256

/* the job's thread count (1 where unset) */
AM_INLINE unsigned am_job_threads(const am_job *job) { return job->threads ? job->threads : 1; }

/* AM_OK where n threads may each use a heap of this strategy; AM_ERR_NA with
 * the job's reason where heaps share unlocked state (a heap per thread is no
 * escape then); AM_ERR_FAILED above AM_MAX_THREADS. */
AM_INLINE int am_threads_check(am_job *job, unsigned n) {
#if !AM_THREAD_SAFE && AM_HEAPS_SHARE_STATE
    if (n > 1) {
        job->reason = "heaps share unlocked state: not safe from several threads";
        return AM_ERR_NA;
    }
#else
    (void)job;
#endif
    return n > AM_MAX_THREADS ? AM_ERR_FAILED : AM_OK;
}

/* The start line: every thread sets up (its heap, its inputs), says it is
 * ready and waits on the gate, which the starting thread holds until all are
 * ready; the time runs from the gate's opening to the last thread's stop.
 * Starting, setting up, tearing down and joining are outside it. */
typedef struct am_start_line {
    am_mutex *gate;
    atomic_uint ready;
    atomic_uint_least64_t stop_ns; /* the latest stop */
} am_start_line;

/* In a started thread, once set up: waits for the start. */
AM_INLINE void am_start_wait(am_start_line *s) {
    atomic_fetch_add(&s->ready, 1);
    am_mutex_lock(s->gate);
    am_mutex_unlock(s->gate);
}

/* In a started thread, as its timed work ends. */
AM_INLINE void am_start_stop(am_start_line *s) {
    uint_least64_t t = am_now_ns(), seen = atomic_load(&s->stop_ns);
    while (seen < t && !atomic_compare_exchange_weak(&s->stop_ns, &seen, t)) {}
}

/* Runs fn on each of n items (item i at items + i * item_size) in a thread of
 * its own; each fn calls am_start_wait(line) after its setup and
 * am_start_stop(line) after its work. *timed_ns: from the start to the last
 * stop. AM_ERR_FAILED where a thread could not start (its item is not run),
 * the gate could not be made, or n > AM_MAX_THREADS; else AM_OK. */
AM_INLINE int am_thread_group_run(am_thread_fn fn, void *items, size_t item_size, unsigned n, am_start_line *line,
                                  uint64_t *timed_ns) {
    am_thread *t[AM_MAX_THREADS];
    int status = AM_OK;
    unsigned started = 0;
    *timed_ns = 0;
    if (n > AM_MAX_THREADS) return AM_ERR_FAILED;
    line->gate = am_mutex_create();
    if (!line->gate) return AM_ERR_FAILED;
    atomic_init(&line->ready, 0);
    atomic_init(&line->stop_ns, 0);
    am_mutex_lock(line->gate);
    for (unsigned i = 0; i < n; i++) {
        t[i] = am_thread_start(fn, (char *)items + (size_t)i * item_size);
        if (t[i]) started++;
        else status = AM_ERR_FAILED;
    }
    while (atomic_load(&line->ready) < started) am_thread_yield();
    uint64_t start = am_now_ns();
    am_mutex_unlock(line->gate);
    for (unsigned i = 0; i < n; i++)
        if (t[i]) am_thread_join(t[i]);
    uint64_t stop = atomic_load(&line->stop_ns);
    *timed_ns = stop > start ? stop - start : 0;
    am_mutex_destroy(line->gate);
    return status;
}

/* In a started thread: its blocks are counted under "thread-<id>" below parent
 * (AM_STATS builds; nothing otherwise). */
AM_INLINE void am_owner_enter_thread(am_owner *parent, unsigned id) {
    char name[32];
    snprintf(name, sizeof name, "thread-%u", id);
    am_owner_enter(am_owner_child(parent, name));
}

#endif
