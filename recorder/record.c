/* record.c: the recording library of `make record` (LD_PRELOAD, Linux and
 * glibc only). It writes each call of the malloc family a process makes into
 * a trace (docs/trace.md) and lets the C library serve it. It is not a malloc:
 * it allocates nothing through malloc, and takes no lock on the fast path. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "trace_format.h"

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
/* initial-exec: a preloaded library's TLS is static, and the general model
 * would reach it through __tls_get_addr, which may call malloc */
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- the C library's functions, found with dlsym(RTLD_NEXT) ---- */
static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execv)(const char *, char *const[]);
    int (*execvp)(const char *, char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    void (*exit_now)(int);
    void (*exit_now_c99)(int);
} real;

/* dlsym may allocate before real.calloc is known: such calls are served from
 * here, and never freed */
static _Alignas(64) unsigned char boot_heap[1 << 16];
static atomic_size_t boot_used;

static void *boot_alloc(size_t n)
{
    size_t at = atomic_fetch_add(&boot_used, (n + 31) & ~(size_t)15);
    if (at + 16 + n > sizeof boot_heap)
        return NULL;
    memcpy(boot_heap + at, &n, sizeof n); /* the size, for realloc */
    return boot_heap + at + 16;
}

static int in_boot_heap(const void *p)
{
    return (const unsigned char *)p >= boot_heap && (const unsigned char *)p < boot_heap + sizeof boot_heap;
}

/* ---- the process's trace ---- */
static atomic_int g_on;          /* recording: set once the trace is open, cleared at its close */
static atomic_int g_booting;
static int g_fd = -1;
static pid_t g_pid;
static pthread_key_t g_key;
static char g_stem[4096], g_ext[256], g_first[4096];
static char g_prog[256];
static unsigned char g_cmdline[32768];
static size_t g_cmdline_len;

/* One word holds the live bytes (low 40 bits) and the sequence number of the
 * last call (its low 24 bits, high): a call's single fetch_add orders it among
 * all calls and moves the live bytes, so that the order the trace gives and
 * the peak the closing record gives are of the same history. */
#define LIVE_BITS 40
#define LIVE_MASK ((UINT64_C(1) << LIVE_BITS) - 1)
#define SEQ_ONE (UINT64_C(1) << LIVE_BITS)
#ifndef SEQ_BITS /* smaller in a test build, to pass 2^SEQ_BITS calls quickly */
#define SEQ_BITS 24
#endif
#define SEQ_MASK ((UINT32_C(1) << SEQ_BITS) - 1)
static _Alignas(64) _Atomic uint64_t g_word;
/* The word keeps the sequence number's low 24 bits only. The whole number of
 * a call is the one with those bits nearest to this hint: a recent call's
 * number, raised whenever a call crosses a multiple of 2^HINT_BITS. Read each
 * call, written once in 2^HINT_BITS calls: it is off by less than 2^23 unless
 * a thread stops for millions of calls between its add and its read. */
#ifndef HINT_BITS
#define HINT_BITS 20
#endif
static _Alignas(64) _Atomic uint64_t g_hint;
static atomic_uint g_threads;
static _Atomic uint64_t g_peak_of_ended;
/* frees of pointers the table does not hold: rare, and counted without
 * giving the thread a state (a thread that only makes these writes no records) */
static _Atomic uint64_t g_foreign_frees;

/* ---- a thread's buffer: its records, written by itself alone ---- */
#define BUF_SIZE (32 * 1024)
#define MAX_RECORD 64
struct tstate {
    struct tstate *next;
    uint32_t tid;
    uint64_t seq; /* the sequence number of the thread's last call */
    uint64_t nalloc; /* the blocks this thread allocated: a block is named (thread, number) */
    uint64_t counts[AM_CALL_KINDS];
    uint64_t foreign_reallocs, untracked;
    uint64_t peak;
    atomic_int flush_lock;     /* held by whoever writes this buffer out */
    _Atomic size_t flushed;    /* [flushed, committed) is whole records not yet written */
    _Atomic size_t committed;
    size_t pos;
    unsigned char buf[BUF_SIZE];
};
static _Atomic(struct tstate *) g_states;
static TLS struct tstate *t_state;
static TLS int t_busy;

