/* counting.c: the owner registry, block headers and the table of the counting
 * wrapper (see counting.h). Strategy independent; compiled into every row but
 * empty in measured (AM_STATS=0) builds. Not fast: one lock for everything. */
#include "counting.h"

#if AM_STATS
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spin_guard.h"

#define MAGIC_LIVE 0x4c49564542304bull  /* "K0BEVIL" */
#define MAGIC_FREED 0x44454552463042ull /* "B0FREED" */

struct am_owner {
    char *name;
    am_owner *parent, *child, *sibling;
    size_t bytes, peak;          /* this owner and its descendants */
    uint64_t allocs, frees;
    size_t d_bytes, d_peak;      /* this owner's own blocks */
    uint64_t d_allocs, d_frees;
    size_t r_bytes, rd_bytes;    /* at the last report */
    uint64_t r_allocs, r_frees, rd_allocs, rd_frees;
};

int am_counting_active;
static am_owner root;
static void *live;               /* newest live counted block (user pointer) */
static AM_THREAD_LOCAL am_owner *current;
static atomic_flag lock_flag = AM_SPIN_GUARD_INIT;
static uint64_t errors;
static char last_error[256];

void am_stats_lock(void) { am_spin_enter(&lock_flag); }

void am_stats_unlock(void) { am_spin_leave(&lock_flag); }

static am_block_hdr read_hdr(const void *user) {
    am_block_hdr b;
    memcpy(&b, (const char *)user - AM_COUNT_HDR, sizeof b);
    return b;
}

static void write_hdr(void *user, const am_block_hdr *b) {
    memcpy((char *)user - AM_COUNT_HDR, b, sizeof *b);
}

static void free_owners(am_owner *o) {
    while (o) {
        am_owner *next = o->sibling;
        free_owners(o->child);
        free(o->name);
        free(o);
        o = next;
    }
}

void am_counting_start(void) {
    am_counting_stop();
    am_counting_active = 1;
}

void am_counting_stop(void) {
    am_stats_lock();
    free_owners(root.child);
    memset(&root, 0, sizeof root);
    live = NULL;
    errors = 0;
    last_error[0] = 0;
    am_counting_active = 0;
    current = NULL;
    am_stats_unlock();
}

am_owner *am_owner_current(void) { return current; }

am_owner *am_owner_child(am_owner *parent, const char *name) {
    am_owner *p = parent ? parent : &root;
    am_stats_lock();
    am_owner *o = p->child;
    while (o && strcmp(o->name, name) != 0) o = o->sibling;
    if (!o) {
        size_t len = strlen(name);
        o = calloc(1, sizeof *o);
        if (o) o->name = malloc(len + 1);
        if (o && o->name) {
            memcpy(o->name, name, len + 1);
            o->parent = p;
            o->sibling = p->child;
            p->child = o;
        } else {
            free(o);
            o = p; /* out of memory: count under the parent */
        }
    }
    am_stats_unlock();
    return o == &root ? NULL : o;
}

void am_owner_enter(am_owner *o) { current = o; }

void am_owner_push(const char *name) { current = am_owner_child(current, name); }

void am_owner_pop(void) {
    if (current) current = current->parent == &root ? NULL : current->parent;
}

static void record_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    errors++;
    fprintf(stderr, "am counting: %s\n", last_error);
}

uint64_t am_counting_errors(void) { return errors; }
const char *am_counting_last_error(void) { return last_error; }

static void count(am_owner *o, size_t n, int alloc) {
    if (alloc) {
        o->d_bytes += n;
        o->d_allocs++;
        if (o->d_bytes > o->d_peak) o->d_peak = o->d_bytes;
    } else {
        o->d_bytes -= n;
        o->d_frees++;
    }
    for (; o; o = o->parent) {
        if (alloc) {
            o->bytes += n;
            o->allocs++;
            if (o->bytes > o->peak) o->peak = o->bytes;
        } else {
            o->bytes -= n;
            o->frees++;
        }
    }
}

