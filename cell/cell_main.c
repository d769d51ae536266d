/* cell_main.c: the measured process. One run of am-cell-<row> measures one cell
 * (row, workload, size, threads, param) and prints it as one JSON object:
 *   oracle     the workload's oracle checksum for each repetition seed,
 *              computed before any heap exists, so it cannot disturb one;
 *   calibrate  without --reps: the repetitions that make a sample last
 *              --min-ms, on a heap of its own that is destroyed afterwards;
 *              the same for the partner row (partner.h) without --partner-reps;
 *   warm up    each seed once on each measured heap, its checksum checked;
 *   sample     --samples timed samples, each checked, with their page faults;
 *              a one-thread cell takes each beside one of its partner's, in
 *              the order row-partner, partner-row, row-partner ... (ABBA), so
 *              that a drift within the process weighs on both alike;
 *   report     the JSON line.
 * The runner (runner/allocmark.py) starts one such process per visit to a cell;
 * later visits pass the first one's --reps, and then do exactly what it did
 * after calibrating. Not a benchmark loop for anything but a workload. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "cell_args.h"
#include "cell_json.h"
#include "cell_list.h"
#include "count_start.h"
#include "inputs.h"
#include "partner.h"
#include "sample.h"
#include "trace_load.h"
#include "visit_place.h"
#include "workload.h"

#define AM_MAX_REPS (1u << 30)

/* One cell's measurement, from its oracle to its samples. */
typedef struct cell {
    const cell_args *a;
    const am_workload *w;
    am_job job;
    unsigned seeds;      /* the seed cycle (am_seed_cycle): seeds a->seed ... a->seed + seeds - 1 */
    uint64_t *oracle_sums; /* the oracle's checksum of each seed */
    unsigned reps;
    unsigned samples;    /* this visit's: --samples, fewer where a repetition is long */
    uint64_t expect;     /* the oracle's checksum of one cycle: the sum of oracle_sums */
    uint64_t bad_sum;    /* AM_TEST_BADSUM: 1, so that every checksum disagrees */
    uint64_t *ns, *minor_faults, *major_faults; /* per sample */
    void *partner;       /* NULL: timed alone (--alone, a threaded cell) */
    const char *alone_why;
    unsigned partner_reps;
    uint64_t *partner_ns; /* per sample, the partner's beside the row's */
    am_hw_counters *hw;
    const char *hw_why;
    uint64_t instructions, cycles;
    size_t reserved_peak;
    int finished;        /* the cell's line is printed: exit_code is the answer */
    int exit_code;
} cell;

/* ---------------------------------------------------------------- output */

/* every line starts with what cell it is */
static void json_head(const cell_args *a, const char *status) {
    json_open('{');
    json_str("strategy", AM_ROW_NAME);
    json_str("workload", a->workload);
    json_u64("size", a->size);
    json_u64("threads", a->threads);
    json_num("param", a->param);
    json_str("status", status);
}

/* The cell ends here with a failure: its line, and the exit code (3: could
 * not run, 4: a wrong checksum). */
static void fail(cell *c, const char *reason, int exit_code) {
    json_head(c->a, "failed");
    json_str("reason", reason);
    json_close('}');
    c->finished = 1;
    c->exit_code = exit_code;
}

static const char *status_text(int status) {
    return status == AM_ERR_OOM ? "out of memory" : "workload reported failure";
}

/* The partner's status other than AM_OK fails the cell: both rows must run. */
static void partner_failed(cell *c, int status) {
    char why[120];
    snprintf(why, sizeof why, "partner %s: %s", am_partner.name, status_text(status));
    fail(c, why, 3);
}

/* A workload's status other than AM_OK ends the cell: "skipped" (exit 0)
 * when the workload does not apply to this strategy, else a failure (exit 3). */
