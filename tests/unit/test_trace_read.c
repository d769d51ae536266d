/* test_trace_read.c: the trace reader (recorder/trace_read.c) on traces made
 * here byte by byte (docs/trace.md): threads' records merged by sequence
 * number, dense ids, realloc and cross-thread frees, the fields of each call,
 * cut traces kept up to their last complete unit, and every kind of bad
 * input refused with its message. Runs under make check's sanitizers too. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../../recorder/trace_read.h"

typedef struct bytes {
    unsigned char b[4096];
    size_t n;
} bytes;

static void put_byte(bytes *o, unsigned v)
{
    o->b[o->n++] = (unsigned char)v;
}

static void put_var(bytes *o, uint64_t v)
{
    while (v >= 0x80) {
        put_byte(o, (unsigned)(v & 0x7f) | 0x80);
        v >>= 7;
    }
    put_byte(o, (unsigned)v);
}

static void put_bytes(bytes *o, const void *p, size_t n)
{
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void put_header(bytes *o, unsigned version)
{
    bytes h = {{0}, 0};
    put_var(&h, 7);   /* pid */
    put_var(&h, 1);   /* parent */
    put_var(&h, AM_ORIGIN_FIRST);
    put_var(&h, 4);
    put_bytes(&h, "prog", 4);
    put_var(&h, 7);
    put_bytes(&h, "prog\0-x", 7);
    put_bytes(o, AM_TRACE_MAGIC, AM_TRACE_MAGIC_LEN);
    put_var(o, version);
    put_var(o, h.n);
    put_bytes(o, h.b, h.n);
}

static void put_unit(bytes *o, unsigned thread, const bytes *records)
{
    put_byte(o, AM_UNIT_RECORDS);
    put_var(o, thread);
    put_var(o, records->n);
    put_bytes(o, records->b, records->n);
}

/* a closing record: the counts of each call, peak and final live bytes */
static void put_closing(bytes *o, const uint64_t *counts, unsigned threads, uint64_t peak, uint64_t final)
{
    uint64_t f[AM_CLOSE_FIELDS] = {0};
    f[AM_CLOSE_REASON] = AM_END_EXIT;
    f[AM_CLOSE_THREADS] = threads;
    for (int k = 0; k < AM_CALL_KINDS; k++)
        f[AM_CLOSE_COUNTS + k] = counts[k];
    f[AM_CLOSE_PEAK_LIVE] = peak;
    f[AM_CLOSE_FINAL_LIVE] = final;
    bytes body = {{0}, 0};
    put_var(&body, AM_CLOSE_FIELDS);
    for (int i = 0; i < AM_CLOSE_FIELDS; i++)
        put_var(&body, f[i]);
    put_byte(o, AM_UNIT_CLOSING);
    put_var(o, body.n);
    put_bytes(o, body.b, body.n);
}

static char err[512];

static int parse(const bytes *o, am_trace *t)
{
    err[0] = 0;
    return am_trace_parse(o->b, o->n, "made.trace", t, err, sizeof err);
}

/* the message of bad input, or "" when it was read */
static const char *refused(const bytes *o)
{
    am_trace t;
    if (parse(o, &t) == 0) {
        am_trace_free(&t);
        return "";
    }
    return err;
}

static void test_threads_merge_by_sequence(void)
{
    /* thread 0: malloc(24) (call 1), free of it (call 4); thread 1: malloc(100)
     * (call 2), realloc of it to 200 (call 3); thread 1's unit comes first */
    bytes t0 = {{0}, 0}, t1 = {{0}, 0}, o = {{0}, 0};
    put_byte(&t0, AM_CALL_MALLOC);
    put_var(&t0, 24);
    put_byte(&t0, AM_CALL_FREE | AM_REC_SEQ);
    put_var(&t0, 3);
    put_var(&t0, 0);
    put_byte(&t1, AM_CALL_MALLOC | AM_REC_SEQ);
    put_var(&t1, 2);
    put_var(&t1, 100);
    put_byte(&t1, AM_CALL_REALLOC);
    put_var(&t1, 0);
    put_var(&t1, 200);
    put_header(&o, AM_TRACE_VERSION);
    put_unit(&o, 1, &t1);
    put_unit(&o, 0, &t0);
    uint64_t counts[AM_CALL_KINDS] = {0};
    counts[AM_CALL_MALLOC] = 2;
    counts[AM_CALL_REALLOC] = 1;
    counts[AM_CALL_FREE] = 1;
    put_closing(&o, counts, 2, 224, 200);
    am_trace t;
    CHECK_MSG(parse(&o, &t) == 0, "%s", err);
    CHECK(t.closed && !t.cut && t.threads == 2 && t.ncalls == 4 && t.blocks == 3);
    CHECK(strcmp(t.program, "prog") == 0 && strcmp(t.command, "prog -x") == 0 && t.pid == 7);
    CHECK(t.calls[0].kind == AM_CALL_MALLOC && t.calls[0].thread == 0 && t.calls[0].id == 1 && t.calls[0].size == 24);
    CHECK(t.calls[1].kind == AM_CALL_MALLOC && t.calls[1].thread == 1 && t.calls[1].id == 2);
    CHECK(t.calls[2].kind == AM_CALL_REALLOC && t.calls[2].old_id == 2 && t.calls[2].id == 3 && t.calls[2].old_ends);
    CHECK(t.calls[3].kind == AM_CALL_FREE && t.calls[3].thread == 0 && t.calls[3].old_id == 1);
    CHECK(t.closing[AM_CLOSE_PEAK_LIVE] == 224);
    am_trace_free(&t);
}

