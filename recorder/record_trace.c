/* record_trace.c: the trace file the recording library writes (make record,
 * docs/trace.md): its name, its header, the units written into it, and its
 * closing record. What a unit holds is the callers' (record_buffer.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "record.h"

atomic_int g_on;
static int g_fd = -1;
static pid_t g_pid;
static char g_stem[4096], g_ext[256], g_first[4096];
static char g_prog[256];
static unsigned char g_cmdline[32768];
static size_t g_cmdline_len;

/* one writev a unit: with O_APPEND the units of threads never interleave */
void trace_write(const struct iovec *iov, int n)
{
    struct iovec v[3];
    memcpy(v, iov, (size_t)n * sizeof *v);
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += v[i].iov_len;
    while (total > 0) {
        ssize_t w = writev(g_fd, v, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        total -= (size_t)w;
        while (n > 0 && (size_t)w >= v[0].iov_len) {
            w -= (ssize_t)v[0].iov_len;
            memmove(v, v + 1, (size_t)(n - 1) * sizeof *v);
            n--;
        }
        if (n > 0) {
            v[0].iov_base = (char *)v[0].iov_base + w;
            v[0].iov_len -= (size_t)w;
        }
    }
}

/* ---- its name: FILE, else <stem>.<program>.<pid>[.n]<ext> (docs/trace.md) ---- */
static void text_cat(char *dst, size_t cap, const char *s)
{
    size_t n = strlen(dst);
    while (*s && n + 1 < cap)
        dst[n++] = *s++;
    dst[n] = 0;
}

static void number_cat(char *dst, size_t cap, unsigned long v)
{
    char tmp[24];
    int i = 0;
    do
        tmp[i++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    char out[24];
    int j = 0;
    while (i > 0)
        out[j++] = tmp[--i];
    out[j] = 0;
    text_cat(dst, cap, out);
}

static void read_command(void)
{
    g_cmdline_len = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r;
        while (g_cmdline_len < sizeof g_cmdline &&
               (r = read(fd, g_cmdline + g_cmdline_len, sizeof g_cmdline - g_cmdline_len)) > 0)
            g_cmdline_len += (size_t)r;
        close(fd);
    }
    while (g_cmdline_len > 0 && g_cmdline[g_cmdline_len - 1] == 0)
        g_cmdline_len--;
    /* the program: the last part of argv[0], in characters a file name keeps */
    const char *arg0 = (const char *)g_cmdline, *base = arg0;
    size_t n0 = strnlen(arg0, g_cmdline_len);
    for (size_t i = 0; i < n0; i++)
        if (arg0[i] == '/')
            base = arg0 + i + 1;
    size_t j = 0;
    for (; base < arg0 + n0 && j + 1 < sizeof g_prog; base++) {
        char c = *base;
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                   c == '-' || c == '+' || c == '.';
        g_prog[j++] = keep ? c : '_';
    }
    g_prog[j] = 0;
    if (j == 0)
        text_cat(g_prog, sizeof g_prog, "program");
}

/* FILE's stem and extension: "out/gcc.trace" -> "out/gcc", ".trace" */
static void split_name(const char *path)
{
    g_stem[0] = g_ext[0] = g_first[0] = 0;
    text_cat(g_first, sizeof g_first, path);
    text_cat(g_stem, sizeof g_stem, path);
    char *slash = strrchr(g_stem, '/');
    char *dot = strrchr(g_stem, '.');
    if (dot && dot > (slash ? slash + 1 : g_stem)) {
        text_cat(g_ext, sizeof g_ext, dot);
        *dot = 0;
    }
}

static int open_trace(int origin_fork, int *origin)
{
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC;
    int fd = -1;
    if (!origin_fork) {
        fd = open(g_first, flags, 0644);
        *origin = AM_ORIGIN_FIRST;
    }
    for (unsigned n = 1; fd < 0 && n < 1000; n++) {
        char name[sizeof g_stem + 300];
        name[0] = 0;
        text_cat(name, sizeof name, g_stem);
        text_cat(name, sizeof name, ".");
        text_cat(name, sizeof name, g_prog);
        text_cat(name, sizeof name, ".");
        number_cat(name, sizeof name, (unsigned long)g_pid);
        if (n > 1) {
            text_cat(name, sizeof name, ".");
            number_cat(name, sizeof name, n);
        }
        text_cat(name, sizeof name, g_ext);
        fd = open(name, flags, 0644);
        *origin = origin_fork ? AM_ORIGIN_FORK : AM_ORIGIN_OTHER;
        if (fd < 0 && errno != EEXIST)
            return -1;
    }
    if (fd < 0)
        return -1;
    /* away from the low numbers a program may close or expect free */
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 900);
    if (high >= 0) {
        close(fd);
        fd = high;
    }
    return fd;
}

