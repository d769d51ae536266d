/* record.h: what the files of the recording library share (make record,
 * LD_PRELOAD, Linux and glibc only): the C library's functions, the order of
 * calls, the threads' buffers, and the functions each file offers the others.
 * Not a public header: nothing here is exported from the library.
 *   record_calls.c    the malloc family: the fast path, the address table
 *   record_buffer.c   a thread's buffer: made, written out, summed at the close
 *   record_trace.c    the trace file: its name, header and closing record
 *   record_process.c  the process: start, fork, exec, _exit */
#ifndef AM_RECORD_H
#define AM_RECORD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "trace_format.h"

/* Every name below is hidden: the library exports the wrappers alone. The
 * pragma, unlike -fvisibility=hidden, reaches extern declarations too, so a
 * file reads another's variables directly and not through the GOT. */
#pragma GCC visibility push(hidden)

#define EXPORT __attribute__((visibility("default")))
#define NOINLINE __attribute__((noinline))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
/* initial-exec: a preloaded library's TLS is static, and the general model
 * would reach it through __tls_get_addr, which may call malloc */
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- the C library's functions, found with dlsym(RTLD_NEXT) (record_process.c) ---- */
struct real_functions {
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
};
extern struct real_functions real;
extern atomic_int g_booting; /* dlsym is running: calls are served from the boot heap */
void early(void);            /* a call before the constructor: find the functions, start */
#define NEED_REAL(fn)                                                                                              \
    do {                                                                                                           \
        if (UNLIKELY(real.fn == NULL))                                                                             \
            early();                                                                                               \
    } while (0)

/* ---- the order of calls (record_calls.c) ----
 * One word holds the live bytes (low 40 bits) and the sequence number of the
 * last call (its low 24 bits, high): a call's single fetch_add orders it among
 * all calls and moves the live bytes, so that the order the trace gives and
 * the peak the closing record gives are of the same history. */
#define LIVE_BITS 40
#define LIVE_MASK ((UINT64_C(1) << LIVE_BITS) - 1)
#define SEQ_ONE (UINT64_C(1) << LIVE_BITS)
extern _Atomic uint64_t g_word;
extern _Atomic uint64_t g_hint;
/* frees of pointers the table does not hold: rare, and counted without
 * giving the thread a state (a thread that only makes these writes no records) */
extern _Atomic uint64_t g_foreign_frees;
/* a child of fork: an empty address table, the order and live bytes from 0 */
void calls_after_fork(void);
int table_map(void);

/* ---- a thread's buffer: its records, written by itself alone (record_buffer.c) ---- */
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
extern _Atomic(struct tstate *) g_states;
extern atomic_uint g_threads;
extern _Atomic uint64_t g_peak_of_ended;
extern TLS struct tstate *t_state;
extern TLS int t_busy; /* inside a wrapper that calls another: the inner call is not recorded */
int buffers_start(void);  /* the key whose destructor flushes an ending thread's buffer */
struct tstate *new_state(void);
void flush_own(struct tstate *t);
void lock_buffer(struct tstate *t);
void write_records(struct tstate *t);
void unlock_buffers(void);
void buffers_after_fork(void);

/* ---- the trace file (record_trace.c) ---- */
extern atomic_int g_on; /* recording: set once the trace is open, cleared at its close */
void name_trace(const char *path);
void start_trace(int origin_fork);
void close_trace(unsigned reason);
void drop_trace(void);
int owns_trace(void);
void trace_write(const struct iovec *iov, int n);

/* a varint, as the format writes every number */
static inline unsigned char *put(unsigned char *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *o++ = (unsigned char)v;
    return o;
}

#pragma GCC visibility pop

#endif