static void not_ok(cell *c, int status) {
    if (status != AM_ERR_NA) { fail(c, status_text(status), 3); return; }
    json_head(c->a, "skipped");
    json_str("reason", c->job.reason ? c->job.reason : "not applicable");
    json_close('}');
    c->finished = 1;
    c->exit_code = 0;
}

static double ops_of(const am_workload *w, const am_job *job) {
    const am_sweep *sw = am_sweep_find(w->name);
    if (sw && sw->ops) return sw->ops(job);
    return w->ops ? w->ops(job->size) : 1.0;
}

/* ---------------------------------------------------------------- the inputs */

static uint64_t inputs_digest(const cell *c) {
    uint64_t h = am_inputs_digest(c->w->name, &c->job, c->a->age, c->a->seed, c->seeds, c->oracle_sums);
    /* a replay's inputs are the trace's calls, all of them */
    if (am_replay_current) h = am_fnv(h, &am_replay_current->digest, sizeof am_replay_current->digest);
    return h;
}

/* Before any heap: the oracle of each repetition seed (for a threaded
 * workload also the graph or shape it builds once per process). */
static int consult_oracle(cell *c) {
    c->oracle_sums = calloc(c->seeds, sizeof *c->oracle_sums);
    if (!c->oracle_sums) return 0;
    for (unsigned k = 0; k < c->seeds; k++) {
        c->job.seed = c->a->seed + k;
        c->oracle_sums[k] = c->w->oracle(&c->job);
    }
    return 1;
}

static uint64_t cycle_sum(const cell *c) {
    uint64_t cycle = 0;
    for (unsigned k = 0; k < c->seeds; k++) cycle += c->oracle_sums[k];
    return cycle;
}

/* the checksum of reps repetitions from the cycle's first-th seed */
static uint64_t expected_sum(const cell *c, unsigned first, unsigned reps) {
    uint64_t sum = c->expect * (reps / c->seeds);
    for (unsigned i = 0, k = first % c->seeds; i < reps % c->seeds; i++) {
        sum += c->oracle_sums[k];
        if (++k == c->seeds) k = 0;
    }
    return sum;
}

/* ---------------------------------------------------------------- running */

/* One sample of the cell's own row (sample.h). Never inlined: a count run
 * (runner/counts.py) counts inside this function alone, by its name. */
static AM_NOINLINE int run_sample(const cell *c, am_heap *h, am_job *job, unsigned first, unsigned reps,
                                   uint64_t *checksum, uint64_t *ns) {
    return am_sample_run(c->w, h, job, c->a->seed, c->seeds, first, reps, checksum, ns);
}

/* --age: a new heap first runs that many repetitions, untimed, so that it is
 * measured in the state a long-running program's heap has. 0 when it did;
 * else the cell has ended. */
static int age(cell *c, am_heap *h) {
    uint64_t sum, ns;
    if (!c->a->age) return 0;
    c->job.aging = 1;
    int status = run_sample(c, h, &c->job, 0, c->a->age, &sum, &ns);
    c->job.aging = 0;
    if (status != AM_OK) not_ok(c, status);
    return c->finished;
}

static unsigned reps_in_range(double reps) {
    if (reps >= AM_MAX_REPS) reps = AM_MAX_REPS;
    return reps < 1 ? 1 : (unsigned)reps;
}

/* One of the two rows a cell times: its own (heap h) or its partner. */
typedef struct side {
    cell *c;
    am_heap *h;
    void *partner;
    unsigned untimed_reps; /* its warm-up's and the repetitions before its samples */
    unsigned next;         /* the seed its next repetition runs, in the cycle: each
                            * sample goes on where the side's last stopped */
    unsigned first;        /* the seed its last sample began with */
} side;

/* A new heap for the side, aged, the previous one destroyed; 0 when it has
 * one, else the cell has ended. */
