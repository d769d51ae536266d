/* trace_read.c: decodes a trace (docs/trace.md) into am_trace. Two passes:
 * the units, each thread's records in its own order, then every call placed
 * by its sequence number and its blocks given dense ids. Checks what a replay
 * relies on: every block named was allocated, and ended once at most. */
#include "trace_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a call as the file holds it: blocks named (thread, number) */
struct raw {
    uint64_t seq, count, size, align, ref_number;
    uint32_t thread, ref_thread;
    uint8_t kind, flags, has_ref;
};

struct thread_state {
    uint64_t seq, nalloc;  /* pass 1: the last sequence number, the blocks numbered */
    uint64_t *ids;         /* pass 2: block number -> id */
    size_t made, cap;
};

struct reader {
    const unsigned char *p, *end;
};

static int get(struct reader *r, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return 0;
        unsigned char b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

const char *am_trace_kind_name(unsigned kind)
{
    static const char *const names[AM_CALL_KINDS] = {"malloc",         "calloc",        "realloc",  "reallocarray",
                                                      "free",           "posix_memalign", "aligned_alloc",
                                                      "memalign",       "valloc",        "pvalloc"};
    return kind < AM_CALL_KINDS ? names[kind] : "?";
}

static void *(*arr_resize)(void *, size_t) = realloc;
static void (*arr_release)(void *) = free;

void am_trace_use_memory(void *(*resize)(void *p, size_t bytes), void (*release)(void *p))
{
    arr_resize = resize ? resize : realloc;
    arr_release = release ? release : free;
}

static unsigned char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = arr_resize(NULL, cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            unsigned char *bigger = cap > SIZE_MAX / 2 ? NULL : arr_resize(buf, cap * 2);
            if (bigger == NULL) {
                arr_release(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    if (buf == NULL) {
        fclose(f);
        fail(err, errlen, "%s: too large to read into memory", path);
        return NULL;
    }
    if (ferror(f)) {
        int e = errno;
        fclose(f);
        arr_release(buf);
        fail(err, errlen, "%s: cannot read: %s", path, e ? strerror(e) : "read error");
        return NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

static char *copy_text(const unsigned char *s, size_t n, char sep)
{
    char *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) /* control characters would garble a terminal */
        out[i] = s[i] == 0 ? sep : s[i] < 0x20 || s[i] == 0x7f ? '?' : (char)s[i];
    out[n] = 0;
    return out;
}

static int read_header(struct reader *r, am_trace *t, const char *path, char *err, size_t errlen)
{
    size_t len = (size_t)(r->end - r->p);
    if (len == 0)
        return fail(err, errlen, "%s: the file is empty, not a trace", path);
    if (len < AM_TRACE_MAGIC_LEN || memcmp(r->p, AM_TRACE_MAGIC, AM_TRACE_MAGIC_LEN) != 0)
        return fail(err, errlen, "%s: not an allocmark trace (it does not start with %s)", path, AM_TRACE_MAGIC);
    r->p += AM_TRACE_MAGIC_LEN;
    uint64_t version, hlen, pid, ppid, origin, plen, clen;
    if (!get(r, &version) || !get(r, &hlen))
        return fail(err, errlen, "%s: damaged header: it ends before its length", path);
    if (version != AM_TRACE_VERSION)
        return fail(err, errlen, "%s: format version %llu, this reader knows version %d", path,
                    (unsigned long long)version, AM_TRACE_VERSION);
    if (hlen > (uint64_t)(r->end - r->p))
        return fail(err, errlen, "%s: damaged header: %llu bytes long, the file ends after %llu", path,
                    (unsigned long long)hlen, (unsigned long long)(r->end - r->p));
    struct reader h = {r->p, r->p + hlen};
    if (!get(&h, &pid) || !get(&h, &ppid) || !get(&h, &origin) || origin > AM_ORIGIN_OTHER || !get(&h, &plen) ||
        plen > (uint64_t)(h.end - h.p))
        return fail(err, errlen, "%s: damaged header: its fields do not decode", path);
    t->program = copy_text(h.p, (size_t)plen, '_');
    h.p += plen;
    if (!get(&h, &clen) || clen != (uint64_t)(h.end - h.p))
        return fail(err, errlen, "%s: damaged header: its command does not fill it", path);
    t->command = copy_text(h.p, (size_t)clen, ' ');
    if (t->program == NULL || t->command == NULL)
        return fail(err, errlen, "%s: out of memory", path);
    t->version = (unsigned)version;
    t->pid = pid;
    t->parent_pid = ppid;
    t->origin = (unsigned)origin;
    r->p = h.end;
    return 0;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    void *bigger = n > SIZE_MAX / elem ? NULL : arr_resize(*arr, n * elem);
    if (bigger == NULL)
        return 0;
    memset((char *)bigger + *cap * elem, 0, (n - *cap) * elem);
    *arr = bigger;
    *cap = n;
    return 1;
}

#define MAX_THREADS (1u << 20)

/* one unit of records: the thread's calls appended to raws */
static int read_records(struct reader *u, uint32_t tid, struct thread_state *ts, struct raw **raws, size_t *nraw,
                        size_t *rawcap)
{
    while (u->p < u->end) {
        unsigned tag = *u->p++;
        struct raw c;
        memset(&c, 0, sizeof c);
        c.thread = tid;
        c.kind = (uint8_t)(tag & 0x0f);
        c.flags = (uint8_t)(tag & 0xf0);
        c.count = 1;
        uint64_t step = 1, v;
        if (c.kind >= AM_CALL_KINDS)
            return 0;
        if ((tag & AM_REC_SEQ) && (!get(u, &step) || step == 0 || step > ((uint64_t)1 << 56)))
            return 0;
        ts->seq += step;
        c.seq = ts->seq;
        int names_block = c.kind == AM_CALL_FREE ? !(tag & AM_REC_NULL)
                          : (c.kind == AM_CALL_REALLOC || c.kind == AM_CALL_REALLOCARRAY) ? !(tag & AM_REC_NO_OLD)
                                                                                          : 0;
        if (!names_block && (tag & AM_REC_OTHER))
            return 0;
        if (names_block) {
            c.has_ref = 1;
            if (tag & AM_REC_OTHER) {
                if (!get(u, &v) || v >= MAX_THREADS || !get(u, &c.ref_number) || c.ref_number == 0)
                    return 0;
                c.ref_thread = (uint32_t)v;
            } else {
                if (!get(u, &v) || v >= ts->nalloc)
                    return 0;
                c.ref_thread = tid;
                c.ref_number = ts->nalloc - v;
            }
        }
        if ((c.kind == AM_CALL_CALLOC || c.kind == AM_CALL_REALLOCARRAY) && !get(u, &c.count))
            return 0;
        if ((c.kind == AM_CALL_POSIX_MEMALIGN || c.kind == AM_CALL_ALIGNED_ALLOC || c.kind == AM_CALL_MEMALIGN) &&
            !get(u, &c.align))
            return 0;
        if (c.kind != AM_CALL_FREE && !get(u, &c.size))
            return 0;
        if (c.kind != AM_CALL_FREE && !(tag & AM_REC_NULL))
            ts->nalloc++;
        if (!grow((void **)raws, rawcap, *nraw + 1, sizeof **raws))
            return -1;
        (*raws)[(*nraw)++] = c;
    }
    return 1;
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = ((const struct raw *)a)->seq, y = ((const struct raw *)b)->seq;
    return x < y ? -1 : x > y;
}

static uint64_t times(uint64_t a, uint64_t b)
{
    if (a != 0 && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

static void note_cut(am_trace *t, uint64_t at, const char *why)
{
    t->cut = 1;
    t->cut_at = at;
    snprintf(t->cut_reason, sizeof t->cut_reason, "%s", why);
}

int am_trace_read(const char *path, am_trace *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    size_t len = 0;
    unsigned char *file = read_file(path, &len, err, errlen);
    if (file == NULL)
        return -1;
    int rc = am_trace_parse(file, len, path, t, err, errlen);
    arr_release(file);
    return rc;
}

int am_trace_parse(const unsigned char *file, size_t len, const char *path, am_trace *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    struct reader r = {file, file + len};
    struct raw *raws = NULL;
    size_t nraw = 0, rawcap = 0, nthreads = 0, tcap = 0;
    struct thread_state *ts = NULL;
    uint64_t *live = NULL; /* per id: bytes live, UINT64_MAX once ended */
    size_t livecap = 0;
    int rc = -1;
    t->file_bytes = len;
    if (read_header(&r, t, path, err, errlen) != 0)
        goto out;

    /* pass 1: the units */
    int closing_last = 0;
    while (r.p < r.end) {
        uint64_t at = (uint64_t)(r.p - file), n, v;
        unsigned tag = *r.p++;
        if (tag == AM_UNIT_RECORDS) {
            if (!get(&r, &v) || !get(&r, &n) || n > (uint64_t)(r.end - r.p)) {
                note_cut(t, at, "the file ends inside a unit of records");
                break;
            }
            if (v >= MAX_THREADS) {
                fail(err, errlen, "%s: records that do not decode: the unit at byte %llu names thread %llu", path,
                     (unsigned long long)at, (unsigned long long)v);
                goto out;
            }
            if (v >= nthreads)
                nthreads = (size_t)v + 1;
            if (!grow((void **)&ts, &tcap, nthreads, sizeof *ts))
                goto oom;
            struct reader u = {r.p, r.p + n};
            int ok = read_records(&u, (uint32_t)v, &ts[v], &raws, &nraw, &rawcap);
            if (ok < 0)
                goto oom;
            if (ok == 0) {
                fail(err, errlen, "%s: records that do not decode: thread %llu's unit at byte %llu, at byte %llu",
                     path, (unsigned long long)v, (unsigned long long)at, (unsigned long long)(u.p - file));
                goto out;
            }
            r.p += n;
            closing_last = 0;
        } else if (tag == AM_UNIT_CLOSING) {
            uint64_t fields;
            if (!get(&r, &n) || n > (uint64_t)(r.end - r.p)) {
                note_cut(t, at, "the file ends inside the closing record");
                break;
            }
            struct reader u = {r.p, r.p + n};
            memset(t->closing, 0, sizeof t->closing);
            if (!get(&u, &fields)) {
                fail(err, errlen, "%s: the closing record at byte %llu does not decode", path, (unsigned long long)at);
                goto out;
            }
            for (uint64_t f = 0; f < fields; f++) {
                if (!get(&u, &v)) {
                    fail(err, errlen, "%s: the closing record at byte %llu does not decode", path,
                         (unsigned long long)at);
                    goto out;
                }
                if (f < AM_CLOSE_FIELDS)
                    t->closing[f] = v;
            }
            r.p += n;
            closing_last = 1;
        } else {
            fail(err, errlen, "%s: records that do not decode: byte %llu starts no unit (0x%02x)", path,
                 (unsigned long long)at, tag);
            goto out;
        }
    }
    t->closed = closing_last && !t->cut;
    if (!t->closed && !t->cut)
        note_cut(t, len, "no closing record: the program did not end normally (killed by a signal?)");
    if (t->cut && !t->cut_at)
        t->cut_at = (uint64_t)(r.p - file);

    /* pass 2: in the order of the calls, dense ids and the checks */
    qsort(raws, nraw, sizeof *raws, by_seq);
    size_t ncall_room = nraw ? nraw : 1;
    t->calls = ncall_room > SIZE_MAX / sizeof *t->calls ? NULL : arr_resize(NULL, ncall_room * sizeof *t->calls);
    if (t->calls == NULL)
        goto oom;
    memset(t->calls, 0, ncall_room * sizeof *t->calls);
    t->threads = (uint32_t)nthreads;
    size_t out_n = 0;
    for (size_t i = 0; i < nraw; i++) {
        const struct raw *c = &raws[i];
        am_trace_call *o = &t->calls[out_n];
        o->kind = c->kind;
        o->thread = c->thread;
        o->count = c->count;
        o->align = c->align;
        o->failed = (c->flags & AM_REC_NULL) != 0;
        o->size = c->kind == AM_CALL_CALLOC || c->kind == AM_CALL_REALLOCARRAY ? times(c->count, c->size) : c->size;
        if (c->has_ref) {
            struct thread_state *owner = c->ref_thread < nthreads ? &ts[c->ref_thread] : NULL;
            uint64_t id = owner && c->ref_number <= owner->made ? owner->ids[c->ref_number - 1] : 0;
            if (id == 0 && !t->cut) {
                fail(err, errlen, "%s: call %llu (%s in thread %u) names block %llu of thread %u, never allocated",
                     path, (unsigned long long)out_n + 1, am_trace_kind_name(c->kind), c->thread,
                     (unsigned long long)c->ref_number, c->ref_thread);
                goto out;
            }
            if (id == 0) { /* a cut trace: its allocation was in a part not written */
                t->dropped++;
                if (c->kind == AM_CALL_FREE)
                    continue;
            }
            if (id != 0 && live[id - 1] == UINT64_MAX) {
                fail(err, errlen, "%s: call %llu (%s in thread %u) ends block %llu, freed before", path,
                     (unsigned long long)out_n + 1, am_trace_kind_name(c->kind), c->thread, (unsigned long long)id);
                goto out;
            }
            o->old_id = id;
            o->old_ends = id != 0 && (c->kind == AM_CALL_FREE || !o->failed || o->size == 0);
            if (o->old_ends)
                live[id - 1] = UINT64_MAX;
        }
        if (c->kind != AM_CALL_FREE && !o->failed) {
            struct thread_state *s = &ts[c->thread];
            if (!grow((void **)&s->ids, &s->cap, s->made + 1, sizeof *s->ids) ||
                !grow((void **)&live, &livecap, (size_t)t->blocks + 1, sizeof *live))
                goto oom;
            o->id = ++t->blocks;
            s->ids[s->made++] = o->id;
            live[o->id - 1] = o->size;
        }
        out_n++;
    }
    t->ncalls = out_n;
    rc = 0;
    goto out;
oom:
    fail(err, errlen, "%s: out of memory while reading", path);
out:
    for (size_t i = 0; i < nthreads; i++)
        arr_release(ts[i].ids);
    arr_release(ts);
    arr_release(raws);
    arr_release(live);
    if (rc != 0)
        am_trace_free(t);
    return rc;
}

void am_trace_free(am_trace *t)
{
    arr_release(t->calls);
    free(t->program);
    free(t->command);
    t->calls = NULL;
    t->program = t->command = NULL;
    t->ncalls = 0;
}
