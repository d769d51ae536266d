/* trace_load.h: a recorded trace read (recorder/trace_read.h) and decoded into
 * the replay's array (workloads/replay.h), once, before any heap exists and
 * before anything is timed. For cell_main.c only. It refuses, with a message
 * naming the limit, what the replay cannot hold: more than AM_REPLAY_MAX_CALLS
 * calls, a block of 4 GiB or more, more than AM_REPLAY_MAX_THREADS threads. */
#ifndef AM_CELL_TRACE_LOAD_H
#define AM_CELL_TRACE_LOAD_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../recorder/trace_read.h"
#include "platform.h"
#include "replay.h"

/* what the decoding keeps of each block, by its dense id */
typedef struct tl_block {
    uint32_t slot, size;
    uint32_t made_at; /* several threads: the call that made it (its index in ops) */
    uint32_t thread;  /* several threads: the thread that made it */
    uint8_t align_log2;
} tl_block;

typedef struct tl_state {
    am_replay *r;
    am_replay_op *ops;
    tl_block *blocks;
    uint32_t *free_slots; /* slots whose block has ended, reused last in, first out */
    uint32_t nfree;
    uint64_t live;
    /* several threads: a free list of slots per thread (the head: slot + 1,
     * 0 none; free_slots[slot] the next), the calling thread, and by call the
     * flag it signals after it (made_signal) or waits for before it
     * (wait_signal), each the flag + 1, 0 none */
    uint32_t *free_head;
    uint32_t thread;
    uint32_t *made_signal, *wait_signal;
} tl_state;

/* the op's size: 1 for 0, which the call's bit remembers */
static void tl_size(am_replay_op *op, uint32_t size) {
    op->size = size ? size : 1;
    if (!size) op->call |= AM_RP_ZERO_SIZE;
}

static uint8_t tl_align_log2(const am_trace_call *c) {
    uint64_t a = c->align;
    if (c->kind == AM_CALL_VALLOC || c->kind == AM_CALL_PVALLOC) a = 4096; /* the page, as glibc on x86-64 */
    if (a <= AM_MIN_ALIGN) return 0;
    uint8_t k = 0;
    while (((uint64_t)1 << k) < a && k < 63) k++; /* memalign rounds an alignment up to a power of two */
    return k;
}

/* a new block, in a slot; the op's slot, size and alignment */
static void tl_make(tl_state *s, am_replay_op *op, const am_trace_call *c) {
    tl_block *b = &s->blocks[c->id];
    if (!s->free_head) b->slot = s->nfree ? s->free_slots[--s->nfree] : s->r->slots++;
    else if (s->free_head[s->thread]) {
        b->slot = s->free_head[s->thread] - 1;
        s->free_head[s->thread] = s->free_slots[b->slot];
    } else b->slot = s->r->slots++;
    b->made_at = (uint32_t)s->r->nops;
    b->thread = s->thread;
    b->size = (uint32_t)c->size;
    b->align_log2 = tl_align_log2(c);
    op->slot = b->slot;
    tl_size(op, b->size);
    op->align_log2 = b->align_log2;
    size_t n = c->size ? (size_t)c->size : 1;
    s->r->total_bytes += AM_ALIGN_UP(n, AM_MIN_ALIGN) + (b->align_log2 ? (uint64_t)1 << b->align_log2 : 0);
    s->live += c->size;
    if (s->live > s->r->peak_live) s->r->peak_live = s->live;
}

/* A block ended by the call being decoded. With several threads, a slot
 * ended in its own thread is that thread's to reuse; one ended in another
 * thread is never reused (its maker would not know when the free has been
 * made), and the call waits for its making call's signal. */
static void tl_end(tl_state *s, uint64_t id) {
    tl_block *b = &s->blocks[id];
    if (!s->free_head) s->free_slots[s->nfree++] = b->slot;
    else if (b->thread == s->thread) {
        s->free_slots[b->slot] = s->free_head[s->thread];
        s->free_head[s->thread] = b->slot + 1;
    } else {
        uint32_t k = ++s->r->nsignals; /* the flag + 1 */
        s->made_signal[b->made_at] = k;
        s->wait_signal[s->r->nops] = k;
    }
    s->live -= s->blocks[id].size;
    s->blocks[id].size = UINT32_MAX; /* ended: not among the blocks live at the end */
}