static int fresh_heap(side *sd) {
    cell *c = sd->c;
    if (sd->partner) {
        int status = am_partner.fresh_heap(sd->partner);
        if (status != AM_OK) partner_failed(c, status);
        return c->finished;
    }
    if (sd->h) am_destroy(sd->h);
    sd->h = am_create(&c->job.options);
    if (!sd->h) { fail(c, "heap could not be created", 3); return 1; }
    return age(c, sd->h);
}

static void drop_heap(side *sd) {
    if (sd->h) am_destroy(sd->h);
    sd->h = NULL;
}

static int side_sample(side *sd, unsigned reps, uint64_t *sum, uint64_t *ns) {
    sd->first = sd->next;
    sd->next = (unsigned)((sd->next + (uint64_t)reps) % sd->c->seeds);
    if (sd->partner) return am_partner.sample(sd->partner, sd->first, reps, sum, ns);
    return run_sample(sd->c, sd->h, &sd->c->job, sd->first, reps, sum, ns);
}

/* A sample's status and checksum: 0 when both are right, else the cell ends. */
static int check_sample(side *sd, int status, uint64_t sum, unsigned reps) {
    cell *c = sd->c;
    if (status != AM_OK) {
        if (sd->partner) partner_failed(c, status);
        else not_ok(c, status);
    } else if (sum != expected_sum(c, sd->first, reps) + c->bad_sum) {
        fail(c, sd->partner ? "partner checksum mismatch" : "checksum mismatch", 4);
    }
    return c->finished;
}

/* Without --reps: raise the repetitions until a sample lasts min_ms twice in
 * a row, on a heap made for it and destroyed after, so that the measured heap
 * starts as it does when the count is given. *last_ns: the last sample's. */
static unsigned calibrate(side *sd, uint64_t *last_ns) {
    cell *c = sd->c;
    if (fresh_heap(sd)) return 0;
    uint64_t sum, ns = 0;
    /* aim 15% above min_ms: warmed-up samples run faster than these */
    uint64_t min_ns = (uint64_t)(c->a->min_ms * 1e6 * 1.15);
    unsigned reps = reps_in_range(c->w->reps ? c->w->reps(c->a->size) : 1);
    int long_enough = 0;
    if (reps > 1) {
        /* one repetition first: a slow strategy (an ordered free list walked on
         * every free) may need far fewer than the workload's starting count */
        int status = side_sample(sd, 1, &sum, &ns);
        if (check_sample(sd, status, sum, 1)) ns = 0;
        else if (am_one_rep_settles(1, ns, min_ns)) reps = 1, long_enough = 2;
        else reps = reps_in_range(am_reps_from_one(reps, ns, min_ns));
    }
    while (!c->finished && long_enough < 2) {
        int status = side_sample(sd, reps, &sum, &ns);
        if (check_sample(sd, status, sum, reps)) break;
        if (reps >= AM_MAX_REPS) break;
        /* twice in a row: a run that touched fresh pages or grew the heap is
         * slower than the ones that follow, and one such run alone would fix
         * a count too small for min_ms */
        if (ns >= min_ns) long_enough += am_one_rep_settles(reps, ns, min_ns) ? 2 : 1;
        else {
            long_enough = 0;
            reps = reps_in_range(am_reps_grow(reps, ns, min_ns));
        }
    }
    drop_heap(sd);
    *last_ns = ns;
    return reps;
}

/* One sample of the row, with its page faults and counters around it. */
static void row_sample(side *sd, unsigned s) {
    cell *c = sd->c;
    uint64_t minor0 = 0, major0 = 0, minor1 = 0, major1 = 0, sum, insns, cycles;
    am_page_faults(&minor0, &major0);
    if (c->hw) am_hw_counters_start(c->hw);
    sd->first = sd->next;
    sd->next = (unsigned)((sd->next + (uint64_t)c->reps) % c->seeds);
    int status = run_sample(c, sd->h, &c->job, sd->first, c->reps, &sum, &c->ns[s]);
    if (c->hw) {
        if (am_hw_counters_stop(c->hw, &insns, &cycles) == 0) {
            c->instructions += insns;
            c->cycles += cycles;
        } else {
            am_hw_counters_close(c->hw);
            c->hw = NULL;
            c->hw_why = "reading the counters failed";
        }
    }
    am_page_faults(&minor1, &major1);
    c->minor_faults[s] = minor1 - minor0;
    c->major_faults[s] = major1 - major0;
    if (status != AM_OK) fail(c, status_text(status), 3);
    else if (sum != expected_sum(c, sd->first, c->reps) + c->bad_sum) fail(c, "checksum mismatch", 4);
}