/* ---- the address -> block table: open addressing in mmap'd memory ----
 * A slot's key is 0 (never used), TOMB (freed) or the block's address. An
 * address is inserted by the thread that got it and removed by whichever
 * frees it, before it goes back to the C library, so no address is in the
 * table twice. The home slot keeps neighbouring blocks on neighbouring slots:
 * the table's pages are touched as the heap's are. */
#define TOMB ((uintptr_t)1)
#define MAX_PROBE 4096
struct slot {
    _Atomic uintptr_t key;
    uint64_t block; /* thread << 40 | number */
    uint64_t size;
};
static struct slot *g_table;
static size_t g_table_bytes, g_mask;

static size_t home_slot(uintptr_t a)
{
    return ((a >> 4) ^ (a >> 28)) & g_mask;
}

static int table_insert(uintptr_t a, uint64_t block, uint64_t size)
{
    size_t i = home_slot(a);
    for (int n = 0; n < MAX_PROBE; n++, i = (i + 1) & g_mask) {
        uintptr_t k = atomic_load_explicit(&g_table[i].key, memory_order_relaxed);
        if (UNLIKELY(k == a)) { /* freed where no wrapper saw it: the C library just gave it anew */
            g_table[i].block = block;
            g_table[i].size = size;
            return 1;
        }
        while (k == 0 || k == TOMB) {
            if (atomic_compare_exchange_weak(&g_table[i].key, &k, a)) {
                g_table[i].block = block;
                g_table[i].size = size;
                return 1;
            }
        }
    }
    return 0;
}

static int table_remove(uintptr_t a, uint64_t *block, uint64_t *size)
{
    size_t i = home_slot(a);
    for (int n = 0; n < MAX_PROBE; n++, i = (i + 1) & g_mask) {
        uintptr_t k = atomic_load_explicit(&g_table[i].key, memory_order_acquire);
        if (k == a) {
            *block = g_table[i].block;
            *size = g_table[i].size;
            atomic_store_explicit(&g_table[i].key, TOMB, memory_order_release);
            return 1;
        }
        if (k == 0)
            return 0;
    }
    return 0;
}

static int table_map(void)
{
    for (int bits = 24; bits >= 16; bits -= 2) {
        size_t bytes = ((size_t)1 << bits) * sizeof(struct slot);
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            g_table = p;
            g_table_bytes = bytes;
            g_mask = ((size_t)1 << bits) - 1;
            return 1;
        }
    }
    return 0;
}

/* ---- writing ---- */
static unsigned char *put(unsigned char *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *o++ = (unsigned char)v;
    return o;
}

static void write_all(const struct iovec *iov, int n)
{
    /* one writev a unit: with O_APPEND the units of threads never interleave */
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

/* writes [flushed, committed) as one unit; the caller holds flush_lock */
static void write_records(struct tstate *t)
{
    size_t from = atomic_load(&t->flushed), to = atomic_load_explicit(&t->committed, memory_order_acquire);
    if (to <= from)
        return;
    unsigned char head[24], *o = head;
    *o++ = AM_UNIT_RECORDS;
    o = put(o, t->tid);
    o = put(o, to - from);
    struct iovec iov[2] = {{head, (size_t)(o - head)}, {t->buf + from, to - from}};
    int saved = errno;
    write_all(iov, 2);
    errno = saved;
    atomic_store(&t->flushed, to);
}

static void lock_buffer(struct tstate *t)
{
    int spins = 0;
    while (atomic_exchange(&t->flush_lock, 1) != 0)
        if (++spins > 100)
            sched_yield();
}

static void __attribute__((noinline)) flush_own(struct tstate *t)
{
    lock_buffer(t);
    write_records(t);
    atomic_store(&t->flushed, 0);
    atomic_store(&t->committed, 0);
    t->pos = 0;
    atomic_store(&t->flush_lock, 0);
}

static void thread_ended(void *p)
{
    struct tstate *t = p;
    flush_own(t);
    /* the state stays listed: its counts belong to the closing record, and
     * the C library's own clean-up may still call free in this thread */
    uint64_t old = atomic_load(&g_peak_of_ended);
    while (t->peak > old && !atomic_compare_exchange_weak(&g_peak_of_ended, &old, t->peak)) {
    }
}

static void __attribute__((noinline)) *new_state(void)
{
    t_busy = 1;
    struct tstate *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED) {
        t_busy = 0;
        return NULL;
    }
    t->tid = atomic_fetch_add(&g_threads, 1);
    struct tstate *head = atomic_load(&g_states);
    do
        t->next = head;
    while (!atomic_compare_exchange_weak(&g_states, &head, t));
    pthread_setspecific(g_key, t);
    t_state = t;
    t_busy = 0;
    return t;
}

