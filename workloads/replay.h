/* replay.h: a recorded trace (docs/trace.md) decoded for replay: one compact
 * array of the calls a repetition makes, in the program's order. The cell
 * decodes the trace into it before any heap exists (cell/trace_load.h); the
 * workload `trace` (workloads/trace.c) replays it. Plain data: nothing here
 * allocates through a strategy. */
#ifndef AM_REPLAY_H
#define AM_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/* what a replayed call does */
enum {
    AM_RP_MALLOC = 0,  /* a new block of `size` bytes */
    AM_RP_ALIGNED = 1, /* the same, aligned to 1 << align_log2 */
    AM_RP_CALLOC = 2,  /* a new block, zeroed */
    AM_RP_REALLOC = 3, /* old_slot's block resized to `size` bytes: a new block in slot */
    AM_RP_FREE = 4     /* slot's block, of `size` bytes, freed */
};

/* One call: 20 bytes. A block lives in a slot of the replay's table from its
 * allocation to its end; a slot is reused once its block has ended, so the
 * table holds the most blocks ever live at once, not every block. Sizes are
 * as the program asked them, but 0: the replay asks for 1 byte then, and the
 * call's AM_RP_ZERO_* bit says that the program asked for 0; the
 * size, alignment and slot of a freed block are stored in the free, so that
 * the free is sized without a lookup. */
typedef struct am_replay_op {
    uint32_t slot;      /* the block made, or for AM_RP_FREE the block freed */
    uint32_t old_slot;  /* AM_RP_REALLOC: the block resized */
    uint32_t size;      /* bytes asked, or of the block freed */
    uint32_t old_size;  /* AM_RP_REALLOC: the old block's bytes */
    uint8_t kind;       /* AM_RP_* */
    uint8_t call;       /* the recorded call (enum am_trace_kind), and AM_RP_ZERO_* */
    uint8_t align_log2; /* the block's alignment, 0: the strategy's own (AM_MIN_ALIGN) */
    uint8_t old_align_log2;
} am_replay_op;

#define AM_RP_ZERO_SIZE 0x80 /* the program asked for 0 bytes (size is 1) */
#define AM_RP_ZERO_OLD 0x40  /* the same of old_size */
#define AM_RP_CALL_MASK 0x0f

#define AM_REPLAY_KINDS 10 /* recorded calls: AM_CALL_KINDS of trace_format.h */

/* Calls the replay holds at most (the array then takes 2.5 GiB, and as much
 * again at most for the closing frees, the reader's copy of the trace 6 GiB
 * more while decoding): a longer trace is refused. */
#define AM_REPLAY_MAX_CALLS ((size_t)1 << 27)

/* Calls the threaded replay makes beside its own: a thread waits before the
 * call at `at` until another thread has made the block it ends (wait 1), or
 * signals after the call at `at` that it has made a block another thread
 * ends (wait 0). `signal` names the pair: one flag a block ended across
 * threads. A thread's syncs are in the order of its calls, a wait before a
 * signal at one call. */
typedef struct am_replay_sync {
    uint32_t at;     /* the call's index in ops */
    uint32_t signal; /* its flag, 0 .. nsignals - 1 */
    uint32_t wait;
} am_replay_sync;

/* Threads a replay runs at most: AM_MAX_THREADS of thread_group.h */
#define AM_REPLAY_MAX_THREADS 256

/* ops holds the nops calls and after them nclose frees of kind AM_RP_FREE,
 * one for each block the program left live (in slot order), which the replay
 * makes so that repetitions are alike: one loop makes every call of the
 * strategy, and so the strategy's fast path has one place to inline into. */
typedef struct am_replay {
    const am_replay_op *ops;
    size_t nops;              /* calls replayed a repetition */
    size_t nclose;            /* the closing frees, ops[nops] on */
    uint32_t slots;           /* the table's slots: the most blocks live at once */
    /* the recorded calls not replayed: free(NULL), calls that gave no block,
     * by call kind */
    uint64_t skipped[AM_REPLAY_KINDS];
    uint64_t total_bytes;     /* bytes allocated in all, each block rounded up to AM_MIN_ALIGN */
    uint64_t peak_live, final_live; /* bytes asked, as the recorder counts them */
    uint64_t digest;          /* of every call: the inputs digest covers the trace */
    /* A trace of several threads (threads > 1) replays on as many threads:
     * ops holds thread 0's calls in its order, then thread 1's, ..., thread
     * t's from thread_first[t] to thread_first[t + 1]; the closing frees
     * after them all. A block's slot is its making thread's; a slot is reused
     * only by that thread, and only after a free in that same thread, so no
     * thread writes a slot another may still read. order[i] is the index in
     * ops of the program's i-th call (the oracle makes them in that order). */
    unsigned threads;
    const size_t *thread_first;
    const uint32_t *order;
    const am_replay_sync *sync;
    size_t nsync;
    uint32_t nsignals;
} am_replay;

/* The trace the workload replays: set by the cell (and for the partner's
 * unit through am_partner_job) before the oracle runs; NULL: none given. */
extern const am_replay *am_replay_current;

/* The workload a cell runs for w: for the workload trace and a trace of
 * several threads, the same but threaded (its threads time themselves, and it
 * runs without the partner); else w. */
const struct am_workload *am_trace_workload(const struct am_workload *w);

#endif