static void partner_sample(side *sd, unsigned s) {
    uint64_t sum;
    int status = side_sample(sd, sd->c->partner_reps, &sum, &sd->c->partner_ns[s]);
    check_sample(sd, status, sum, sd->c->partner_reps);
}

/* After the other row's sample, half a sample untimed (am_settle_reps): that
 * sample has just run over the same caches and TLB, and a row timed alone
 * starts each sample warm from its own last one (runner/partner_check.py
 * measured monotonic 12% slower beside its partner on alloc_bulk with none). */
static int rewarm(side *sd) {
    uint64_t sum, ns;
    unsigned reps = am_settle_reps(sd->partner ? sd->c->partner_reps : sd->c->reps);
    sd->untimed_reps += reps;
    int status = side_sample(sd, reps, &sum, &ns);
    if (status != AM_OK) check_sample(sd, status, sum, reps);
    return sd->c->finished;
}

/* The samples then start the cycle from its first seed, so that a count
 * run's one sample (runner/counts.py) runs the inputs of the warm-up. */
static int warm_up(side *sd, unsigned reps) {
    uint64_t sum, ns;
    sd->untimed_reps += reps;
    int status = side_sample(sd, reps, &sum, &ns);
    sd->next = 0;
    return check_sample(sd, status, sum, reps);
}

/* Sample s of one side, after untimed repetitions when the other side ran
 * last (*last: the side whose repetition ran last). */
static void side_turn(side *sd, side *row, side **last, unsigned s) {
    if (*last != sd && rewarm(sd)) return;
    *last = sd;
    if (sd == row) row_sample(sd, s);
    else partner_sample(sd, s);
}

/* A warm-up on each measured heap, then the timed samples, each checked;
 * the row's and the partner's alternate, row first in even pairs. The
 * warm-up runs each of the workload's own seeds once, not a whole sample: a
 * fresh heap reaches the size it keeps in its first repetition of an input, and a visit's samples
 * come after it (docs/measurements.md: the first timed sample is no slower
 * than after a whole sample's warm-up). The partner warms up first, so that
 * the row's first sample follows its own warm-up, as it does timed alone: a
 * repetition more before it would be a third of a one-sample visit for a row
 * whose repetition lasts 100 ms. */
static void take_samples(cell *c, side *row, side *partner) {
    c->ns = calloc(c->samples, sizeof *c->ns);
    c->minor_faults = calloc(c->samples, sizeof *c->minor_faults);
    c->major_faults = calloc(c->samples, sizeof *c->major_faults);
    c->partner_ns = calloc(c->samples, sizeof *c->partner_ns);
    if (!c->ns || !c->minor_faults || !c->major_faults || !c->partner_ns) { fail(c, "out of memory", 3); return; }
    if (fresh_heap(row) || (c->partner && fresh_heap(partner))) return;
    am_count_start();
    unsigned warm = am_seed_count(c->w);
    if ((c->partner && warm_up(partner, warm)) || warm_up(row, warm)) return;
    c->hw = am_hw_counters_open(&c->hw_why);
    side *last = row;
    for (unsigned s = 0; s < c->samples && !c->finished; s++) {
        if (!c->partner) {
            row_sample(row, s);
            continue;
        }
        /* ABBA: row-partner, partner-row, ... */
        side *first = s % 2 == 0 ? row : partner, *second = s % 2 == 0 ? partner : row;
        side_turn(first, row, &last, s);
        if (!c->finished) side_turn(second, row, &last, s);
    }
    am_stats st;
    am_get_stats(row->h, &st);
    c->reserved_peak = st.reserved_peak;
}