static void unlink_block(void *user, const am_block_hdr *b) {
    if (b->prev) {
        am_block_hdr p = read_hdr(b->prev);
        p.next = b->next;
        write_hdr(b->prev, &p);
    } else {
        live = b->next;
    }
    if (b->next) {
        am_block_hdr x = read_hdr(b->next);
        x.prev = b->prev;
        write_hdr(b->next, &x);
    }
    (void)user;
}

void am_counted_track(void *user, size_t n, const void *heap) {
    am_block_hdr b;
    am_stats_lock();
    b.prev = NULL;
    b.next = live;
    b.heap = heap;
    b.owner = current ? current : &root;
    b.size = n;
    b.magic = MAGIC_LIVE;
    write_hdr(user, &b);
    if (live) {
        am_block_hdr x = read_hdr(live);
        x.prev = user;
        write_hdr(live, &x);
    }
    live = user;
    count(b.owner, n, 1);
    am_stats_unlock();
}

int am_counted_untrack(void *user, size_t n, size_t *size) {
    am_stats_lock();
    am_block_hdr b = read_hdr(user);
    int rc = 0;
    if (b.magic == MAGIC_FREED) {
        record_error("double free of %p (%zu bytes)", user, n);
        rc = -1;
    } else if (b.magic != MAGIC_LIVE) {
        record_error("free of %p (%zu bytes): not a live counted block (bad magic)", user, n);
        rc = -1;
    } else {
        if (b.size != n)
            record_error("free of %p with the wrong size: %zu bytes, allocated with %zu", user, n, b.size);
        unlink_block(user, &b);
        count(b.owner, b.size, 0);
        b.magic = MAGIC_FREED;
        write_hdr(user, &b);
        *size = b.size;
    }
    am_stats_unlock();
    return rc;
}

void am_counted_forget_heap(const void *heap, int freed) {
    am_stats_lock();
    void *u = live;
    while (u) {
        am_block_hdr b = read_hdr(u);
        void *next = b.next;
        if (b.heap == heap) {
            unlink_block(u, &b);
            if (freed) count(b.owner, b.size, 0);
        }
        u = next;
    }
    am_stats_unlock();
}

int am_owner_counts_of(const char *path, am_owner_counts *out) {
    am_stats_lock();
    am_owner *o = &root;
    while (o && *path) {
        const char *slash = strchr(path, '/');
        size_t len = slash ? (size_t)(slash - path) : strlen(path);
        am_owner *c = o->child;
        while (c && (strncmp(c->name, path, len) != 0 || c->name[len])) c = c->sibling;
        o = c;
        path += len + (slash ? 1 : 0);
    }
    if (o) {
        out->bytes = o->bytes;
        out->peak = o->peak;
        out->allocs = o->allocs;
        out->frees = o->frees;
        out->direct_bytes = o->d_bytes;
        out->direct_allocs = o->d_allocs;
        out->direct_frees = o->d_frees;
    }
    am_stats_unlock();
    return o ? 0 : -1;
}

/* ---- the table ---- */

typedef struct text {
    char *s;
    size_t len, cap;
    int failed;
} text;

static void put(text *t, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || t->failed) return;
    if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap * 2 : 4096) + (size_t)n;
        char *s = realloc(t->s, cap);
        if (!s) { t->failed = 1; return; }
        t->s = s;
        t->cap = cap;
    }
    memcpy(t->s + t->len, line, (size_t)n + 1);
    t->len += (size_t)n;
}

/* 1234567 -> "1,234,567"; negative numbers keep their sign; blank_zero: "" */
static const char *group(char *buf, int64_t v, int blank_zero) {
    char digits[32];
    if (v == 0 && blank_zero) { buf[0] = 0; return buf; }
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)u);
    char *o = buf;
    if (v < 0) *o++ = '-';
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0) *o++ = ',';
        *o++ = digits[i];
    }
    *o = 0;
    return buf;
}