static inline struct tstate *state(void)
{
    struct tstate *t = t_state;
    if (UNLIKELY(t == NULL))
        t = new_state();
    return t;
}

static void __attribute__((noinline)) raise_hint(uint64_t seq)
{
    uint64_t old = atomic_load_explicit(&g_hint, memory_order_relaxed);
    while (old < seq && !atomic_compare_exchange_weak_explicit(&g_hint, &old, seq, memory_order_relaxed,
                                                                memory_order_relaxed)) {
    }
}

/* one call: its place in the order, the live bytes, the record's first byte */
static inline unsigned char *begin(struct tstate *t, unsigned kind, int64_t live_change, unsigned flags)
{
    if (UNLIKELY(t->pos > BUF_SIZE - MAX_RECORD))
        flush_own(t);
    uint64_t w = atomic_fetch_add_explicit(&g_word, SEQ_ONE + (uint64_t)live_change, memory_order_relaxed) +
                 SEQ_ONE + (uint64_t)live_change;
    uint32_t low = (uint32_t)(w >> LIVE_BITS) & SEQ_MASK;
    uint64_t live = w & LIVE_MASK;
    if (live > t->peak)
        t->peak = live;
    uint64_t hint = atomic_load_explicit(&g_hint, memory_order_relaxed);
    uint32_t ahead = (low - (uint32_t)hint) & SEQ_MASK;
    uint64_t seq = ahead < (SEQ_MASK >> 1) || hint < (SEQ_MASK + 1 - ahead) ? hint + ahead
                                                                             : hint - (SEQ_MASK + 1 - ahead);
    if (UNLIKELY((seq >> HINT_BITS) > (hint >> HINT_BITS)))
        raise_hint(seq);
    unsigned char *o = t->buf + t->pos;
    uint64_t step = seq - t->seq;
    t->seq = seq;
    t->counts[kind]++;
    if (LIKELY(step == 1)) {
        *o++ = (unsigned char)(kind | flags);
        return o;
    }
    *o++ = (unsigned char)(kind | flags | AM_REC_SEQ);
    return put(o, step);
}

static inline void commit(struct tstate *t, unsigned char *end)
{
    t->pos = (size_t)(end - t->buf);
    atomic_store_explicit(&t->committed, t->pos, memory_order_release);
}

static inline unsigned char *put_block(struct tstate *t, unsigned char *tag, unsigned char *o, uint64_t block)
{
    uint32_t owner = (uint32_t)(block >> 40);
    uint64_t number = block & LIVE_MASK;
    if (LIKELY(owner == t->tid))
        return put(o, t->nalloc - number);
    *tag |= AM_REC_OTHER;
    return put(put(o, owner), number);
}

static inline void new_block(struct tstate *t, void *p, uint64_t size)
{
    t->nalloc++;
    if (UNLIKELY(!table_insert((uintptr_t)p, (uint64_t)t->tid << 40 | t->nalloc, size)))
        t->untracked++;
}

static uint64_t product(size_t a, size_t b)
{
    size_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* malloc, valloc, pvalloc, calloc and the aligned ones: count 0 for no calloc */
static inline void record_alloc(unsigned kind, void *p, size_t count, size_t size, size_t align)
{
    struct tstate *t = state();
    if (UNLIKELY(t == NULL))
        return;
    uint64_t bytes = kind == AM_CALL_CALLOC ? product(count, size) : size;
    unsigned char *o = begin(t, kind, p ? (int64_t)bytes : 0, p ? 0 : AM_REC_NULL);
    if (kind == AM_CALL_CALLOC)
        o = put(o, count);
    if (align)
        o = put(o, align);
    o = put(o, size);
    if (p)
        new_block(t, p, bytes);
    commit(t, o);
}

/* ---- the trace file ---- */
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
    write_all(iov, 2);
}

