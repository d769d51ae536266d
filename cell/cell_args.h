/* cell_args.h: the command line of a cell (am-cell-<row>): its options, their
 * defaults, and the checks that turn bad input into a message and exit status
 * 2 before anything runs. For cell_main.c only. */
#ifndef AM_CELL_ARGS_H
#define AM_CELL_ARGS_H

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cell_args {
    const char *workload;
    const char *trace;  /* --trace FILE: the recorded trace the workload trace replays */
    size_t size;
    unsigned samples;
    double min_ms;
    uint64_t seed;
    unsigned threads;
    double param;
    size_t limit;
    uint64_t mem_limit; /* 0: none */
    unsigned reps;      /* 0: calibrate */
    unsigned partner_reps; /* the partner's; 0: calibrate */
    int alone;          /* time the row without its partner */
    unsigned age;       /* repetitions run on a heap before anything is measured on it */
    int has_age;        /* --age given; else the workload's own (am_workload.age) */
    int has_expect;     /* expect: a sample's oracle checksum at reps, from an earlier run */
    uint64_t expect;
    int has_work_loops; /* work_loops: contention's loop count per operation for W */
    uint64_t work_loops;
    int has_place;      /* --place N: the visit's placement (visit_place.h) */
    uint64_t place;
    int stats_only;
    int counting_table;
    int list;
} cell_args;

