/* trace_load.h: a recorded trace read (recorder/trace_read.h) and decoded into
 * the replay's array (workloads/replay.h), once, before any heap exists and
 * before anything is timed. For cell_main.c only. It refuses, with a message
 * naming the limit, what the replay cannot hold: more than AM_REPLAY_MAX_CALLS
 * calls, a block of 4 GiB or more, a trace of several threads. */
#ifndef AM_CELL_TRACE_LOAD_H
#define AM_CELL_TRACE_LOAD_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../recorder/trace_read.h"
#include "replay.h"

/* what the decoding keeps of each block, by its dense id */
typedef struct tl_block {
    uint32_t slot, size;
    uint8_t align_log2;
} tl_block;

typedef struct tl_state {
    am_replay *r;
    am_replay_op *ops;
    tl_block *blocks;
    uint32_t *free_slots; /* slots whose block has ended, reused last in, first out */
    uint32_t nfree;
    uint64_t live;
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
    b->slot = s->nfree ? s->free_slots[--s->nfree] : s->r->slots++;
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

static void tl_end(tl_state *s, uint64_t id) {
    s->free_slots[s->nfree++] = s->blocks[id].slot;
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
    if (t->threads > 1) {
        fprintf(stderr, "am-cell: %s: a trace of %" PRIu32 " threads; the replay runs one-thread traces only\n",
                path, t->threads);
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

/* The trace at path decoded into *r (its arrays malloc'd for the process's
 * life); 0 after a message (bad input: exit 2). */
static int am_trace_load(const char *path, am_replay *r) {
    am_trace t;
    char err[512];
    memset(r, 0, sizeof *r);
    if (am_trace_read(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "am-cell: %s\n", err);
        return 0;
    }
    if (t.cut) fprintf(stderr, "am-cell: %s is cut (%s): its complete records replay\n", path, t.cut_reason);
    int ok = tl_check(path, &t);
    tl_state s = {r, NULL, NULL, NULL, 0, 0};
    size_t room = t.ncalls ? t.ncalls : 1; /* ops the array holds */
    if (ok) {
        s.ops = malloc(room * sizeof *s.ops);
        s.blocks = calloc((size_t)t.blocks + 1, sizeof *s.blocks);
        s.free_slots = malloc(((size_t)t.blocks + 1) * sizeof *s.free_slots);
        if (!s.ops || !s.blocks || !s.free_slots) ok = tl_no_memory(path, t.ncalls);
    }
    for (size_t i = 0; ok && i < t.ncalls; i++) {
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
    free(s.blocks);
    free(s.free_slots);
    am_trace_free(&t);
    if (!ok) {
        free(s.ops);
        return 0;
    }
    r->ops = s.ops;
    r->digest = tl_digest(s.ops, r->nops);
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