/* one recorded call into *op; 0 when it replays nothing (counted as skipped) */
static int tl_call(tl_state *s, const am_trace_call *c, am_replay_op *op) {
    memset(op, 0, sizeof *op);
    op->call = c->kind;
    int resize = c->kind == AM_CALL_REALLOC || c->kind == AM_CALL_REALLOCARRAY;
    if (c->kind == AM_CALL_FREE || (resize && !c->id)) {
        /* free(NULL), a failed realloc: nothing; realloc(p, 0) that freed p: a free */
        if (!c->old_id || !c->old_ends) return 0;
        tl_block *b = &s->blocks[c->old_id];
        op->kind = AM_RP_FREE;
        op->slot = b->slot;
        tl_size(op, b->size);
        op->align_log2 = b->align_log2;
        tl_end(s, c->old_id);
        return 1;
    }
    if (c->failed || !c->id) return 0;
    if (resize && c->old_id) {
        tl_block *old = &s->blocks[c->old_id];
        op->kind = AM_RP_REALLOC;
        op->old_slot = old->slot;
        op->old_size = old->size ? old->size : 1;
        if (!old->size) op->call |= AM_RP_ZERO_OLD;
        op->old_align_log2 = old->align_log2;
        tl_end(s, c->old_id); /* first: the new block may take the old one's slot */
        tl_make(s, op, c);
        op->align_log2 = 0; /* realloc gives malloc's alignment */
        s->blocks[c->id].align_log2 = 0;
        return 1;
    }
    tl_make(s, op, c);
    op->kind = op->align_log2 ? AM_RP_ALIGNED : c->kind == AM_CALL_CALLOC ? AM_RP_CALLOC : AM_RP_MALLOC;
    return 1;
}

static uint64_t tl_digest(const am_replay_op *ops, size_t n) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < n; i++) {
        const am_replay_op *o = &ops[i];
        uint64_t w[3] = {(uint64_t)o->slot << 32 | o->old_slot, (uint64_t)o->size << 32 | o->old_size,
                         (uint64_t)o->kind << 24 | (uint64_t)o->call << 16 | (uint64_t)o->align_log2 << 8 |
                             o->old_align_log2};
        for (int k = 0; k < 3; k++) h = (h ^ w[k]) * 0x100000001B3ull;
    }
    return h;
}

/* what the replay cannot hold: a message and 0 */
static int tl_check(const char *path, const am_trace *t) {
    if (t->threads > AM_REPLAY_MAX_THREADS) {
        fprintf(stderr, "am-cell: %s: a trace of %" PRIu32 " threads; the replay runs at most %d\n", path,
                t->threads, AM_REPLAY_MAX_THREADS);
        return 0;
    }
    if (t->ncalls > AM_REPLAY_MAX_CALLS) {
        fprintf(stderr, "am-cell: %s: %zu calls; the replay holds at most %zu\n", path, t->ncalls,
                (size_t)AM_REPLAY_MAX_CALLS);
        return 0;
    }
    for (size_t i = 0; i < t->ncalls; i++)
        if (t->calls[i].id && t->calls[i].size >= UINT32_MAX) {
            fprintf(stderr, "am-cell: %s: call %zu asks for %" PRIu64 " bytes; the replay holds blocks below 4 GiB\n",
                    path, i + 1, t->calls[i].size);
            return 0;
        }
    return 1;
}

static int tl_no_memory(const char *path, size_t calls) {
    fprintf(stderr, "am-cell: %s: no memory to decode %zu calls\n", path, calls);
    return 0;
}

/* Several threads: the calls, decoded in the program's order with the thread
 * of each (of_thread), laid out thread by thread (am_replay, threads), with
 * each thread's waits and signals; the closing frees stay last. 0: no memory. */
