/* partner_row.c: the partner's side of partner.h, the last file of a partner
 * unit (row_unit.c with AM_PARTNER_BUILD). Its heap, its job and its loop are
 * the partner strategy's own: nothing here is shared with the cell's row. */
#include <stdlib.h>

#include "partner.h"
#include "replay.h"
#include "sample.h"

typedef struct partner_state {
    const am_workload *w;
    am_job job;
    uint64_t seed;
    unsigned seeds, age;
    am_heap *h;
} partner_state;

/* The partner's code sits after the cell's own, whose length differs from row
 * to row: aligned to a page, its loops keep one alignment in every cell, and
 * so its time (a loop's alignment within 32 or 64 bytes moved the partner's
 * time by 5% from one cell to another: runner/partner_check.py). */
AM_PAGE_ALIGNED_CODE static void *partner_open(const am_partner_job *pj) {
    const am_workload *w = am_workload_find(pj->workload);
    am_replay_current = pj->trace; /* this unit's own name for the one decoded trace */
    if (!w || w->threaded) return NULL;
    partner_state *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->w = w;
    p->seed = pj->seed;
    p->seeds = am_seed_cycle(w, pj->size);
    p->age = pj->age;
    p->job.size = pj->size;
    p->job.threads = 1;
    p->job.param = pj->param;
    p->job.work_loops = pj->work_loops;
    p->job.has_work_loops = pj->has_work_loops;
    am_options_default(&p->job.options);
    p->job.options.limit = pj->limit;
    return p;
}

static int partner_fresh_heap(void *v) {
    partner_state *p = v;
    if (p->h) am_destroy(p->h);
    p->h = am_create(&p->job.options);
    if (!p->h) return AM_ERR_OOM;
    if (!p->age) return AM_OK;
    uint64_t sum, ns;
    p->job.aging = 1;
    int status = am_sample_run(p->w, p->h, &p->job, p->seed, p->seeds, 0, p->age, &sum, &ns);
    p->job.aging = 0;
    return status;
}

static int partner_sample(void *v, unsigned first, unsigned reps, uint64_t *checksum, uint64_t *ns) {
    partner_state *p = v;
    return am_sample_run(p->w, p->h, &p->job, p->seed, p->seeds, first, reps, checksum, ns);
}

static void partner_close(void *v) {
    partner_state *p = v;
    if (!p) return;
    if (p->h) am_destroy(p->h);
    free(p);
}

const am_partner_row am_partner = {AM_ROW_NAME, partner_open, partner_fresh_heap, partner_sample, partner_close};
