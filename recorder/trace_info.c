/* trace_info.c: `make trace-info TRACE=FILE`, a trace's profile: its calls by
 * kind, threads, sizes, lifetimes, live bytes and cross-thread frees, held
 * against its closing record. Reads through trace_read.h; replays nothing.
 * Exit 0 (a cut trace too, saying so), 2 for bad input. --values: the same
 * numbers as key=value lines, for scripts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_read.h"

#define BUCKETS 66

struct profile {
    uint64_t kinds[AM_CALL_KINDS], failed, free_null;
    uint64_t sizes[BUCKETS];    /* sizes asked, by bucket: 0, 1, 2, 3-4, 5-8, ... */
    uint64_t lifetimes[BUCKETS];/* calls from a block's allocation to its end, by the same buckets */
    uint64_t ended, still_live, cross_thread, peak, final;
    uint64_t median_lifetime;
};

static unsigned bucket(uint64_t v)
{
    unsigned b = 0;
    if (v == 0)
        return 0;
    v -= 1;
    while (v) {
        b++;
        v >>= 1;
    }
    return b + 1; /* 1 -> 1, 2 -> 2, 3..4 -> 3, 5..8 -> 4 */
}

static void bucket_range(unsigned b, char *out, size_t n)
{
    if (b <= 2) {
        snprintf(out, n, "%u", b);
        return;
    }
    unsigned long long lo = (1ull << (b - 2)) + 1, hi = 1ull << (b - 1);
    if (b - 1 >= 64)
        snprintf(out, n, "%llu-", lo);
    else
        snprintf(out, n, "%llu-%llu", lo, hi);
}

static int profile_trace(const am_trace *t, struct profile *p)
{
    memset(p, 0, sizeof *p);
    uint64_t *made_at = calloc(t->blocks + 1, sizeof *made_at);
    uint32_t *made_by = calloc(t->blocks + 1, sizeof *made_by);
    uint64_t *size_of = calloc(t->blocks + 1, sizeof *size_of);
    if (made_at == NULL || made_by == NULL || size_of == NULL) {
        free(made_at);
        free(made_by);
        free(size_of);
        return -1;
    }
    uint64_t live = 0;
    for (size_t i = 0; i < t->ncalls; i++) {
        const am_trace_call *c = &t->calls[i];
        p->kinds[c->kind]++;
        if (c->kind == AM_CALL_FREE && c->failed)
            p->free_null++;
        else if (c->failed)
            p->failed++;
        if (c->kind != AM_CALL_FREE)
            p->sizes[bucket(c->size)]++;
        if (c->old_ends) {
            live -= size_of[c->old_id];
            p->lifetimes[bucket(i - made_at[c->old_id])]++;
            p->ended++;
            if (made_by[c->old_id] != c->thread)
                p->cross_thread++;
        }
        if (c->id) {
            made_at[c->id] = i;
            made_by[c->id] = c->thread;
            size_of[c->id] = c->size;
            live += c->size;
            if (live > p->peak)
                p->peak = live;
        }
    }
    p->final = live;
    p->still_live = t->blocks - p->ended;
    uint64_t half = (p->ended + 1) / 2, seen = 0;
    for (unsigned b = 0; b < BUCKETS && p->ended; b++) {
        seen += p->lifetimes[b];
        if (seen >= half) {
            p->median_lifetime = b <= 2 ? b : (1ull << (b - 1));
            break;
        }
    }
    free(made_at);
    free(made_by);
    free(size_of);
    return 0;
}

static const char *origin_name(unsigned o)
{
    return o == AM_ORIGIN_FIRST ? "the command's first process"
           : o == AM_ORIGIN_FORK ? "a fork child"
                                 : "a process the command started (exec, spawn)";
}

static const char *end_name(uint64_t r)
{
    return r == AM_END_EXIT ? "exit" : r == AM_END_EXEC ? "exec of another program" : r == AM_END__EXIT ? "_exit" : "?";
}