static void start_trace(int origin_fork)
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
 * and exec; the threads' buffers are left locked until reopen_after_exec */
static void close_trace(unsigned reason)
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
    write_all(iov, 2);
}

static void reopen_after_exec(void)
{
    for (struct tstate *t = atomic_load(&g_states); t; t = t->next)
        atomic_store(&t->flush_lock, 0);
    atomic_store(&g_on, 1);
}

/* a child of fork: a trace of its own, as one thread that has allocated
 * nothing yet; blocks it inherited are not its recorded ones */
static void after_fork_child(void)
{
    if (!atomic_load(&g_on))
        return;
    atomic_store(&g_on, 0);
    if (g_fd >= 0)
        close(g_fd);
    munmap(g_table, g_table_bytes);
    table_map();
    atomic_store(&g_word, 0);
    atomic_store(&g_hint, 0);
    atomic_store(&g_peak_of_ended, 0);
    atomic_store(&g_foreign_frees, 0);
    atomic_store(&g_states, NULL);
    atomic_store(&g_threads, 0);
    struct tstate *t = t_state;
    if (t) {
        t->tid = atomic_fetch_add(&g_threads, 1);
        t->next = NULL;
        t->seq = 0;
        t->nalloc = 0;
        memset(t->counts, 0, sizeof t->counts);
        t->foreign_reallocs = t->untracked = t->peak = 0;
        atomic_store(&t->flush_lock, 0);
        atomic_store(&t->flushed, 0);
        atomic_store(&t->committed, 0);
        t->pos = 0;
        atomic_store(&g_states, t);
    }
    start_trace(1);
}

static void find_real(void)
{
    atomic_store(&g_booting, 1);
    real.calloc = dlsym(RTLD_NEXT, "calloc");
    real.malloc = dlsym(RTLD_NEXT, "malloc");
    real.realloc = dlsym(RTLD_NEXT, "realloc");
    real.free = dlsym(RTLD_NEXT, "free");
    real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real.memalign = dlsym(RTLD_NEXT, "memalign");
    real.valloc = dlsym(RTLD_NEXT, "valloc");
    real.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
    real.execve = dlsym(RTLD_NEXT, "execve");
    real.execv = dlsym(RTLD_NEXT, "execv");
    real.execvp = dlsym(RTLD_NEXT, "execvp");
    real.execvpe = dlsym(RTLD_NEXT, "execvpe");
    real.fexecve = dlsym(RTLD_NEXT, "fexecve");
    real.exit_now = dlsym(RTLD_NEXT, "_exit");
    real.exit_now_c99 = dlsym(RTLD_NEXT, "_Exit");
    atomic_store(&g_booting, 0);
}

static atomic_int g_started;

__attribute__((constructor)) static void recorder_start(void)
{
    if (atomic_exchange(&g_started, 1))
        return;
    if (real.malloc == NULL)
        find_real();
    const char *path = getenv("AM_TRACE");
    if (path == NULL || *path == 0)
        return;
    if (pthread_key_create(&g_key, thread_ended) != 0 || !table_map())
        return;
    read_command();
    split_name(path);
    pthread_atfork(NULL, NULL, after_fork_child);
    start_trace(0);
}

__attribute__((destructor)) static void recorder_end(void)
{
    if (atomic_load(&g_on) && getpid() == g_pid)
        close_trace(AM_END_EXIT);
}

/* a call before the constructor (another library's constructor, ld.so) */
static void __attribute__((noinline)) early(void)
{
    if (atomic_load(&g_booting))
        return;
    recorder_start();
}

#define NEED_REAL(fn)                                                                                              \
    do {                                                                                                           \
        if (UNLIKELY(real.fn == NULL))                                                                             \
            early();                                                                                               \
    } while (0)
#define BOOTING() (UNLIKELY(real.free == NULL) && atomic_load(&g_booting))
#define RECORDING() (LIKELY(atomic_load_explicit(&g_on, memory_order_relaxed)) && LIKELY(!t_busy))

