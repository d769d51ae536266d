/* cell_list.h: a cell's answer to --list: its row, the compiler that built it,
 * and every workload with its suite, sizes, params, thread sweep, repetition
 * seeds and the runner's extra tables and choices, as one JSON object. For cell_main.c only. */
#ifndef AM_CELL_LIST_H
#define AM_CELL_LIST_H

#include "cell_json.h"
#include "count_start.h"
#include "workload.h"

/* what built this binary, for the run's record */
#if defined(__clang__) || defined(__INTEL_COMPILER)
#define AM_COMPILER_VERSION __VERSION__
#elif defined(__GNUC__)
#define AM_COMPILER_VERSION "gcc " __VERSION__
#elif defined(_MSC_FULL_VER)
#define AM_COMPILER_VERSION "MSVC " AM_STR(_MSC_FULL_VER)
#else
#define AM_COMPILER_VERSION "unknown"
#endif

static void json_sizes(const char *key, const size_t *s) {
    json_key(key);
    json_open('[');
    for (int i = 0; s && s[i]; i++) {
        json_item();
        printf("%zu", s[i]);
    }
    json_close(']');
}

static void json_params(const char *key, const double *p) {
    json_key(key);
    json_open('[');
    for (int k = 0; p && p[k] >= 0; k++) {
        json_item();
        json_num_value(p[k]);
    }
    json_close(']');
}

/* a string field, or null where the workload has none */
static void json_str_or_null(const char *key, const char *v) {
    if (v) {
        json_str(key, v);
    } else {
        json_key(key);
        printf("null");
    }
}

static void list_workloads(void) {
    json_open('{');
    json_str("strategy", AM_ROW_NAME);
    json_str("compiler", AM_COMPILER_VERSION);
    json_u64("count_start", AM_COUNT_START); /* count_start.h */
    json_key("workloads");
    json_open('[');
    for (int i = 0; am_workloads[i]; i++) {
        const am_workload *w = am_workloads[i];
        const am_sweep *sw = am_sweep_find(w->name);
        json_item();
        json_open('{');
        json_str("name", w->name);
        json_str("summary", w->summary);
        json_str("suite", am_workload_suite(w));
        json_u64("threaded", (uint64_t)w->threaded);
        json_sizes("sizes", w->sizes);
        json_sizes("log_sizes", w->log_sizes);
        if (sw && sw->params) json_params("params", sw->params);
        if (sw && sw->quick_params) json_params("quick_params", sw->quick_params);
        json_u64("thread_sweep", (uint64_t)(sw ? sw->threads : 0));
        json_u64("seeds", am_seed_count(w));
        json_u64("age", w->age);
        json_str_or_null("versus", w->versus);
        json_str_or_null("bench_lines", w->bench_lines);
        json_u64("slowdown", (uint64_t)w->slowdown);
        json_u64("hyperfine", w->hyperfine);
        json_str_or_null("dimension", w->dimension);
        json_close('}');
    }
    json_close(']');
    json_close('}');
}

#endif
