/* cell_main.c: the measured process. One run of am-cell-<strategy> measures one
 * cell (strategy, workload, size): calibrate the repetitions so a sample lasts
 * at least --min-ms, warm up, take --samples samples, verify every sample's
 * checksum against the workload's reference, and print one JSON object.
 * The runner (runner/allocmark.py) starts one such process per cell. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "workload.h"

typedef struct cell_args {
    const char *workload;
    size_t size;
    unsigned samples;
    double min_ms;
    uint64_t seed;
    unsigned threads;
    double param;
    size_t limit;
    uint64_t mem_limit; /* 0: none */
    unsigned reps; /* 0: calibrate */
    int has_expect; /* expect: the reference checksum of a sample at reps, known from an earlier run */
    uint64_t expect;
    int stats_only;
    int counting_table;
} cell_args;

static void usage(FILE *out) {
    fprintf(out,
            "usage: am-cell-%s --workload NAME --size N [options]\n"
            "Measures one cell in this process and prints it as JSON.\n"
            "  --samples N    samples to take (default 9)\n"
            "  --min-ms X     shortest sample in milliseconds (default 10)\n"
            "  --seed N       seed of the workload's random choices (default 1)\n"
            "  --threads N    threads, for threaded workloads (default 1)\n"
            "  --param X      the workload's knob (see --list)\n"
            "  --limit BYTES  heap byte limit (default none)\n"
            "  --mem-limit BYTES  cap the process's address space (RLIMIT_AS): a size that\n"
            "                 does not fit fails as out of memory (not on Windows)\n"
            "  --reps N       repetitions per sample instead of calibrating\n"
            "  --expect SUM   with --reps: a sample's reference checksum, as an earlier\n"
            "                 run at the same seed and --reps printed it (\"expect\"), so\n"
            "                 the reference is not computed again\n"
            "  --stats-only   one repetition, print the allocator statistics\n"
            "  --stats        (-stats build) two repetitions through the counting wrapper:\n"
            "                 bytes and calls per owner, as tables, after each\n"
            "  --list         workloads and their sizes\n",
            AM_ROW_NAME);
}

static int parse_u64(const char *flag, const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-') goto bad;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) goto bad;
    *out = v;
    return 1;
bad:
    fprintf(stderr, "am-cell: %s needs a whole number, got '%s'\n", flag, s ? s : "");
    return 0;
}

/* a count that must be at least 1 */
static int parse_count(const char *flag, const char *s, uint64_t *out) {
    if (!parse_u64(flag, s, out)) return 0;
    if (*out) return 1;
    fprintf(stderr, "am-cell: %s must be at least 1, got '%s'\n", flag, s);
    return 0;
}

static int parse_double(const char *flag, const char *s, double *out) {
    char *end;
    if (!s || !*s) goto bad;
    *out = strtod(s, &end);
    if (*end || *out < 0) goto bad;
    return 1;
bad:
    fprintf(stderr, "am-cell: %s needs a non-negative number, got '%s'\n", flag, s ? s : "");
    return 0;
}

static void print_sizes(const char *key, const size_t *s) {
    printf("\"%s\":[", key);
    for (int i = 0; s && s[i]; i++) printf("%s%zu", i ? "," : "", s[i]);
    printf("]");
}

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

/* a JSON string: quotes and backslashes escaped, control characters dropped */
static void print_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        if ((unsigned char)*s >= 0x20) putchar(*s);
    }
    putchar('"');
}

static void list_workloads(void) {
    printf("{\"strategy\":\"%s\",\"compiler\":", AM_ROW_NAME);
    print_json_string(AM_COMPILER_VERSION);
    printf(",\"workloads\":[");
    for (int i = 0; am_workloads[i]; i++) {
        const am_workload *w = am_workloads[i];
        printf("%s{\"name\":\"%s\",\"summary\":\"%s\",\"threaded\":%d,", i ? "," : "", w->name,
               w->summary, w->threaded);
        print_sizes("sizes", w->sizes);
        printf(",");
        print_sizes("log_sizes", w->log_sizes);
        const am_sweep *sw = am_sweep_find(w->name);
        if (sw && sw->params) {
            printf(",\"params\":[");
            for (int k = 0; sw->params[k] >= 0; k++) printf("%s%g", k ? "," : "", sw->params[k]);
            printf("]");
        }
        printf(",\"thread_sweep\":%d}", sw ? sw->threads : 0);
    }
    printf("]}\n");
}