static void test_cross_thread_free_and_fields(void)
{
    bytes t0 = {{0}, 0}, t1 = {{0}, 0}, o = {{0}, 0};
    put_byte(&t0, AM_CALL_CALLOC); /* 1: calloc(3, 40) */
    put_var(&t0, 3);
    put_var(&t0, 40);
    put_byte(&t0, AM_CALL_POSIX_MEMALIGN); /* 2: posix_memalign(64, 200) */
    put_var(&t0, 64);
    put_var(&t0, 200);
    put_byte(&t0, AM_CALL_MALLOC | AM_REC_NULL); /* 3: a malloc that failed */
    put_var(&t0, 1u << 30);
    put_byte(&t0, AM_CALL_FREE | AM_REC_NULL); /* 4: free(NULL) */
    put_byte(&t1, AM_CALL_FREE | AM_REC_SEQ | AM_REC_OTHER); /* 5: thread 1 frees thread 0's block 1 */
    put_var(&t1, 5);
    put_var(&t1, 0);
    put_var(&t1, 1);
    put_byte(&t1, AM_CALL_REALLOC | AM_REC_NO_OLD); /* 6: realloc(NULL, 8) */
    put_var(&t1, 8);
    put_header(&o, AM_TRACE_VERSION);
    put_unit(&o, 0, &t0);
    put_unit(&o, 1, &t1);
    am_trace t;
    CHECK_MSG(parse(&o, &t) == 0, "%s", err);
    CHECK(t.ncalls == 6 && t.blocks == 3);
    CHECK(t.calls[0].size == 120 && t.calls[0].count == 3 && t.calls[0].id == 1);
    CHECK(t.calls[1].align == 64 && t.calls[1].size == 200 && t.calls[1].id == 2);
    CHECK(t.calls[2].failed && t.calls[2].id == 0);
    CHECK(t.calls[3].failed && t.calls[3].old_id == 0);
    CHECK(t.calls[4].thread == 1 && t.calls[4].old_id == 1 && t.calls[4].old_ends);
    CHECK(t.calls[5].old_id == 0 && t.calls[5].id == 3);
    /* no closing record: the trace is cut at its end, every call kept */
    CHECK(t.cut && !t.closed && t.cut_at == o.n);
    am_trace_free(&t);
}

static void test_cut_inside_a_unit_keeps_the_units_before(void)
{
    bytes r = {{0}, 0}, o = {{0}, 0};
    put_byte(&r, AM_CALL_MALLOC);
    put_var(&r, 16);
    put_header(&o, AM_TRACE_VERSION);
    put_unit(&o, 0, &r);
    size_t whole = o.n;
    put_unit(&o, 0, &r);
    o.n -= 1; /* the second unit cut short */
    am_trace t;
    CHECK_MSG(parse(&o, &t) == 0, "%s", err);
    CHECK(t.cut && t.cut_at == whole && t.ncalls == 1);
    CHECK(strstr(t.cut_reason, "ends inside") != NULL);
    am_trace_free(&t);
}

static void test_cut_trace_leaves_out_calls_of_blocks_not_written(void)
{
    /* thread 1 frees thread 0's block 1, whose unit was never written */
    bytes r = {{0}, 0}, o = {{0}, 0};
    put_byte(&r, AM_CALL_FREE | AM_REC_SEQ | AM_REC_OTHER);
    put_var(&r, 2);
    put_var(&r, 0);
    put_var(&r, 1);
    put_byte(&r, AM_CALL_MALLOC);
    put_var(&r, 8);
    put_header(&o, AM_TRACE_VERSION);
    put_unit(&o, 1, &r);
    am_trace t;
    CHECK_MSG(parse(&o, &t) == 0, "%s", err);
    CHECK(t.cut && t.dropped == 1 && t.ncalls == 1 && t.calls[0].id == 1);
    am_trace_free(&t);
    /* closed, the same trace names a block never allocated */
    uint64_t counts[AM_CALL_KINDS] = {0};
    put_closing(&o, counts, 2, 0, 0);
    CHECK(strstr(refused(&o), "never allocated") != NULL);
}