static void report(const cell *c, const side *row, const side *partner) {
    const cell_args *a = c->a;
    double ops = ops_of(c->w, &c->job);
    char digest[17];
    snprintf(digest, sizeof digest, "%016" PRIx64, inputs_digest(c));
    char lib[256]; /* which malloc served the cell: a system-* row checks it is its library */
    am_malloc_library(lib, sizeof lib);
    json_head(a, "ok");
    json_u64("reps", c->reps);
    json_u64("age", a->age);
    json_str("malloc", lib);
    int randomized = am_layout_randomized();
    json_str("layout", randomized == 1   ? "random"
                       : randomized == -1 ? "unknown"
                       : a->has_place     ? "shifted"
                                          : "fixed");
    if (a->has_place) json_u64("place", a->place);
    json_u64("seeds", c->seeds);
    json_str("inputs", digest);
    json_u64("expect", c->expect);
    json_num("ops_per_rep", ops);
    json_num("timer_resolution_ns", am_timer_resolution_ns());
    json_u64("peak_rss", am_peak_rss_bytes());
    json_u64("reserved_peak", c->reserved_peak);
    json_u64s("samples_ns", c->ns, c->samples);
    json_u64("untimed_reps", row->untimed_reps);
    if (c->partner_reps) {
        json_str("partner", am_partner.name);
        json_u64("partner_reps", c->partner_reps);
        json_u64("partner_untimed_reps", partner->untimed_reps);
        json_u64s("partner_samples_ns", c->partner_ns, c->samples);
    } else {
        json_str("alone", c->alone_why ? c->alone_why : "");
    }
    json_u64s("minor_faults", c->minor_faults, c->samples);
    json_u64s("major_faults", c->major_faults, c->samples);
    json_key("metrics");
    json_open('{');
    for (int i = 0; i < c->job.metric_count; i++) json_num(c->job.metric_names[i], c->job.metric_values[i]);
    json_close('}');
    if (c->hw) {
        double all = (double)c->samples * c->reps * ops;
        json_str("hw_counters", "ok");
        json_num("instructions_per_op", (double)c->instructions / all);
        json_num("cycles_per_op", (double)c->cycles / all);
    } else {
        char why[200];
        snprintf(why, sizeof why, "unavailable: %s", c->hw_why ? c->hw_why : "unknown");
        json_str("hw_counters", why);
    }
    json_close('}');
}

/* The partner, unless the cell is timed alone: a threaded workload keeps
 * its own timing (its threads' clocks), and --alone asks for none. */
static void open_partner(cell *c) {
    if (c->a->alone) { c->alone_why = "--alone"; return; }
    if (c->w->threaded || c->a->threads > 1) { c->alone_why = "threaded"; return; }
    am_partner_job pj = {c->w->name, c->a->size, c->a->param, c->a->work_loops, c->a->has_work_loops,
                         c->a->limit, c->a->seed, c->a->age, am_replay_current};
    c->partner = am_partner.open(&pj);
    if (!c->partner) fail(c, "the partner row could not be opened (out of memory)", 3);
}