/* the closing record against the calls read: the disagreements, or "" */
static void disagreements(const am_trace *t, const struct profile *p, char *out, size_t n)
{
    size_t used = 0;
    out[0] = 0;
    for (unsigned k = 0; k < AM_CALL_KINDS; k++)
        if (t->closing[AM_CLOSE_COUNTS + k] != p->kinds[k] && used < n)
            used += (size_t)snprintf(out + used, n - used, " %s %llu read, %llu counted;", am_trace_kind_name(k),
                                     (unsigned long long)p->kinds[k],
                                     (unsigned long long)t->closing[AM_CLOSE_COUNTS + k]);
    if (t->closing[AM_CLOSE_PEAK_LIVE] != p->peak && used < n)
        used += (size_t)snprintf(out + used, n - used, " peak live bytes %llu read, %llu counted;",
                                 (unsigned long long)p->peak, (unsigned long long)t->closing[AM_CLOSE_PEAK_LIVE]);
    if (t->closing[AM_CLOSE_FINAL_LIVE] != p->final && used < n)
        used += (size_t)snprintf(out + used, n - used, " final live bytes %llu read, %llu counted;",
                                 (unsigned long long)p->final, (unsigned long long)t->closing[AM_CLOSE_FINAL_LIVE]);
    if (t->closing[AM_CLOSE_THREADS] != t->threads && used < n)
        snprintf(out + used, n - used, " threads %u read, %llu counted;", t->threads,
                 (unsigned long long)t->closing[AM_CLOSE_THREADS]);
}

static void print_values(const am_trace *t, const struct profile *p, const char *disagree)
{
    printf("program=%s\npid=%llu\nparent_pid=%llu\norigin=%u\n", t->program, (unsigned long long)t->pid,
           (unsigned long long)t->parent_pid, t->origin);
    printf("calls=%llu\nbytes=%llu\nthreads=%u\nblocks=%llu\n", (unsigned long long)t->ncalls,
           (unsigned long long)t->file_bytes, t->threads, (unsigned long long)t->blocks);
    for (unsigned k = 0; k < AM_CALL_KINDS; k++)
        printf("%s=%llu\n", am_trace_kind_name(k), (unsigned long long)p->kinds[k]);
    printf("peak_live=%llu\nfinal_live=%llu\ncross_thread_frees=%llu\n", (unsigned long long)p->peak,
           (unsigned long long)p->final, (unsigned long long)p->cross_thread);
    printf("closed=%d\ncut=%d\ncut_at=%llu\ndropped=%llu\n", t->closed, t->cut, (unsigned long long)t->cut_at,
           (unsigned long long)t->dropped);
    if (t->closed) {
        printf("closing_reason=%llu\nclosing_threads=%llu\n", (unsigned long long)t->closing[AM_CLOSE_REASON],
               (unsigned long long)t->closing[AM_CLOSE_THREADS]);
        for (unsigned k = 0; k < AM_CALL_KINDS; k++)
            printf("closing_%s=%llu\n", am_trace_kind_name(k), (unsigned long long)t->closing[AM_CLOSE_COUNTS + k]);
        printf("closing_peak_live=%llu\nclosing_final_live=%llu\nclosing_foreign_frees=%llu\n"
               "closing_foreign_reallocs=%llu\nclosing_untracked=%llu\nagrees=%d\n",
               (unsigned long long)t->closing[AM_CLOSE_PEAK_LIVE], (unsigned long long)t->closing[AM_CLOSE_FINAL_LIVE],
               (unsigned long long)t->closing[AM_CLOSE_FOREIGN_FREES],
               (unsigned long long)t->closing[AM_CLOSE_FOREIGN_REALLOCS],
               (unsigned long long)t->closing[AM_CLOSE_UNTRACKED], disagree[0] == 0);
    }
}

static void print_histogram(const char *title, const uint64_t *h, uint64_t total)
{
    printf("%s\n", title);
    for (unsigned b = 0; b < BUCKETS; b++) {
        if (!h[b])
            continue;
        char range[48];
        bucket_range(b, range, sizeof range);
        unsigned bar = total ? (unsigned)(h[b] * 40 / total) : 0;
        printf("  %-24s %12llu %5.1f%% ", range, (unsigned long long)h[b], 100.0 * (double)h[b] / (double)total);
        for (unsigned i = 0; i < bar; i++)
            putchar('#');
        putchar('\n');
    }
}