static const char *const COLUMNS[] = {"Bytes Allocated", "-delta-", "Max Bytes Allocated", "Allocations",
                                      "-delta-", "Deallocations", "-delta-"};
#define NCOL 7
#define NAME_MIN 33

static void put_row(text *t, int width, int depth, const char *name, size_t bytes, int64_t d_bytes,
                    size_t peak, uint64_t allocs, int64_t d_allocs, uint64_t frees, int64_t d_frees) {
    char label[256], b[NCOL][40];
    snprintf(label, sizeof label, "%*s%s", 4 + 2 * depth, "", name);
    int64_t v[NCOL] = {(int64_t)bytes, d_bytes, (int64_t)peak, (int64_t)allocs, d_allocs, (int64_t)frees, d_frees};
    for (int i = 0; i < NCOL; i++) group(b[i], v[i], i == 1 || i == 4 || i == 6);
    put(t, "%-*s", width, label);
    for (int i = 0; i < NCOL; i++) put(t, "|%*s", (int)strlen(COLUMNS[i]) + 1, b[i]);
    put(t, "\n");
}

static int name_width(const am_owner *o, int depth) {
    int w = 0;
    for (; o; o = o->sibling) {
        int here = 4 + 2 * depth + (int)strlen(o->name) + 2;
        int below = name_width(o->child, depth + 1);
        if (here > w) w = here;
        if (below > w) w = below;
    }
    return w;
}

/* children by bytes in use, largest first; ties by name */
static int by_bytes(const void *a, const void *b) {
    const am_owner *x = *(const am_owner *const *)a, *y = *(const am_owner *const *)b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void put_direct(text *t, int width, int depth, am_owner *o) {
    put_row(t, width, depth, "*direct*", o->d_bytes, (int64_t)(o->d_bytes - o->rd_bytes), o->d_peak,
            o->d_allocs, (int64_t)(o->d_allocs - o->rd_allocs), o->d_frees,
            (int64_t)(o->d_frees - o->rd_frees));
}

static void put_children(text *t, int width, int depth, am_owner *parent) {
    size_t n = 0;
    for (am_owner *c = parent->child; c; c = c->sibling) n++;
    if (parent->d_allocs && (n || parent == &root)) put_direct(t, width, depth, parent);
    if (!n) return;
    am_owner **kids = malloc(n * sizeof *kids);
    if (!kids) { t->failed = 1; return; }
    n = 0;
    for (am_owner *c = parent->child; c; c = c->sibling) kids[n++] = c;
    qsort(kids, n, sizeof *kids, by_bytes);
    for (size_t i = 0; i < n; i++) {
        am_owner *o = kids[i];
        put_row(t, width, depth, o->name, o->bytes, (int64_t)(o->bytes - o->r_bytes), o->peak, o->allocs,
                (int64_t)(o->allocs - o->r_allocs), o->frees, (int64_t)(o->frees - o->r_frees));
        put_children(t, width, depth + 1, o);
    }
    free(kids);
}

static void snapshot(am_owner *o) {
    for (; o; o = o->sibling) {
        o->r_bytes = o->bytes;
        o->r_allocs = o->allocs;
        o->r_frees = o->frees;
        o->rd_bytes = o->d_bytes;
        o->rd_allocs = o->d_allocs;
        o->rd_frees = o->d_frees;
        snapshot(o->child);
    }
}

char *am_counting_report(void) {
    text t = {NULL, 0, 0, 0};
    am_stats_lock();
    int width = name_width(root.child, 0);
    if (width < NAME_MIN) width = NAME_MIN;
    put(&t, "%-*s", width, "");
    for (int i = 0; i < NCOL; i++) put(&t, "|%*s", (int)strlen(COLUMNS[i]) + 1, COLUMNS[i]);
    put(&t, "\n");
    put_children(&t, width, 0, &root);
    snapshot(&root);
    am_stats_unlock();
    if (t.failed) { free(t.s); return NULL; }
    return t.s;
}

#else
typedef int am_counting_compiled_out; /* measured builds: nothing here */
#endif