/* Oracle, calibration, samples and the report; the exit code. */
static int measure(cell *c) {
    side row = {c, NULL, NULL, 0, 0, 0}, partner = {c, NULL, NULL, 0, 0, 0};
    if (!consult_oracle(c)) fail(c, "out of memory", 3);
    else open_partner(c);
    partner.partner = c->partner;
    if (c->finished) return c->exit_code;
    c->expect = cycle_sum(c);
    uint64_t row_ns = 0, partner_ns = 0;
    c->reps = c->a->reps ? reps_in_range(c->a->reps) : calibrate(&row, &row_ns);
    if (c->partner && !c->finished)
        c->partner_reps = c->a->partner_reps ? reps_in_range(c->a->partner_reps) : calibrate(&partner, &partner_ns);
    if (c->finished) return c->exit_code;
    /* a first visit, which calibrated, takes the samples a later one would be given */
    c->samples = c->a->reps ? c->a->samples
                            : am_visit_samples(c->a->samples, c->partner ? 2 : 1, row_ns + partner_ns,
                                               (uint64_t)(c->a->min_ms * 1e6));
    /* a later round's oracle must be the first round's: the same inputs */
    if (c->a->has_expect && c->a->expect != c->expect) fail(c, "checksum mismatch", 4);
    else take_samples(c, &row, &partner);
    drop_heap(&row);
    if (c->partner) am_partner.close(c->partner);
    c->partner = partner.partner = NULL;
    if (c->finished) return c->exit_code;
    report(c, &row, &partner);
    return 0;
}

/* ---------------------------------------------------------------- other modes */

#include "cell_modes.h"

int main(int argc, char **argv) {
    cell_args a;
    if (!parse_args(argc, argv, &a, am_partner.name)) return 2;
    if (a.list) { list_workloads(); return 0; }
    /* first of all: every allocation after it lands where the placement puts it */
    uint64_t moved = 0;
    if (a.has_place) {
        am_place p = am_place_of(a.place);
        if (am_move_memory(p.heap_bytes, p.map_bytes) != 0) {
            fprintf(stderr, "am-cell: --place: this system cannot move the heap and the mappings "
                            "(Linux only); run without it\n");
            return 2;
        }
        moved = p.heap_bytes + p.map_bytes;
    }
    /* before any heap exists and before the oracle: a trace's calls, decoded */
    const char *name = am_trace_setup(a.workload, a.trace);
    if (!name) return 2;
    const am_workload *w = am_workload_find(name);
    w = am_trace_workload(w); /* a trace of several threads replays on as many */
    if (!w) {
        fprintf(stderr, "am-cell: unknown workload '%s'; valid:", a.workload);
        for (int i = 0; am_workloads[i]; i++) fprintf(stderr, " %s", am_workloads[i]->name);
        fprintf(stderr, "\n");
        return 2;
    }
    /* before any heap exists: the runner's cap on what a cell may take, the
     * placement's reserve on top (it holds address space, never memory) */
    uint64_t cap = a.mem_limit > UINT64_MAX - moved ? UINT64_MAX : a.mem_limit + moved;
    if (a.mem_limit && am_limit_address_space(cap) != 0)
        fprintf(stderr, "am-cell: --mem-limit: this system cannot cap the address space; not applied\n");
    if (test_hooks_run(&a)) return 0;
    if (!a.has_age) a.age = w->age;
    cell c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    c.w = w;
    c.seeds = am_seed_cycle(w, a.size);
    c.bad_sum = (uint64_t)test_hook("AM_TEST_BADSUM", &a);
    c.job.size = a.size;
    c.job.threads = a.threads;
    c.job.param = a.param;
    c.job.work_loops = a.work_loops;
    c.job.has_work_loops = a.has_work_loops;
    am_options_default(&c.job.options);
    c.job.options.limit = a.limit;
    int rc;
    /* before the oracle, which may loop as long as the size */
    if (!am_workload_fits(w, &c.job)) {
        fail(&c, "out of memory", 3);
        rc = c.exit_code;
    } else rc = a.counting_table ? counting_table(&c) : a.stats_only ? count_one(&c) : measure(&c);
    free(c.oracle_sums);
    free(c.ns);
    free(c.partner_ns);
    free(c.minor_faults);
    free(c.major_faults);
    am_hw_counters_close(c.hw);
    return rc;
}
