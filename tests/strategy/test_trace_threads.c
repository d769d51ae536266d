/* test_trace_threads.c: the workload trace replaying a trace of several
 * threads on this row: each thread's calls on a thread of its own, a free of
 * a block made in another thread after its allocation, the checksum equal to
 * the oracle's over many repetitions, and rows that are not thread-safe say
 * "not applicable". The trace is built here, laid out as cell/trace_load.h
 * lays one out; make check runs it under ThreadSanitizer. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "replay.h"
#include "workload.h"

/* A ping-pong of two threads: thread 0 makes block i and thread 1 frees it,
 * thread 1 makes block i' and thread 0 frees it; thread 0 also makes and
 * frees a block of its own each round (a slot it reuses), and leaves one
 * block live at the end. In the program's order, round i: 0 makes a, 1 makes
 * b, 1 frees a, 0 frees b, 0 makes c, 0 frees c. */
#define ROUNDS 2000

static am_replay_op tt_ops[6 * ROUNDS + 2];
static uint32_t tt_order[6 * ROUNDS + 1];
static am_replay_sync tt_sync[4 * ROUNDS];
static size_t tt_first[3];

static am_replay_op tt_op(uint8_t kind, uint32_t slot, uint32_t size) {
    am_replay_op o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.call = kind == AM_RP_FREE ? 4 : 0;
    o.slot = slot;
    o.size = size;
    return o;
}

static void tt_build(am_replay *r) {
    memset(r, 0, sizeof *r);
    /* thread 0: 4 calls a round and the last block; thread 1: 2 a round */
    size_t n0 = 4 * ROUNDS + 1, n1 = 2 * ROUNDS;
    size_t i0 = 0, i1 = n0, g = 0, ns = 0;
    /* slots: thread 0's blocks a: 0 .. ROUNDS-1 (ended in thread 1: never
     * reused), c: ROUNDS (reused each round), the last: ROUNDS + 1; thread
     * 1's b: ROUNDS + 2 .. */
    uint32_t c_slot = ROUNDS, last_slot = ROUNDS + 1, b0 = ROUNDS + 2;
    for (uint32_t i = 0; i < ROUNDS; i++) {
        uint32_t a_size = 8 + i % 200, b_size = 3 + i % 61, c_size = 16 + i % 300;
        size_t a_at = i0, b_at = i1, afree_at = i1 + 1, bfree_at = i0 + 1;
        tt_ops[i0++] = tt_op(AM_RP_MALLOC, i, a_size);
        tt_ops[i1++] = tt_op(AM_RP_MALLOC, b0 + i, b_size);
        tt_ops[i1++] = tt_op(AM_RP_FREE, i, a_size);
        tt_ops[i0++] = tt_op(AM_RP_FREE, b0 + i, b_size);
        tt_ops[i0++] = tt_op(AM_RP_MALLOC, c_slot, c_size);
        tt_ops[i0++] = tt_op(AM_RP_FREE, c_slot, c_size);
        tt_order[g++] = (uint32_t)a_at;
        tt_order[g++] = (uint32_t)b_at;
        tt_order[g++] = (uint32_t)afree_at;
        tt_order[g++] = (uint32_t)bfree_at;
        tt_order[g++] = (uint32_t)(bfree_at + 1);
        tt_order[g++] = (uint32_t)(bfree_at + 2);
    }
    tt_ops[i0++] = tt_op(AM_RP_MALLOC, last_slot, 77);
    tt_order[g++] = (uint32_t)(i0 - 1);
    /* the syncs in the order of ops: thread 0's (a signal after each a, a
     * wait before each free of b), then thread 1's (a signal after each b,
     * a wait before each free of a) */
    for (uint32_t i = 0; i < ROUNDS; i++) {
        tt_sync[ns++] = (am_replay_sync){4 * i, 2 * i, 0};
        tt_sync[ns++] = (am_replay_sync){4 * i + 1, 2 * i + 1, 1};
    }
    for (uint32_t i = 0; i < ROUNDS; i++) {
        tt_sync[ns++] = (am_replay_sync){(uint32_t)(n0 + 2 * i), 2 * i + 1, 0};
        tt_sync[ns++] = (am_replay_sync){(uint32_t)(n0 + 2 * i + 1), 2 * i, 1};
    }
    tt_ops[n0 + n1] = tt_op(AM_RP_FREE, last_slot, 77); /* the closing free */
    tt_first[0] = 0;
    tt_first[1] = n0;
    tt_first[2] = n0 + n1;
    r->ops = tt_ops;
    r->nops = n0 + n1;
    r->nclose = 1;
    r->slots = b0 + ROUNDS;
    r->total_bytes = 64 * (uint64_t)(6 * ROUNDS + 1);
    r->threads = 2;
    r->thread_first = tt_first;
    r->order = tt_order;
    r->sync = tt_sync;
    r->nsync = ns;
    r->nsignals = 2 * ROUNDS;
}

static void test_trace_replays_on_threads(void) {
    static am_replay r;
    tt_build(&r);
    am_replay_current = &r;
    const am_workload *w = am_trace_workload(am_workload_find("trace"));
    CHECK(w->threaded);
    for (int rep = 0; rep < 20; rep++) {
        am_job job;
        memset(&job, 0, sizeof job);
        job.size = 1;
        job.seed = 11 + (uint64_t)rep % 3;
        am_options_default(&job.options);
        am_heap *h = am_create(&job.options);
        CHECK(h != NULL);
        int status = -1;
        uint64_t sum = w->run(h, &job, &status);
#if !AM_THREAD_SAFE
        CHECK_MSG(status == AM_ERR_NA && job.reason && strstr(job.reason, "thread-safe"), "status %d", status);
        am_destroy(h);
        break;
#endif
        CHECK_MSG(status == AM_OK, "repetition %d: status %d", rep, status);
        CHECK_MSG(sum == w->oracle(&job), "repetition %d: checksum differs from the oracle", rep);
        CHECK(job.timed_ns > 0);
        am_destroy(h);
    }
    am_replay_current = NULL;
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"trace_replays_on_threads", test_trace_replays_on_threads},
        {NULL, NULL}};
    return am_run_tests("trace_threads[" AM_ROW_NAME "]", tests, argc, argv);
}