static int tl_by_thread(tl_state *s, const uint16_t *of_thread, unsigned threads) {
    am_replay *r = s->r;
    size_t n = r->nops, all = n + r->nclose;
    size_t *first = calloc((size_t)threads + 1, sizeof *first);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    am_replay_op *ops = malloc((all ? all : 1) * sizeof *ops);
    uint32_t *made = calloc(all ? all : 1, sizeof *made), *wait = calloc(all ? all : 1, sizeof *wait);
    am_replay_sync *sync = malloc(((size_t)2 * r->nsignals + 1) * sizeof *sync);
    if (!first || !order || !ops || !made || !wait || !sync) {
        free(first), free(order), free(ops), free(made), free(wait), free(sync);
        return 0;
    }
    for (size_t i = 0; i < n; i++) first[of_thread[i] + 1]++;
    for (unsigned t = 0; t < threads; t++) first[t + 1] += first[t];
    size_t *next = calloc(threads, sizeof *next);
    if (!next) {
        free(first), free(order), free(ops), free(made), free(wait), free(sync);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = first[of_thread[i]] + next[of_thread[i]]++;
        order[i] = (uint32_t)k;
        ops[k] = s->ops[i];
        made[k] = s->made_signal[i];
        wait[k] = s->wait_signal[i];
    }
    memcpy(ops + n, s->ops + n, r->nclose * sizeof *ops);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (wait[k]) sync[m++] = (am_replay_sync){(uint32_t)k, wait[k] - 1, 1};
        if (made[k]) sync[m++] = (am_replay_sync){(uint32_t)k, made[k] - 1, 0};
    }
    free(next), free(made), free(wait);
    free(s->ops);
    s->ops = ops;
    r->threads = threads;
    r->thread_first = first;
    r->order = order;
    r->sync = sync;
    r->nsync = m;
    return 1;
}

/* The reader's arrays in pages of their own (am_trace_use_memory), mapped
 * and unmapped whole, so that no malloc keeps their address space; before
 * each, the bytes mapped. */
#define TL_PAGES_HEAD 16

static void tl_pages_release(void *p) {
    if (!p) return;
    char *base = (char *)p - TL_PAGES_HEAD;
    am_vm_release(base, *(size_t *)(void *)base);
}

static void *tl_pages_resize(void *p, size_t bytes) {
    if (bytes > SIZE_MAX - TL_PAGES_HEAD) return NULL;
    char *base = am_vm_reserve(bytes + TL_PAGES_HEAD);
    if (!base) return NULL;
    *(size_t *)(void *)base = bytes + TL_PAGES_HEAD;
    if (p) {
        size_t old = *(size_t *)(void *)((char *)p - TL_PAGES_HEAD) - TL_PAGES_HEAD;
        memcpy(base + TL_PAGES_HEAD, p, old < bytes ? old : bytes);
        tl_pages_release(p);
    }
    return base + TL_PAGES_HEAD;
}

/* The trace at path decoded into *r (its arrays malloc'd for the process's
 * life, the reader's in pages of their own); 0 after a message (bad input:
 * exit 2). */
