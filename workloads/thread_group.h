/* thread_group.h: the threads of a threaded workload's repetition: how many the
 * cell asks for, whether this strategy can run them, starting and joining them,
 * and the counting owner each one files its blocks under. Not a thread pool:
 * the threads live for one repetition. */
#ifndef AM_THREAD_GROUP_H
#define AM_THREAD_GROUP_H

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

/* Runs fn on each of n items (item i at items + i * item_size) in a thread of
 * its own and joins them all. AM_ERR_FAILED where a thread could not start (its
 * item is not run) or n > AM_MAX_THREADS, else AM_OK. */
AM_INLINE int am_thread_group_run(am_thread_fn fn, void *items, size_t item_size, unsigned n) {
    am_thread *t[AM_MAX_THREADS];
    int status = AM_OK;
    if (n > AM_MAX_THREADS) return AM_ERR_FAILED;
    for (unsigned i = 0; i < n; i++) t[i] = am_thread_start(fn, (char *)items + (size_t)i * item_size);
    for (unsigned i = 0; i < n; i++) {
        if (t[i]) am_thread_join(t[i]);
        else status = AM_ERR_FAILED;
    }
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