static void write_header(int origin)
{
    static unsigned char h[sizeof g_cmdline + 512];
    unsigned char body[sizeof g_cmdline + 400], *o = body;
    size_t plen = strlen(g_prog);
    o = put(o, (uint64_t)g_pid);
    o = put(o, (uint64_t)getppid());
    o = put(o, (uint64_t)origin);
    o = put(o, plen);
    memcpy(o, g_prog, plen);
    o += plen;
    o = put(o, g_cmdline_len);
    memcpy(o, g_cmdline, g_cmdline_len);
    o += g_cmdline_len;
    unsigned char *q = h;
    memcpy(q, AM_TRACE_MAGIC, AM_TRACE_MAGIC_LEN);
    q += AM_TRACE_MAGIC_LEN;
    q = put(q, AM_TRACE_VERSION);
    q = put(q, (uint64_t)(o - body));
    struct iovec iov[2] = {{h, (size_t)(q - h)}, {body, (size_t)(o - body)}};
    trace_write(iov, 2);
}

void start_trace(int origin_fork)
{
    g_pid = getpid();
    int origin;
    g_fd = open_trace(origin_fork, &origin);
    if (g_fd < 0)
        return;
    write_header(origin);
    atomic_store(&g_on, 1);
}

/* every thread's written records, then the closing record: at exit, _exit
 * and exec; the threads' buffers are left locked until unlock_buffers */
void close_trace(unsigned reason)
{
    atomic_store(&g_on, 0);
    uint64_t sum[AM_CLOSE_FIELDS] = {0};
    uint64_t peak = atomic_load(&g_peak_of_ended);
    for (struct tstate *t = atomic_load(&g_states); t; t = t->next) {
        lock_buffer(t);
        write_records(t);
        for (int k = 0; k < AM_CALL_KINDS; k++)
            sum[AM_CLOSE_COUNTS + k] += t->counts[k];
        sum[AM_CLOSE_FOREIGN_REALLOCS] += t->foreign_reallocs;
        sum[AM_CLOSE_UNTRACKED] += t->untracked;
        if (t->peak > peak)
            peak = t->peak;
    }
    sum[AM_CLOSE_FOREIGN_FREES] = atomic_load(&g_foreign_frees);
    sum[AM_CLOSE_REASON] = reason;
    sum[AM_CLOSE_THREADS] = atomic_load(&g_threads);
    sum[AM_CLOSE_PEAK_LIVE] = peak;
    sum[AM_CLOSE_FINAL_LIVE] = atomic_load(&g_word) & LIVE_MASK;
    unsigned char body[AM_CLOSE_FIELDS * 10 + 10], head[16], *o = body, *h = head;
    o = put(o, AM_CLOSE_FIELDS);
    for (int f = 0; f < AM_CLOSE_FIELDS; f++)
        o = put(o, sum[f]);
    *h++ = AM_UNIT_CLOSING;
    h = put(h, (uint64_t)(o - body));
    struct iovec iov[2] = {{head, (size_t)(h - head)}, {body, (size_t)(o - body)}};
    trace_write(iov, 2);
}

void name_trace(const char *path)
{
    read_command();
    split_name(path);
}

/* the trace is this process's: a vfork child shares our memory, not our trace */
int owns_trace(void)
{
    return atomic_load(&g_on) && getpid() == g_pid;
}

/* a child of fork: the parent's file is the parent's to write */
void drop_trace(void)
{
    if (g_fd >= 0)
        close(g_fd);
}