static int am_trace_load(const char *path, am_replay *r) {
    am_trace t;
    char err[512];
    memset(r, 0, sizeof *r);
    am_trace_use_memory(tl_pages_resize, tl_pages_release);
    if (am_trace_read(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "am-cell: %s\n", err);
        return 0;
    }
    if (t.cut) fprintf(stderr, "am-cell: %s is cut (%s): its complete records replay\n", path, t.cut_reason);
    int ok = tl_check(path, &t);
    tl_state s = {r, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL};
    size_t room = t.ncalls ? t.ncalls : 1; /* ops the array holds */
    uint16_t *of_thread = NULL; /* several threads: by call, its thread */
    if (ok) {
        s.ops = malloc(room * sizeof *s.ops);
        s.blocks = calloc((size_t)t.blocks + 1, sizeof *s.blocks);
        s.free_slots = malloc(((size_t)t.blocks + 1) * sizeof *s.free_slots);
        if (!s.ops || !s.blocks || !s.free_slots) ok = tl_no_memory(path, t.ncalls);
    }
    if (ok && t.threads > 1) {
        s.free_head = calloc(t.threads, sizeof *s.free_head);
        s.made_signal = calloc(room, sizeof *s.made_signal);
        s.wait_signal = calloc(room, sizeof *s.wait_signal);
        of_thread = malloc(room * sizeof *of_thread);
        if (!s.free_head || !s.made_signal || !s.wait_signal || !of_thread) ok = tl_no_memory(path, t.ncalls);
    }
    for (size_t i = 0; ok && i < t.ncalls; i++) {
        s.thread = t.calls[i].thread;
        if (of_thread) of_thread[r->nops] = (uint16_t)s.thread;
        if (tl_call(&s, &t.calls[i], &s.ops[r->nops])) r->nops++;
        else if (t.calls[i].kind < AM_REPLAY_KINDS) r->skipped[t.calls[i].kind]++;
    }
    uint32_t *made = NULL;
    if (ok) {
        /* the blocks still live at the end: of each slot, the op that made
         * its block, unless an op ended that block after; each freed after
         * the calls, in slot order */
        r->final_live = s.live;
        made = calloc((size_t)r->slots + 1, sizeof *made);
        if (!made) ok = tl_no_memory(path, r->nops);
        for (size_t i = 0; ok && i < r->nops; i++) {
            const am_replay_op *o = &s.ops[i];
            if (o->kind == AM_RP_REALLOC) made[o->old_slot] = 0;
            made[o->slot] = o->kind == AM_RP_FREE ? 0 : (uint32_t)(i + 1);
        }
        for (uint32_t k = 0; ok && k < r->slots; k++)
            if (made[k]) r->nclose++;
    }
    if (ok && r->nops + r->nclose > room) {
        am_replay_op *more = realloc(s.ops, (r->nops + r->nclose) * sizeof *s.ops);
        if (more) s.ops = more;
        else ok = tl_no_memory(path, r->nops);
    }
    for (uint32_t k = 0, c = 0; ok && k < r->slots; k++) {
        if (!made[k]) continue;
        const am_replay_op *o = &s.ops[made[k] - 1];
        am_replay_op *f = &s.ops[r->nops + c++];
        memset(f, 0, sizeof *f);
        f->kind = AM_RP_FREE;
        f->call = (uint8_t)(AM_CALL_FREE | (o->call & AM_RP_ZERO_SIZE));
        f->slot = o->slot;
        f->size = o->size;
        f->align_log2 = o->align_log2;
    }
    free(made);
    if (ok && of_thread && !tl_by_thread(&s, of_thread, t.threads)) ok = tl_no_memory(path, r->nops);
    free(of_thread);
    free(s.free_head);
    free(s.made_signal);
    free(s.wait_signal);
    free(s.blocks);
    free(s.free_slots);
    am_trace_free(&t);
    am_trace_use_memory(NULL, NULL);
    if (!ok) {
        free(s.ops);
        return 0;
    }
    r->ops = s.ops;
    r->digest = tl_digest(s.ops, r->nops);
    /* the threads' shares of the calls too: the same calls on other threads
     * are other inputs */
    for (unsigned k = 0; r->threads && k <= r->threads; k++)
        r->digest = (r->digest ^ r->thread_first[k]) * 0x100000001B3ull;
    return 1;
}

/* The workload's name in the table for --workload (trace:NAME is the workload
 * trace, named in the tables after its file), with --trace FILE decoded into
 * am_replay_current; NULL after a message (bad input). */
static const char *am_trace_setup(const char *workload, const char *path) {
    static am_replay trace;
    int replay = !strcmp(workload, "trace") || (!strncmp(workload, "trace:", 6) && workload[6]);
    if (path && !replay) {
        fprintf(stderr, "am-cell: --trace is for the workload trace (or trace:NAME), not '%s'\n", workload);
        return NULL;
    }
    if (path) {
        if (!am_trace_load(path, &trace)) return NULL;
        am_replay_current = &trace;
    }
    return replay ? "trace" : workload;
}

#endif
