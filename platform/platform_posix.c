/* platform_posix.c: the POSIX side of platform.h (Linux first, other Unixes
 * where the calls exist). Nothing here is on a measured fast path except the
 * clock, which is read once per sample. */
#if !defined(_WIN32)
#define _GNU_SOURCE 1
#include "platform.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/personality.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

uint64_t am_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct am_thread { pthread_t id; am_thread_fn fn; void *arg; };

static void *thread_trampoline(void *p) {
    am_thread *t = p;
    t->fn(t->arg);
    return NULL;
}

am_thread *am_thread_start(am_thread_fn fn, void *arg) {
    am_thread *t = malloc(sizeof *t);
    if (!t) return NULL;
    t->fn = fn;
    t->arg = arg;
    if (pthread_create(&t->id, NULL, thread_trampoline, t) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

void am_thread_join(am_thread *t) {
    pthread_join(t->id, NULL);
    free(t);
}

void am_thread_yield(void) { sched_yield(); }

unsigned am_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

/* One key for the whole process; its per-thread value is the list of hooks. */
typedef struct exit_hook {
    void (*fn)(void *);
    void *arg;
    struct exit_hook *next;
} exit_hook;

static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int exit_key_ok;

static void run_exit_hooks(void *p) {
    exit_hook *e = p;
    while (e) {
        exit_hook *next = e->next;
        e->fn(e->arg);
        free(e);
        e = next;
    }
}

static void make_exit_key(void) { exit_key_ok = pthread_key_create(&exit_key, run_exit_hooks) == 0; }

int am_thread_exit_hook(void (*fn)(void *arg), void *arg) {
    pthread_once(&exit_once, make_exit_key);
    if (!exit_key_ok) return -1;
    exit_hook *e = malloc(sizeof *e);
    if (!e) return -1;
    e->fn = fn;
    e->arg = arg;
    e->next = pthread_getspecific(exit_key);
    if (pthread_setspecific(exit_key, e) != 0) { free(e); return -1; }
    return 0;
}

struct am_mutex { pthread_mutex_t m; };

am_mutex *am_mutex_create(void) {
    am_mutex *m = malloc(sizeof *m);
    if (m && pthread_mutex_init(&m->m, NULL) != 0) { free(m); return NULL; }
    return m;
}
void am_mutex_destroy(am_mutex *m) { if (m) { pthread_mutex_destroy(&m->m); free(m); } }
void am_mutex_lock(am_mutex *m) { pthread_mutex_lock(&m->m); }
void am_mutex_unlock(am_mutex *m) { pthread_mutex_unlock(&m->m); }

size_t am_page_size(void) {
    /* heaps are created in several threads at once: relaxed atomics, as
     * ThreadSanitizer rightly reports a plain cached static as a race */
    static size_t page;
    size_t p = __atomic_load_n(&page, __ATOMIC_RELAXED);
    if (!p) {
        p = (size_t)sysconf(_SC_PAGESIZE);
        __atomic_store_n(&page, p, __ATOMIC_RELAXED);
    }
    return p;
}

void *am_vm_reserve(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void am_vm_release(void *p, size_t bytes) {
    if (p) munmap(p, bytes);
}

/* bytes of address space mapped now (Linux: /proc/self/statm), 0 where unknown */
static uint64_t address_space_now(void) {
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    if (fscanf(f, "%llu", &pages) != 1) pages = 0;
    fclose(f);
    return (uint64_t)pages * am_page_size();
}

int am_limit_address_space(uint64_t bytes) {
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0) return -1;
    /* A malloc that reserves its heap's address space when it starts (Scudo:
     * about 180 GiB, PROT_NONE until used, at its first call) holds more than
     * any cap: every later mapping would fail. So malloc starts first, and a
     * cap below what the process holds counts above it. */
    free(malloc(1));
    uint64_t held = address_space_now();
    if (held >= bytes && bytes <= UINT64_MAX - held) bytes += held;
    rlim_t want = bytes > (uint64_t)(rlim_t)-1 ? RLIM_INFINITY : (rlim_t)bytes;
    if (r.rlim_max != RLIM_INFINITY && want > r.rlim_max) want = r.rlim_max;
    r.rlim_cur = want;
    return setrlimit(RLIMIT_AS, &r) == 0 ? 0 : -1;
}

int am_move_memory(uint64_t heap_bytes, uint64_t map_bytes) {
#if defined(__linux__)
    if (heap_bytes > (uint64_t)INTPTR_MAX || map_bytes > (uint64_t)SIZE_MAX) return -1;
    if (map_bytes && mmap(NULL, (size_t)map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) ==
                         MAP_FAILED)
        return -1;
    /* brk's pages are only reserved: nothing touches them */
    if (heap_bytes && sbrk((intptr_t)heap_bytes) == (void *)-1) return -1;
    return 0;
#else
    (void)heap_bytes, (void)map_bytes;
    return -1;
#endif
}

int am_layout_randomized(void) {
#if defined(__linux__)
    int persona = personality(0xffffffff); /* reads it, changes nothing */
    if (persona == -1) return -1;
    if (persona & ADDR_NO_RANDOMIZE) return 0;
    FILE *f = fopen("/proc/sys/kernel/randomize_va_space", "r");
    int level = -1;
    if (f) {
        if (fscanf(f, "%d", &level) != 1) level = -1;
        fclose(f);
    }
    return level == 0 ? 0 : 1;
#else
    return -1; /* randomized or not, this system does not say */
#endif
}

int am_vm_evict(void *p, size_t bytes) {
#ifdef MADV_PAGEOUT
    /* PAGEOUT keeps the contents (swapped or re-read from the file) */
    if (madvise(p, bytes, MADV_PAGEOUT) == 0) return 0;
#endif
    return madvise(p, bytes, MADV_DONTNEED) == 0 ? 0 : -1;
}

size_t am_vm_resident(const void *p, size_t bytes) {
    size_t page = am_page_size();
    uintptr_t start = (uintptr_t)p & ~(uintptr_t)(page - 1);
    size_t len = (uintptr_t)p + bytes - start;
    size_t pages = (len + page - 1) / page;
    unsigned char *vec = malloc(pages ? pages : 1);
    size_t resident = 0;
    if (!vec) return 0;
    if (mincore((void *)start, len, vec) == 0)
        for (size_t i = 0; i < pages; i++) resident += vec[i] & 1;
    free(vec);
    return resident * page;
}

int am_file_map_create(am_file_map *m, const char *path, size_t bytes) {
    memset(m, 0, sizeof *m);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)bytes) != 0) { close(fd); return -1; }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { close(fd); return -1; }
    m->base = p;
    m->size = bytes;
    m->handle = fd;
    return 0;
}