static int parse_args(int argc, char **argv, cell_args *a) {
    memset(a, 0, sizeof *a);
    a->samples = 9;
    a->min_ms = 10;
    a->seed = 1;
    a->threads = 1;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) { usage(stdout); exit(0); }
        if (!strcmp(f, "--list")) { list_workloads(); exit(0); }
        if (!strcmp(f, "--stats-only")) { a->stats_only = 1; continue; }
        if (!strcmp(f, "--stats")) { a->counting_table = 1; continue; }
        if (!v) { fprintf(stderr, "am-cell: %s needs a value\n", f); return 0; }
        i++;
        if (!strcmp(f, "--workload")) a->workload = v;
        else if (!strcmp(f, "--size")) {
            if (!parse_count(f, v, &u)) return 0;
            /* sizes count elements, bytes or MiB: past 2^40 the workloads' own
             * arithmetic (len + 1, size << 20) would overflow before any
             * allocation could fail cleanly */
            if (u > ((uint64_t)1 << 40) || (uint64_t)(size_t)u != u) {
                fprintf(stderr, "am-cell: --size %s cannot fit in memory (at most 2^40)\n", v);
                return 0;
            }
            a->size = (size_t)u;
        }
        else if (!strcmp(f, "--samples")) { if (!parse_count(f, v, &u)) return 0; a->samples = (unsigned)u; }
        else if (!strcmp(f, "--seed")) { if (!parse_u64(f, v, &u)) return 0; a->seed = u; }
        else if (!strcmp(f, "--threads")) { if (!parse_count(f, v, &u)) return 0; a->threads = (unsigned)u; }
        else if (!strcmp(f, "--limit")) { if (!parse_u64(f, v, &u)) return 0; a->limit = (size_t)u; }
        else if (!strcmp(f, "--mem-limit")) { if (!parse_count(f, v, &u)) return 0; a->mem_limit = u; }
        else if (!strcmp(f, "--reps")) { if (!parse_count(f, v, &u)) return 0; a->reps = (unsigned)u; }
        else if (!strcmp(f, "--expect")) { if (!parse_u64(f, v, &a->expect)) return 0; a->has_expect = 1; }
        else if (!strcmp(f, "--min-ms")) { if (!parse_double(f, v, &a->min_ms)) return 0; }
        else if (!strcmp(f, "--param")) { if (!parse_double(f, v, &a->param)) return 0; }
        else { fprintf(stderr, "am-cell: unknown option %s (try --help)\n", f); return 0; }
    }
    if (!a->workload || !a->size) {
        fprintf(stderr, "am-cell: --workload and --size are required (try --help)\n");
        return 0;
    }
    if (a->has_expect && !a->reps) {
        fprintf(stderr, "am-cell: --expect needs --reps (it is the checksum of that many repetitions)\n");
        return 0;
    }
    return 1;
}

/* A strategy whose free does not reuse memory is reset after each repetition,
 * inside the timed region, as a program using it would; so is one that asks for
 * it (ideal: each repetition starts from a rewound buffer). */
#if !AM_FREE_REUSES || AM_S(_RESET_EACH_REPETITION)
#define AM_RESET_EACH_REPETITION 1
#else
#define AM_RESET_EACH_REPETITION 0
#endif

/* One sample: reps repetitions with seeds seed, seed+1, ...; every sample does
 * the same work. */
static int run_sample(const am_workload *w, am_heap *h, am_job *job, uint64_t seed, unsigned reps,
                      uint64_t *checksum, uint64_t *ns) {
    uint64_t sum = 0;
    int status = AM_OK;
    uint64_t t0 = am_now_ns();
    for (unsigned r = 0; r < reps && status == AM_OK; r++) {
        job->seed = seed + r;
        sum += w->run(h, job, &status);
        if (AM_RESET_EACH_REPETITION) am_reset(h);
    }
    *ns = am_now_ns() - t0;
    *checksum = sum;
    return status;
}