static void cell_usage(FILE *out, const char *partner) {
    fprintf(out,
            "usage: am-cell-%s --workload NAME --size N [options]\n"
            "Measures one cell in this process and prints it as JSON. A one-thread cell\n"
            "is timed beside its partner row, %s, compiled into this executable: their\n"
            "samples alternate, and the JSON line has both (partner_samples_ns).\n"
            "  --trace FILE   the recorded trace (make record, docs/trace.md) that the\n"
            "                 workload `trace` replays: --workload trace:NAME (NAME, the\n"
            "                 trace's name in tables: its file's name without extension)\n"
            "                 or --workload trace, and --size 1. Decoded before any heap\n"
            "                 exists; one-thread traces of at most 2^27 calls\n"
            "  --samples N    samples to take (default 9)\n"
            "  --min-ms X     shortest sample in milliseconds (default 10)\n"
            "  --seed N       first repetition seed (default 1): each side cycles through\n"
            "                 the seeds N, N+1, ..., a sample going on where the last\n"
            "                 stopped; at least the workload's (--list: \"seeds\"), more\n"
            "                 where its values are random, so a cycle is not learnt\n"
            "  --threads N    threads, for threaded workloads (default 1)\n"
            "  --param X      the workload's knob (see --list)\n"
            "  --work-loops N contention: loops of the work function per operation, the\n"
            "                 same for every row (default: measured in this process, X ns)\n"
            "  --limit BYTES  heap byte limit (default none)\n"
            "  --mem-limit BYTES  cap the process's address space (RLIMIT_AS): a size that\n"
            "                 does not fit fails as out of memory (not on Windows)\n"
            "  --place N      before anything is allocated, move the heap and the mappings\n"
            "                 as placement N of one fixed sequence does (Linux; runs of\n"
            "                 --layout shifted give visit N placement N)\n"
            "  --reps N       repetitions per sample instead of calibrating\n"
            "  --partner-reps N  the same for the partner's samples\n"
            "  --alone        time the row without its partner\n"
            "  --age N        first run N repetitions on the heap, untimed, so that it is\n"
            "                 measured in the state a long-running program's heap has\n"
            "                 (a Boost pool's free list keeps fragmenting); default: the\n"
            "                 workload's (--list shows it; 0 for most)\n"
            "  --expect SUM   the oracle's checksum of one cycle of the seeds, as an\n"
            "                 earlier run at the same seed printed it (\"expect\"): the\n"
            "                 cell fails if its own oracle differs\n"
            "  --stats-only   one repetition, print the allocator statistics\n"
            "  --stats        (-stats build) two repetitions through the counting wrapper:\n"
            "                 bytes and calls per owner, as tables, after each\n"
            "  --list         workloads and their sizes\n",
            AM_ROW_NAME, partner);
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

/* a count from 1 to max */
static int parse_count(const char *flag, const char *s, uint64_t max, uint64_t *out) {
    if (!parse_u64(flag, s, out)) return 0;
    if (*out >= 1 && *out <= max) return 1;
    fprintf(stderr, "am-cell: %s must be from 1 to %" PRIu64 ", got '%s'\n", flag, max, s);
    return 0;
}

static int parse_double(const char *flag, const char *s, double *out) {
    char *end;
    if (!s || !*s) goto bad;
    *out = strtod(s, &end);
    if (*end || !(*out >= 0) || *out > 1e300) goto bad;
    return 1;
bad:
    fprintf(stderr, "am-cell: %s needs a non-negative number, got '%s'\n", flag, s ? s : "");
    return 0;
}

/* the options followed by a value: an option not named here is unknown,
 * whether or not something follows it */
static int takes_value(const char *f) {
    static const char *const names[] = {"--workload", "--size", "--samples", "--seed", "--threads",
                                        "--limit", "--mem-limit", "--reps", "--age", "--expect",
                                        "--work-loops", "--min-ms", "--param", "--partner-reps", "--trace", "--place"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(f, names[i])) return 1;
    return 0;
}

/* 1 when the cell may run; 0 after a message (bad input) */
static int parse_args(int argc, char **argv, cell_args *a, const char *partner) {
    memset(a, 0, sizeof *a);
    a->samples = 9;
    a->min_ms = 10;
    a->seed = 1;
    a->threads = 1;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t u;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) { cell_usage(stdout, partner); exit(0); }
        if (!strcmp(f, "--list")) { a->list = 1; return 1; }
        if (!strcmp(f, "--stats-only")) { a->stats_only = 1; continue; }
        if (!strcmp(f, "--stats")) { a->counting_table = 1; continue; }
        if (!strcmp(f, "--alone")) { a->alone = 1; continue; }
        if (!takes_value(f)) { fprintf(stderr, "am-cell: unknown option %s (try --help)\n", f); return 0; }
        if (!v) { fprintf(stderr, "am-cell: %s needs a value\n", f); return 0; }
        i++;
        if (!strcmp(f, "--workload")) a->workload = v;
        else if (!strcmp(f, "--trace")) a->trace = v;
        else if (!strcmp(f, "--size")) {
            if (!parse_count(f, v, UINT64_MAX, &u)) return 0;
            /* sizes count elements, bytes or MiB: past 2^40 the workloads' own
             * arithmetic (len + 1, size << 20) would overflow before any
             * allocation could fail cleanly */
            if (u > ((uint64_t)1 << 40) || (uint64_t)(size_t)u != u) {
                fprintf(stderr, "am-cell: --size %s cannot fit in memory (at most 2^40)\n", v);
                return 0;
            }
            a->size = (size_t)u;
        }
        else if (!strcmp(f, "--samples")) { if (!parse_count(f, v, UINT32_MAX, &u)) return 0; a->samples = (unsigned)u; }
        else if (!strcmp(f, "--seed")) { if (!parse_u64(f, v, &u)) return 0; a->seed = u; }
        else if (!strcmp(f, "--threads")) { if (!parse_count(f, v, UINT32_MAX, &u)) return 0; a->threads = (unsigned)u; }
        else if (!strcmp(f, "--limit")) { if (!parse_u64(f, v, &u)) return 0; a->limit = (size_t)u; }
        else if (!strcmp(f, "--mem-limit")) { if (!parse_count(f, v, UINT64_MAX, &u)) return 0; a->mem_limit = u; }
        else if (!strcmp(f, "--reps")) { if (!parse_count(f, v, UINT32_MAX, &u)) return 0; a->reps = (unsigned)u; }
        else if (!strcmp(f, "--partner-reps")) {
            if (!parse_count(f, v, UINT32_MAX, &u)) return 0;
            a->partner_reps = (unsigned)u;
        }
        else if (!strcmp(f, "--age")) {
            if (!parse_u64(f, v, &u)) return 0;
            if (u > (1u << 30)) { fprintf(stderr, "am-cell: --age %s: at most 2^30\n", v); return 0; }
            a->age = (unsigned)u;
            a->has_age = 1;
        }
        else if (!strcmp(f, "--place")) { if (!parse_u64(f, v, &a->place)) return 0; a->has_place = 1; }
        else if (!strcmp(f, "--expect")) { if (!parse_u64(f, v, &a->expect)) return 0; a->has_expect = 1; }
        else if (!strcmp(f, "--work-loops")) { if (!parse_u64(f, v, &a->work_loops)) return 0; a->has_work_loops = 1; }
        else if (!strcmp(f, "--min-ms")) { if (!parse_double(f, v, &a->min_ms)) return 0; }
        else if (!strcmp(f, "--param")) { if (!parse_double(f, v, &a->param)) return 0; }
        else { fprintf(stderr, "am-cell: unknown option %s (try --help)\n", f); return 0; }
    }
    if (!a->workload || !a->size) {
        fprintf(stderr, "am-cell: --workload and --size are required (try --help)\n");
        return 0;
    }
    if (a->partner_reps && !a->reps) {
        fprintf(stderr, "am-cell: --partner-reps needs --reps (both counts are given, or both calibrated)\n");
        return 0;
    }
    if (a->has_expect && !a->reps) {
        fprintf(stderr, "am-cell: --expect needs --reps (it is the checksum of that many repetitions)\n");
        return 0;
    }
    return 1;
}

#endif
