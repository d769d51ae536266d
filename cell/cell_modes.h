/* cell_modes.h: the cell's modes besides timing, and its test hooks:
 *   --stats-only  one repetition on the counting build: the allocator statistics;
 *   --stats       the counting wrapper's table after two repetitions;
 *   AM_TEST_*     a crash, hang, wrong checksum or garbage answer on demand.
 * For cell_main.c only: included after its output and sampling helpers, which
 * these use, so that the timing path and the other modes read apart. */
#ifndef AM_CELL_MODES_H
#define AM_CELL_MODES_H

/* --stats-only: one repetition of the first seed on the counting build; the
 * allocator statistics and the workload's figures */
static int count_one(cell *c) {
    am_heap *h = am_create(&c->job.options);
    if (!h) { fail(c, "heap could not be created", 3); return c->exit_code; }
    if (age(c, h)) { am_destroy(h); return c->exit_code; }
    uint64_t sum, ns;
    c->seeds = 1;
    int status = run_sample(c, h, &c->job, 0, 1, &sum, &ns);
    am_stats s;
    am_get_stats(h, &s);
    am_destroy(h);
    if (status != AM_OK) {
        not_ok(c, status);
        return c->exit_code;
    }
    json_head(c->a, "ok");
    json_key("stats");
    json_open('{');
    json_u64("bytes_requested", s.bytes_requested);
    json_u64("bytes_live", s.bytes_live);
    json_u64("bytes_peak", s.bytes_peak);
    json_u64("bytes_reserved", s.bytes_reserved);
    json_u64("reserved_peak", s.reserved_peak);
    json_u64("allocs", s.allocs);
    json_u64("frees", s.frees);
    json_close('}');
    /* the workload's own figures of that repetition (a replay's calls of each kind) */
    json_key("metrics");
    json_open('{');
    for (int i = 0; i < c->job.metric_count; i++) {
        double v = c->job.metric_values[i];
        /* counts whole, not to 6 digits: a test holds them against a trace's */
        if (v >= 0 && v < 9007199254740992.0 && v == (double)(uint64_t)v)
            json_u64(c->job.metric_names[i], (uint64_t)v);
        else json_num(c->job.metric_names[i], v);
    }
    json_close('}');
    json_close('}');
    return 0;
}

/* --stats: the counting wrapper's table after a first and a second repetition
 * (the first two seeds; the deltas of the second table are the second
 * repetition). Every block is filed under the workload's name, and deeper where
 * the workload tags owners. */
static int counting_table(cell *c) {
#if AM_STATS
    const cell_args *a = c->a;
    am_counting_start();
    am_owner_push(a->workload);
    am_heap *h = am_create(&c->job.options);
    if (!h) fail(c, "heap could not be created", 3);
    for (unsigned r = 0; r < 2 && !c->finished; r++) {
        uint64_t sum, ns;
        cell_args one_seed = *a;
        cell one = *c;
        one_seed.seed = a->seed + r % c->seeds;
        one.a = &one_seed;
        one.seeds = 1;
        int status = run_sample(&one, h, &c->job, 0, 1, &sum, &ns);
        if (status != AM_OK) not_ok(c, status);
        else if (sum != c->w->oracle(&c->job)) fail(c, "checksum mismatch", 4);
        else {
            char *table = am_counting_report();
            printf("%s (size %zu, threads %u, param %g), after repetition %u:\n%s\n", a->workload, a->size,
                   a->threads, a->param, r + 1, table ? table : "(out of memory)\n");
            free(table);
        }
    }
    if (h) am_destroy(h);
    if (!c->finished) {
        json_head(a, "ok");
        json_u64("counting_errors", am_counting_errors());
        json_close('}');
    }
    am_counting_stop();
    return c->exit_code;
#else
    fail(c, "--stats needs the counting build (am-cell-<row>-stats)", 2);
    return c->exit_code;
#endif
}

/* Test hooks, so the runner's tests can see a cell crash, hang, compute a
 * wrong checksum or answer garbage ("ok" with a sample time that is not a
 * number). AM_TEST_CRASH / AM_TEST_HANG / AM_TEST_BADSUM / AM_TEST_GARBAGE name the cells:
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

/* The hooks that act before anything is measured: a crash, a hang, or the
 * garbage answer, after which the cell exits 0 (this returns 1). */
static int test_hooks_run(const cell_args *a) {
    if (test_hook("AM_TEST_CRASH", a)) raise(SIGSEGV);
    if (test_hook("AM_TEST_HANG", a))
        for (;;) AM_CLOBBER();
    if (!test_hook("AM_TEST_GARBAGE", a)) return 0;
    json_head(a, "ok");
    json_u64("reps", 1);
    json_key("samples_ns");
    json_open('[');
    json_item();
    json_num_value(NAN);
    json_close(']');
    json_close('}');
    return 1;
}

#endif