static const char *status_text(int status) {
    return status == AM_ERR_OOM ? "out of memory" : "workload reported failure";
}

static void print_failure(const cell_args *a, const char *reason) {
    printf("{\"strategy\":\"%s\",\"workload\":\"%s\",\"size\":%zu,\"status\":\"failed\",\"reason\":\"%s\"}\n",
           AM_ROW_NAME, a->workload, a->size, reason);
    fflush(stdout); /* a sanitizer's exit report would otherwise discard it */
}

/* A status other than AM_OK: "skipped" (exit 0) when the workload does not
 * apply to this strategy, else a failure (exit 3). */
static int not_ok(const cell_args *a, const am_job *job, int status) {
    if (status != AM_ERR_NA) { print_failure(a, status_text(status)); return 3; }
    printf("{\"strategy\":\"%s\",\"workload\":\"%s\",\"size\":%zu,\"threads\":%u,\"param\":%g,"
           "\"status\":\"skipped\",\"reason\":",
           AM_ROW_NAME, a->workload, a->size, a->threads, a->param);
    print_json_string(job->reason ? job->reason : "not applicable");
    printf("}\n");
    fflush(stdout);
    return 0;
}

static double ops_of(const am_workload *w, const am_job *job) {
    const am_sweep *sw = am_sweep_find(w->name);
    if (sw && sw->ops) return sw->ops(job);
    return w->ops ? w->ops(job->size) : 1.0;
}

/* Test hooks, so the runner's tests can see a cell crash, hang or compute a
 * wrong checksum. AM_TEST_CRASH / AM_TEST_HANG / AM_TEST_BADSUM name the cells:
 * "[strategy/]workload[:size]". Read once, before anything is measured. */
static int test_hook(const char *var, const cell_args *a) {
    const char *v = getenv(var);
    if (!v || !*v) return 0;
    const char *slash = strchr(v, '/');
    if (slash) {
        if (strncmp(v, AM_ROW_NAME, (size_t)(slash - v)) || AM_ROW_NAME[slash - v]) return 0;
        v = slash + 1;
    }
    const char *colon = strchr(v, ':');
    size_t len = colon ? (size_t)(colon - v) : strlen(v);
    if (strncmp(v, a->workload, len) || a->workload[len]) return 0;
    return !colon || strtoull(colon + 1, NULL, 10) == a->size;
}

static void print_metrics(const am_job *job) {
    printf(",\"metrics\":{");
    for (int i = 0; i < job->metric_count; i++)
        printf("%s\"%s\":%.6g", i ? "," : "", job->metric_names[i], job->metric_values[i]);
    printf("}");
}

static int count_one(const cell_args *a, const am_workload *w, am_heap *h, am_job *job);
static int counting_table(const cell_args *a, const am_workload *w, am_job *job);
static int measure(const cell_args *a, const am_workload *w, am_heap *h, am_job *job, int bad_sum);

int main(int argc, char **argv) {
    cell_args a;
    if (!parse_args(argc, argv, &a)) return 2;
    const am_workload *w = am_workload_find(a.workload);
    if (!w) {
        fprintf(stderr, "am-cell: unknown workload '%s'; valid:", a.workload);
        for (int i = 0; am_workloads[i]; i++) fprintf(stderr, " %s", am_workloads[i]->name);
        fprintf(stderr, "\n");
        return 2;
    }
    /* before any heap exists: the runner's cap on what a cell may take */
    if (a.mem_limit && am_limit_address_space(a.mem_limit) != 0)
        fprintf(stderr, "am-cell: --mem-limit: this system cannot cap the address space; not applied\n");
    if (test_hook("AM_TEST_CRASH", &a)) raise(SIGSEGV);
    if (test_hook("AM_TEST_HANG", &a))
        for (;;) AM_CLOBBER();
    int bad_sum = test_hook("AM_TEST_BADSUM", &a);
    am_job job;
    memset(&job, 0, sizeof job);
    job.size = a.size;
    job.threads = a.threads;
    job.param = a.param;
    am_options_default(&job.options);
    job.options.limit = a.limit;
    if (a.counting_table) return counting_table(&a, w, &job);
    am_heap *h = am_create(&job.options);
    if (!h) { print_failure(&a, "heap could not be created"); return 3; }
    int rc = a.stats_only ? count_one(&a, w, h, &job) : measure(&a, w, h, &job, bad_sum);
    am_destroy(h);
    return rc;
}