void am_file_map_close(am_file_map *m) {
    if (m->base) munmap(m->base, m->size);
    if (m->handle > 0) close((int)m->handle);
    memset(m, 0, sizeof *m);
}

int am_file_evict(am_file_map *m, size_t offset, size_t bytes) {
    char *p = (char *)m->base + offset;
    /* write dirty pages back first, or the kernel cannot drop them */
    if (msync(p, bytes, MS_SYNC) != 0) return -1;
    if (madvise(p, bytes, MADV_DONTNEED) != 0) return -1;
    return posix_fadvise((int)m->handle, (off_t)offset, (off_t)bytes, POSIX_FADV_DONTNEED) == 0 ? 0 : -1;
}

size_t am_peak_rss_bytes(void) {
#if defined(__linux__)
    /* VmHWM is this program's own high-water mark; ru_maxrss also keeps the
     * peak of whatever ran in the process before execve (the runner's Python) */
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        size_t kb = 0;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "VmHWM: %zu kB", &kb) == 1) break;
        fclose(f);
        if (kb) return kb * 1024u;
    }
#endif
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
#if defined(__APPLE__)
    return (size_t)ru.ru_maxrss; /* bytes on macOS */
#else
    return (size_t)ru.ru_maxrss * 1024u; /* kilobytes on Linux */
#endif
}

int am_page_faults(uint64_t *minor, uint64_t *major) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
    *minor = (uint64_t)ru.ru_minflt;
    *major = (uint64_t)ru.ru_majflt;
    return 0;
}

#if defined(__linux__) && defined(__NR_perf_event_open)
struct am_hw_counters { int instructions, cycles; };

static int perf_open(uint64_t config) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_HARDWARE;
    a.size = sizeof a;
    a.config = config;
    a.disabled = 1;
    a.inherit = 1;
    a.exclude_kernel = 1; /* allowed at perf_event_paranoid 2, and the kernel is not under test */
    a.exclude_hv = 1;
    return (int)syscall(__NR_perf_event_open, &a, 0, -1, -1, 0);
}

am_hw_counters *am_hw_counters_open(const char **why) {
    static char reason[160];
    int fi = perf_open(PERF_COUNT_HW_INSTRUCTIONS);
    int fc = fi < 0 ? -1 : perf_open(PERF_COUNT_HW_CPU_CYCLES);
    if (fi < 0 || fc < 0) {
        int e = errno;
        if (fi >= 0) close(fi);
        snprintf(reason, sizeof reason, "perf_event_open(%s): %s%s", fi < 0 ? "instructions" : "cycles",
                 strerror(e), e == ENOENT || e == EOPNOTSUPP ? " (no hardware counters, e.g. a virtual machine)"
                              : e == EACCES || e == EPERM ? " (see /proc/sys/kernel/perf_event_paranoid)" : "");
        if (why) *why = reason;
        return NULL;
    }
    am_hw_counters *c = malloc(sizeof *c);
    if (!c) {
        close(fi);
        close(fc);
        if (why) *why = "out of memory";
        return NULL;
    }
    c->instructions = fi;
    c->cycles = fc;
    return c;
}