/* ---- the malloc family ---- */
EXPORT void *malloc(size_t n)
{
    if (BOOTING())
        return boot_alloc(n);
    NEED_REAL(malloc);
    void *p = real.malloc(n);
    if (RECORDING())
        record_alloc(AM_CALL_MALLOC, p, 0, n, 0);
    return p;
}

EXPORT void *calloc(size_t count, size_t n)
{
    if (BOOTING()) {
        uint64_t bytes = product(count, n);
        return bytes == UINT64_MAX ? NULL : boot_alloc((size_t)bytes); /* static memory is zero */
    }
    NEED_REAL(calloc);
    void *p = real.calloc(count, n);
    if (RECORDING())
        record_alloc(AM_CALL_CALLOC, p, count, n, 0);
    return p;
}

EXPORT void free(void *p)
{
    if (UNLIKELY(in_boot_heap(p)))
        return;
    NEED_REAL(free);
    if (RECORDING()) {
        uint64_t block, size;
        if (p != NULL && UNLIKELY(!table_remove((uintptr_t)p, &block, &size))) {
            atomic_fetch_add_explicit(&g_foreign_frees, 1, memory_order_relaxed);
        } else {
            struct tstate *t = state();
            if (LIKELY(t != NULL)) {
                unsigned char *o = begin(t, AM_CALL_FREE, p ? -(int64_t)size : 0, p ? 0 : AM_REC_NULL);
                if (p)
                    o = put_block(t, t->buf + t->pos, o, block); /* the tag is at pos */
                commit(t, o);
            }
        }
    }
    real.free(p);
}

/* realloc and reallocarray: the old block ends when a block comes of the call
 * or the size is 0 (glibc frees then); else it stays */
static void *resize(unsigned kind, void *old, size_t count, size_t n)
{
    size_t bytes = n;
    if (kind == AM_CALL_REALLOCARRAY && __builtin_mul_overflow(count, n, &bytes)) {
        bytes = SIZE_MAX;
    }
    if (UNLIKELY(in_boot_heap(old) || BOOTING())) {
        size_t had = 0;
        if (old)
            memcpy(&had, (unsigned char *)old - 16, sizeof had);
        void *p = bytes == SIZE_MAX ? NULL : malloc(bytes);
        if (p)
            memcpy(p, old, had < bytes ? had : bytes);
        return p;
    }
    NEED_REAL(realloc);
    if (!RECORDING()) {
        if (bytes == SIZE_MAX) {
            errno = ENOMEM;
            return NULL;
        }
        return real.realloc(old, bytes);
    }
    struct tstate *t = state();
    uint64_t block = 0, size = 0;
    int known = old != NULL && table_remove((uintptr_t)old, &block, &size);
    void *p;
    if (bytes == SIZE_MAX) {
        errno = ENOMEM;
        p = NULL;
    } else {
        p = real.realloc(old, bytes);
    }
    if (UNLIKELY(t == NULL))
        return p;
    if (old != NULL && !known)
        t->foreign_reallocs++;
    int old_ends = known && (p != NULL || bytes == 0);
    if (known && !old_ends)
        table_insert((uintptr_t)old, block, size);
    int64_t change = (p ? (int64_t)bytes : 0) - (old_ends ? (int64_t)size : 0);
    unsigned char *o = begin(t, kind, change, (p ? 0 : AM_REC_NULL) | (known ? 0 : AM_REC_NO_OLD));
    unsigned char *tag = t->buf + t->pos;
    if (known)
        o = put_block(t, tag, o, block);
    if (kind == AM_CALL_REALLOCARRAY)
        o = put(o, count);
    o = put(o, n);
    if (p)
        new_block(t, p, bytes);
    commit(t, o);
    return p;
}

EXPORT void *realloc(void *old, size_t n)
{
    return resize(AM_CALL_REALLOC, old, 1, n);
}

EXPORT void *reallocarray(void *old, size_t count, size_t n)
{
    return resize(AM_CALL_REALLOCARRAY, old, count, n);
}