/* --stats-only: one repetition on the counting build; the allocator statistics */
static int count_one(const cell_args *a, const am_workload *w, am_heap *h, am_job *job) {
    uint64_t sum, ns;
    int status = run_sample(w, h, job, a->seed, 1, &sum, &ns);
    am_stats s;
    am_get_stats(h, &s);
    if (status != AM_OK) return not_ok(a, job, status);
    printf("{\"strategy\":\"%s\",\"workload\":\"%s\",\"size\":%zu,\"status\":\"ok\",\"stats\":{"
           "\"bytes_requested\":%" PRIu64 ",\"bytes_live\":%zu,\"bytes_peak\":%zu,"
           "\"bytes_reserved\":%zu,\"reserved_peak\":%zu,\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64 "}}\n",
           AM_ROW_NAME, a->workload, a->size, s.bytes_requested, s.bytes_live, s.bytes_peak,
           s.bytes_reserved, s.reserved_peak, s.allocs, s.frees);
    return 0;
}

/* Calibrate, warm up, check, take the samples and print them; the exit code. */
static int measure(const cell_args *a, const am_workload *w, am_heap *h, am_job *job, int bad_sum) {
    uint64_t sum, ns;
    int status;
    /* calibrate: raise the repetitions until a sample lasts min_ms; these
     * runs are also the warm-up (pages touched, caches and predictors trained) */
    unsigned reps = a->reps ? a->reps : (w->reps ? w->reps(a->size) : 1);
    if (!reps) reps = 1;
    /* aim 15% above min_ms: warmed-up samples run faster than these */
    uint64_t min_ns = (uint64_t)(a->min_ms * 1e6 * 1.15);
    if (!a->reps && reps > 1) {
        /* one repetition first: a slow strategy (an ordered free list walked on
         * every free) may need far fewer than the workload's starting count,
         * and a sample need not last much longer than min_ms */
        status = run_sample(w, h, job, a->seed, 1, &sum, &ns);
        if (status != AM_OK) return not_ok(a, job, status);
        reps = am_reps_from_one(reps, ns, min_ns);
    }
    int long_enough = 0; /* runs in a row at this count that lasted min_ns */
    for (;;) {
        status = run_sample(w, h, job, a->seed, reps, &sum, &ns);
        if (status != AM_OK) return not_ok(a, job, status);
        if (a->reps || reps >= (1u << 30)) break;
        /* twice in a row: a run that touched fresh pages or grew the heap is
         * slower than the ones that follow, and one such run alone would fix
         * a count too small for min_ms */
        if (ns >= min_ns) {
            if (++long_enough == 2) break;
            continue;
        }
        long_enough = 0;
        reps = am_reps_grow(reps, ns, min_ns);
    }
    /* the last calibration run was at the final count: its checksum is the
     * reference check, and it was the last warm-up. The runner's later rounds
     * pass the first round's reference (--expect): computing it costs up to a
     * third of a process. */
    uint64_t reference = a->expect;
    if (!a->has_expect) {
        reference = 0;
        for (unsigned r = 0; r < reps; r++) {
            job->seed = a->seed + r;
            reference += w->reference(job);
        }
    }
    uint64_t expect = reference + (uint64_t)bad_sum;
    if (sum != expect) { print_failure(a, "checksum mismatch"); return 4; }

    uint64_t *samples = calloc(a->samples, sizeof *samples);
    if (!samples) { print_failure(a, "out of memory"); return 3; }
    /* the counters span every sample, checksum comparisons included: a few
     * instructions per repetition, next to the workload's own */
    const char *hw_why = NULL;
    am_hw_counters *hw = am_hw_counters_open(&hw_why);
    uint64_t instructions = 0, cycles = 0;
    if (hw) am_hw_counters_start(hw);
    int rc = 0;
    for (unsigned s = 0; s < a->samples && !rc; s++) {
        status = run_sample(w, h, job, a->seed, reps, &sum, &samples[s]);
        if (status != AM_OK) { print_failure(a, status_text(status)); rc = 3; }
        else if (sum != expect) { print_failure(a, "checksum mismatch"); rc = 4; }
    }
    if (rc) {
        am_hw_counters_close(hw);
        free(samples);
        return rc;
    }
    if (hw && am_hw_counters_stop(hw, &instructions, &cycles) != 0) {
        am_hw_counters_close(hw);
        hw = NULL;
        hw_why = "reading the counters failed";
    }
    am_stats st;
    am_get_stats(h, &st);
    printf("{\"strategy\":\"%s\",\"workload\":\"%s\",\"size\":%zu,\"status\":\"ok\","
           "\"reps\":%u,\"expect\":%" PRIu64 ",\"ops_per_rep\":%.6g,\"threads\":%u,\"param\":%g,\"timer_resolution_ns\":%g,"
           "\"peak_rss\":%zu,\"reserved_peak\":%zu,\"samples_ns\":[",
           AM_ROW_NAME, a->workload, a->size, reps, reference, ops_of(w, job), a->threads, a->param,
           am_timer_resolution_ns(), am_peak_rss_bytes(), st.reserved_peak);
    for (unsigned s = 0; s < a->samples; s++) printf("%s%" PRIu64, s ? "," : "", samples[s]);
    printf("]");
    print_metrics(job);
    if (hw) {
        double ops = (double)a->samples * reps * ops_of(w, job);
        printf(",\"hw_counters\":\"ok\",\"instructions_per_op\":%.6g,\"cycles_per_op\":%.6g",
               (double)instructions / ops, (double)cycles / ops);
        am_hw_counters_close(hw);
    } else {
        printf(",\"hw_counters\":");
        char why[200];
        snprintf(why, sizeof why, "unavailable: %s", hw_why ? hw_why : "unknown");
        print_json_string(why);
    }
    printf("}\n");
    free(samples);
    return 0;
}