void am_hw_counters_start(am_hw_counters *c) {
    ioctl(c->instructions, PERF_EVENT_IOC_RESET, 0);
    ioctl(c->cycles, PERF_EVENT_IOC_RESET, 0);
    ioctl(c->instructions, PERF_EVENT_IOC_ENABLE, 0);
    ioctl(c->cycles, PERF_EVENT_IOC_ENABLE, 0);
}

int am_hw_counters_stop(am_hw_counters *c, uint64_t *instructions, uint64_t *cycles) {
    ioctl(c->instructions, PERF_EVENT_IOC_DISABLE, 0);
    ioctl(c->cycles, PERF_EVENT_IOC_DISABLE, 0);
    if (read(c->instructions, instructions, sizeof *instructions) != (ssize_t)sizeof *instructions) return -1;
    if (read(c->cycles, cycles, sizeof *cycles) != (ssize_t)sizeof *cycles) return -1;
    return 0;
}

void am_hw_counters_close(am_hw_counters *c) {
    if (!c) return;
    close(c->instructions);
    close(c->cycles);
    free(c);
}
#else
struct am_hw_counters { int unused; };
am_hw_counters *am_hw_counters_open(const char **why) {
    if (why) *why = "no perf_event_open on this system";
    return NULL;
}
void am_hw_counters_start(am_hw_counters *c) { (void)c; }
int am_hw_counters_stop(am_hw_counters *c, uint64_t *instructions, uint64_t *cycles) {
    (void)c; *instructions = *cycles = 0;
    return -1;
}
void am_hw_counters_close(am_hw_counters *c) { (void)c; }
#endif

/* ---- the library that serves malloc ---- */
/* name as defined by the object loaded at base itself: a handle's dlsym also
 * searches the object's dependencies (libjemalloc's brings glibc's calls) */
static void *symbol_of(void *lib, const void *base, const char *name) {
    Dl_info info;
    void *sym = lib ? dlsym(lib, name) : NULL;
    return sym && dladdr(sym, &info) && info.dli_fbase == base ? sym : NULL;
}

/* The version, from the call each library has for it: jemalloc, gperftools'
 * tcmalloc, mimalloc, glibc; nothing for others (musl has none). A function's
 * address comes from dlsym as a void *, copied into a function pointer as
 * POSIX allows. */
static void library_version(void *lib, const void *base, char *buf, size_t n) {
    void *sym;
    buf[0] = 0;
    if ((sym = symbol_of(lib, base, "mallctl")) != NULL) {
        int (*fn)(const char *, void *, size_t *, void *, size_t);
        const char *v = NULL;
        size_t len = sizeof v;
        memcpy(&fn, &sym, sizeof fn);
        if (fn("version", &v, &len, NULL, 0) == 0 && v) snprintf(buf, n, "jemalloc %s", v);
    } else if ((sym = symbol_of(lib, base, "tc_version")) != NULL) {
        const char *(*fn)(int *, int *, const char **);
        int major, minor;
        const char *patch;
        memcpy(&fn, &sym, sizeof fn);
        snprintf(buf, n, "%s", fn(&major, &minor, &patch));
    } else if ((sym = symbol_of(lib, base, "mi_version")) != NULL) {
        int (*fn)(void);
        memcpy(&fn, &sym, sizeof fn);
        int v = fn(); /* 209: 2.0.9 */
        snprintf(buf, n, "mimalloc %d.%d.%d", v / 100, v / 10 % 10, v % 10);
    } else if ((sym = symbol_of(lib, base, "gnu_get_libc_version")) != NULL) {
        const char *(*fn)(void);
        memcpy(&fn, &sym, sizeof fn);
        snprintf(buf, n, "glibc %s", fn());
    }
}

int am_malloc_library(char *buf, size_t n) {
    /* the definition the dynamic linker binds malloc to, preloads included;
     * &malloc itself would be the executable's PLT entry in a non-PIE build */
    void *fn = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info info;
    if (!fn || !dladdr(fn, &info) || !info.dli_fname || !*info.dli_fname) {
        snprintf(buf, n, "unknown (no dynamic symbol malloc: a static executable?)");
        return -1;
    }
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    char version[PATH_MAX + 8];
    void *lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    library_version(lib, info.dli_fbase, version, sizeof version);
    if (lib) dlclose(lib);
    /* a library without a version call (oneTBB's proxy, Scudo): the file
     * itself, whose path or name carries the version (.so.2.8, clang/14.0.6) */
    char real[PATH_MAX];
    if (!version[0] && realpath(info.dli_fname, real)) snprintf(version, sizeof version, "at %s", real);
    snprintf(buf, n, "%s%s%s", base, version[0] ? " " : "", version);
    return 0;
}
#endif
