/* registry.c: the table of workloads built from workloads.def, and the shared sweeps. */
#include "workload.h"
#include <string.h>

#define AM_WORKLOAD(name) extern const am_workload am_workload_##name;
#define AM_SWEEP(name) extern const am_sweep am_sweep_##name;
#define AM_SUITE(name)
#include "workloads.def"
#undef AM_WORKLOAD
#undef AM_SWEEP
#undef AM_SUITE

#define AM_WORKLOAD(name) &am_workload_##name,
#define AM_SWEEP(name)
#define AM_SUITE(name)
const am_workload *const am_workloads[] = {
#include "workloads.def"
    NULL};
#undef AM_WORKLOAD
#undef AM_SWEEP
#undef AM_SUITE

#define AM_WORKLOAD(name)
#define AM_SWEEP(name) &am_sweep_##name,
#define AM_SUITE(name)
static const am_sweep *const am_sweeps[] = {
#include "workloads.def"
    NULL};
#undef AM_WORKLOAD
#undef AM_SWEEP
#undef AM_SUITE

/* workloads.def in order, with its suite lines: a workload belongs to the
 * suite of the last AM_SUITE line above it ("default" above the first) */
typedef struct suite_mark {
    const am_workload *workload;
    const char *suite;
} suite_mark;
#define AM_WORKLOAD(name) {&am_workload_##name, NULL},
#define AM_SWEEP(name)
#define AM_SUITE(name) {NULL, #name},
static const suite_mark suite_marks[] = {
#include "workloads.def"
    {NULL, NULL}};
#undef AM_WORKLOAD
#undef AM_SWEEP
#undef AM_SUITE

const char *am_workload_suite(const am_workload *w) {
    const char *suite = "default";
    for (const suite_mark *m = suite_marks; m->workload || m->suite; m++) {
        if (m->suite) suite = m->suite;
        else if (m->workload == w) return suite;
    }
    return suite;
}

const am_sweep *am_sweep_find(const char *workload) {
    for (const am_sweep *const *s = am_sweeps; *s; s++)
        if (strcmp((*s)->workload, workload) == 0) return *s;
    return NULL;
}

const am_workload *am_workload_find(const char *name) {
    for (const am_workload *const *w = am_workloads; *w; w++)
        if (strcmp((*w)->name, name) == 0) return *w;
    return NULL;
}

/* Mapping the bytes, untouched, asks the system what the workload's first
 * allocations would: a size past memory fails at once, as in its run, instead
 * of after a loop as long as the size. Before any heap exists, and released. */
int am_workload_fits(const am_workload *w, const am_job *job) {
    uint64_t need = w->min_bytes ? w->min_bytes(job) : 0;
    if (need == 0) return 1;
    if (need > SIZE_MAX) return 0;
    void *p = am_vm_reserve((size_t)need);
    if (!p) return 0;
    am_vm_release(p, (size_t)need);
    return 1;
}

void am_job_metric(am_job *job, const char *name, double value) {
    for (int i = 0; i < job->metric_count; i++)
        if (strcmp(job->metric_names[i], name) == 0) { job->metric_values[i] = value; return; }
    if (job->metric_count == AM_MAX_METRICS) return;
    job->metric_names[job->metric_count] = name;
    job->metric_values[job->metric_count++] = value;
}

const size_t am_sizes_linear[] = {10, 210, 410, 610, 810, 1010, 1210, 1410, 1610, 1810, 0};
const size_t am_sizes_linear_sort[] = {10, 110, 210, 310, 410, 510, 610, 710, 810, 910, 0};
const size_t am_sizes_log[] = {10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000, 300000, 1000000, 0};