/* --stats: the counting wrapper's table after a first and a second repetition
 * (the deltas of the second table are the second repetition). Every block is
 * filed under the workload's name, and deeper where the workload tags owners. */
static int counting_table(const cell_args *a, const am_workload *w, am_job *job) {
#if AM_STATS
    am_counting_start();
    am_owner_push(a->workload);
    am_heap *h = am_create(&job->options);
    if (!h) { print_failure(a, "heap could not be created"); return 3; }
    int rc = 0;
    for (unsigned r = 0; r < 2 && !rc; r++) {
        uint64_t sum, ns;
        int status = run_sample(w, h, job, a->seed + r, 1, &sum, &ns);
        uint64_t expect = w->reference(job);
        if (status != AM_OK) rc = not_ok(a, job, status) ? 3 : -1;
        else if (sum != expect) { print_failure(a, "checksum mismatch"); rc = 4; }
        else {
            char *table = am_counting_report();
            printf("%s (size %zu, threads %u, param %g), after repetition %u:\n%s\n", a->workload, a->size,
                   a->threads, a->param, r + 1, table ? table : "(out of memory)\n");
            free(table);
        }
    }
    am_destroy(h);
    if (rc == 0)
        printf("{\"strategy\":\"%s\",\"workload\":\"%s\",\"size\":%zu,\"status\":\"ok\",\"counting_errors\":%llu}\n",
               AM_ROW_NAME, a->workload, a->size, (unsigned long long)am_counting_errors());
    am_counting_stop();
    return rc < 0 ? 0 : rc;
#else
    (void)w; (void)job;
    print_failure(a, "--stats needs the counting build (am-cell-<row>-stats)");
    return 2;
#endif
}