/* the aligned ones: glibc serves them without calling malloc, but t_busy keeps
 * a C library that does from recording a call twice */
#define ALIGNED(kind, call, align, n)                                                                              \
    do {                                                                                                           \
        int was = t_busy;                                                                                          \
        t_busy = 1;                                                                                                \
        void *p = call;                                                                                            \
        t_busy = was;                                                                                              \
        if (RECORDING())                                                                                           \
            record_alloc(kind, p, 0, n, align);                                                                    \
        return p;                                                                                                  \
    } while (0)

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    NEED_REAL(aligned_alloc);
    ALIGNED(AM_CALL_ALIGNED_ALLOC, real.aligned_alloc(align, n), align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
    NEED_REAL(memalign);
    ALIGNED(AM_CALL_MEMALIGN, real.memalign(align, n), align, n);
}

EXPORT void *valloc(size_t n)
{
    NEED_REAL(valloc);
    ALIGNED(AM_CALL_VALLOC, real.valloc(n), 0, n);
}

EXPORT void *pvalloc(size_t n)
{
    NEED_REAL(pvalloc);
    ALIGNED(AM_CALL_PVALLOC, real.pvalloc(n), 0, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    NEED_REAL(posix_memalign);
    int was = t_busy;
    t_busy = 1;
    int r = real.posix_memalign(out, align, n);
    t_busy = was;
    if (RECORDING())
        record_alloc(AM_CALL_POSIX_MEMALIGN, r == 0 ? *out : NULL, 0, n, align);
    return r;
}

/* ---- exec and _exit: this process's trace ends here ---- */
static int before_exec(void)
{
    if (!atomic_load(&g_on) || getpid() != g_pid) /* a vfork child shares our memory: not its trace */
        return 0;
    close_trace(AM_END_EXEC);
    return 1;
}

static int after_failed_exec(int closed, int r)
{
    int saved = errno;
    if (closed)
        reopen_after_exec();
    errno = saved;
    return r;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    NEED_REAL(execve);
    int c = before_exec();
    return after_failed_exec(c, real.execve(path, argv, envp));
}

EXPORT int execv(const char *path, char *const argv[])
{
    NEED_REAL(execv);
    int c = before_exec();
    return after_failed_exec(c, real.execv(path, argv));
}

EXPORT int execvp(const char *file, char *const argv[])
{
    NEED_REAL(execvp);
    int c = before_exec();
    return after_failed_exec(c, real.execvp(file, argv));
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    NEED_REAL(execvpe);
    int c = before_exec();
    return after_failed_exec(c, real.execvpe(file, argv, envp));
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    NEED_REAL(fexecve);
    int c = before_exec();
    return after_failed_exec(c, real.fexecve(fd, argv, envp));
}

/* execl, execlp, execle: their arguments gathered into an array */
#define MAX_LIST_ARGS 4096
static int exec_list(int which, const char *path, const char *arg, va_list ap)
{
    char *argv[MAX_LIST_ARGS];
    int n = 0;
    argv[n++] = (char *)arg;
    while (argv[n - 1] != NULL) {
        if (n == MAX_LIST_ARGS) {
            errno = E2BIG;
            return -1;
        }
        argv[n++] = va_arg(ap, char *);
    }
    if (which == 2) {
        char *const *envp = va_arg(ap, char *const *);
        return execve(path, argv, envp);
    }
    return which == 1 ? execvp(path, argv) : execv(path, argv);
}

EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int r = exec_list(0, path, arg, ap);
    va_end(ap);
    return r;
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int r = exec_list(1, file, arg, ap);
    va_end(ap);
    return r;
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int r = exec_list(2, path, arg, ap);
    va_end(ap);
    return r;
}

EXPORT void _exit(int status)
{
    NEED_REAL(exit_now);
    if (atomic_load(&g_on) && getpid() == g_pid)
        close_trace(AM_END__EXIT);
    real.exit_now(status);
    __builtin_unreachable();
}

EXPORT void _Exit(int status)
{
    NEED_REAL(exit_now_c99);
    if (atomic_load(&g_on) && getpid() == g_pid)
        close_trace(AM_END__EXIT);
    real.exit_now_c99(status);
    __builtin_unreachable();
}