static void test_bad_input_refused(void)
{
    bytes o = {{0}, 0}, r = {{0}, 0};
    CHECK(strstr(refused(&o), "is empty") != NULL);
    put_bytes(&o, "hello, world\n", 13);
    CHECK(strstr(refused(&o), "not an allocmark trace") != NULL);
    o.n = 0;
    put_header(&o, 2);
    CHECK(strstr(refused(&o), "format version 2") != NULL);
    o.n = 0;
    put_header(&o, AM_TRACE_VERSION);
    o.b[AM_TRACE_MAGIC_LEN + 1] = 0x7f; /* the header's length, past the end */
    CHECK(strstr(refused(&o), "damaged header") != NULL);
    o.n = 0;
    put_header(&o, AM_TRACE_VERSION);
    o.b[AM_TRACE_MAGIC_LEN + 1] -= 1; /* the command no longer fills the header */
    CHECK(strstr(refused(&o), "damaged header") != NULL);
    o.n = 0;
    put_header(&o, AM_TRACE_VERSION);
    size_t head = o.n;
    put_byte(&o, 'Z');
    CHECK(strstr(refused(&o), "starts no unit") != NULL);
    o.n = head;
    put_byte(&r, 0x0f); /* call 15 */
    put_unit(&o, 0, &r);
    CHECK(strstr(refused(&o), "do not decode") != NULL);
    o.n = head;
    r.n = 0;
    put_byte(&r, AM_CALL_MALLOC);
    put_byte(&r, 0x80); /* a size that runs past its unit */
    put_unit(&o, 0, &r);
    CHECK(strstr(refused(&o), "do not decode") != NULL);
    o.n = head;
    r.n = 0;
    put_byte(&r, AM_CALL_FREE); /* the thread's block 0 of 0: none */
    put_var(&r, 0);
    put_unit(&o, 0, &r);
    CHECK(strstr(refused(&o), "do not decode") != NULL);
    /* freed twice: once by its thread, once by another */
    o.n = head;
    r.n = 0;
    put_byte(&r, AM_CALL_MALLOC);
    put_var(&r, 24);
    put_byte(&r, AM_CALL_FREE);
    put_var(&r, 0);
    put_byte(&r, AM_CALL_FREE | AM_REC_OTHER);
    put_var(&r, 0);
    put_var(&r, 1);
    put_unit(&o, 0, &r);
    uint64_t counts[AM_CALL_KINDS] = {0};
    put_closing(&o, counts, 1, 0, 0);
    CHECK(strstr(refused(&o), "freed before") != NULL);
    CHECK(strstr(err, "made.trace") == err);
}

static void test_missing_file(void)
{
    am_trace t;
    CHECK(am_trace_read("no/such/folder/x.trace", &t, err, sizeof err) != 0);
    CHECK(strstr(err, "cannot open") != NULL);
}

/* am_trace_use_memory: the reader's arrays come from the memory given and
 * all go back to it, the calls when the trace is freed */
static int given_live, given_used;

static void *given_resize(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (q && !p)
        given_live++;
    given_used += q != NULL;
    return q;
}

static void given_release(void *p)
{
    given_live -= p != NULL;
    free(p);
}

static void test_arrays_in_the_memory_given(void)
{
    bytes t0 = {{0}, 0}, o = {{0}, 0};
    put_byte(&t0, AM_CALL_MALLOC);
    put_var(&t0, 24);
    put_byte(&t0, AM_CALL_FREE);
    put_var(&t0, 0);
    put_header(&o, AM_TRACE_VERSION);
    put_unit(&o, 0, &t0);
    am_trace_use_memory(given_resize, given_release);
    am_trace t;
    CHECK_MSG(parse(&o, &t) == 0, "%s", err);
    CHECK(t.ncalls == 2 && t.calls[1].old_id == 1);
    CHECK(given_used >= 2 && given_live == 1); /* the calls are kept, the working tables gone */
    am_trace_free(&t);
    CHECK(given_live == 0);
    am_trace_use_memory(NULL, NULL);
    int used = given_used;
    CHECK(parse(&o, &t) == 0);
    am_trace_free(&t);
    CHECK(given_used == used); /* malloc's again */
}

int main(int argc, char **argv)
{
    static const am_test tests[] = {
        {"threads_merge_by_sequence", test_threads_merge_by_sequence},
        {"cross_thread_free_and_fields", test_cross_thread_free_and_fields},
        {"cut_inside_a_unit_keeps_the_units_before", test_cut_inside_a_unit_keeps_the_units_before},
        {"cut_trace_leaves_out_calls_of_blocks_not_written", test_cut_trace_leaves_out_calls_of_blocks_not_written},
        {"bad_input_refused", test_bad_input_refused},
        {"missing_file", test_missing_file},
        {"arrays_in_the_memory_given", test_arrays_in_the_memory_given},
        {NULL, NULL},
    };
    return am_run_tests("trace_read", tests, argc, argv);
}