static void print_profile(const char *path, const am_trace *t, const struct profile *p, const char *disagree)
{
    printf("trace %s: format version %u, %llu bytes, %.2f bytes a call\n", path, t->version,
           (unsigned long long)t->file_bytes, t->ncalls ? (double)t->file_bytes / (double)t->ncalls : 0.0);
    printf("program %s, pid %llu (parent %llu), %s\ncommand: %s\n", t->program, (unsigned long long)t->pid,
           (unsigned long long)t->parent_pid, origin_name(t->origin), t->command);
    if (t->cut)
        printf("CUT: the trace is cut at byte %llu: %s; the %llu calls before it are read\n",
               (unsigned long long)t->cut_at, t->cut_reason, (unsigned long long)t->ncalls);
    if (t->dropped)
        printf("  %llu calls name blocks whose allocation was not written before the cut: left out\n",
               (unsigned long long)t->dropped);
    if (t->closed)
        printf("ended by %s\n", end_name(t->closing[AM_CLOSE_REASON]));
    printf("calls: %llu, threads: %u, blocks: %llu\n", (unsigned long long)t->ncalls, t->threads,
           (unsigned long long)t->blocks);
    for (unsigned k = 0; k < AM_CALL_KINDS; k++)
        if (p->kinds[k])
            printf("  %-15s %12llu\n", am_trace_kind_name(k), (unsigned long long)p->kinds[k]);
    if (p->free_null || p->failed)
        printf("  (free(NULL): %llu; calls that gave no block: %llu)\n", (unsigned long long)p->free_null,
               (unsigned long long)p->failed);
    uint64_t asked = t->ncalls - p->kinds[AM_CALL_FREE];
    print_histogram("sizes asked (bytes):", p->sizes, asked);
    char title[160];
    snprintf(title, sizeof title, "lifetimes (calls from allocation to end; %llu blocks ended, median about %llu, %llu "
             "still live at the end):", (unsigned long long)p->ended, (unsigned long long)p->median_lifetime,
             (unsigned long long)p->still_live);
    print_histogram(title, p->lifetimes, p->ended);
    printf("live bytes: peak %llu, at the end %llu\n", (unsigned long long)p->peak, (unsigned long long)p->final);
    printf("cross-thread frees: %llu (of %llu blocks ended)\n", (unsigned long long)p->cross_thread,
           (unsigned long long)p->ended);
    if (t->closed) {
        printf("closing record: frees of pointers not from recorded calls %llu, reallocs of such %llu, blocks "
               "not tracked %llu\n",
               (unsigned long long)t->closing[AM_CLOSE_FOREIGN_FREES],
               (unsigned long long)t->closing[AM_CLOSE_FOREIGN_REALLOCS],
               (unsigned long long)t->closing[AM_CLOSE_UNTRACKED]);
        if (disagree[0])
            printf("closing record DISAGREES with the calls read:%s\n", disagree);
        else
            printf("closing record agrees with the calls read (counts of each call, threads, peak and final live "
                   "bytes)\n");
    }
}

int main(int argc, char **argv)
{
    int values = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--values") == 0)
            values = 1;
        else if (path == NULL)
            path = argv[i];
        else
            path = "";
    }
    if (path == NULL || *path == 0) {
        fprintf(stderr, "trace-info: give one trace: make trace-info TRACE=FILE\n");
        return 2;
    }
    am_trace t;
    char err[512];
    if (am_trace_read(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "trace-info: %s\n", err);
        return 2;
    }
    struct profile p;
    if (profile_trace(&t, &p) != 0) {
        fprintf(stderr, "trace-info: %s: out of memory\n", path);
        am_trace_free(&t);
        return 2;
    }
    char disagree[1024] = "";
    if (t.closed)
        disagreements(&t, &p, disagree, sizeof disagree);
    if (values)
        print_values(&t, &p, disagree);
    else
        print_profile(path, &t, &p, disagree);
    am_trace_free(&t);
    return 0;
}
