/* platform.h: the one place where allocmark touches the operating system and
 * the compiler: attributes, a monotonic clock, threads, mutexes, atomics,
 * virtual memory and process statistics. POSIX and Win32 implementations live
 * in platform_posix.c and platform_win32.c; everything else is portable C11. */
#ifndef AM_PLATFORM_H
#define AM_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

/* ---- compiler attributes, behind macros so MSVC can build the same code ---- */
#if defined(_MSC_VER) && !defined(__clang__)
#define AM_INLINE static __inline
#define AM_FORCE_INLINE static __forceinline
#define AM_NOINLINE __declspec(noinline)
#define AM_SLOW_PATH static __declspec(noinline)
#define AM_LIKELY(x) (x)
#define AM_UNLIKELY(x) (x)
#define AM_THREAD_LOCAL __declspec(thread)
#define AM_PAGE_ALIGNED_CODE
#else
#define AM_INLINE static inline
#define AM_FORCE_INLINE static inline __attribute__((always_inline))
#define AM_NOINLINE __attribute__((noinline))
/* a header-defined slow path: kept out of line, no warning where unused */
#define AM_SLOW_PATH static __attribute__((noinline, unused))
#define AM_LIKELY(x) __builtin_expect(!!(x), 1)
#define AM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define AM_THREAD_LOCAL _Thread_local
/* on a function: its unit's code section starts on a 4 KiB boundary, so the
 * unit's loops keep their alignment wherever the linker places it */
#define AM_PAGE_ALIGNED_CODE __attribute__((aligned(4096)))
/* A C++ row's fast path that C calls (pmr.cc, boost_lib.cc, boost_fast_lib.cc;
 * those rows are gcc's and clang's alone): declared inline, as the C
 * strategies' static inline fast paths are, so that the link-time inliner
 * weighs it as theirs; `used` keeps the one definition C links against. */
#if defined(__clang__)
/* clang's link-time inliner left boost_fast_lib_free_array a call in the
 * vector workloads, where it inlines the C rows' static inline fast paths */
#define AM_CXX_FAST_PATH extern "C" inline __attribute__((used, always_inline))
#else
#define AM_CXX_FAST_PATH extern "C" inline __attribute__((used))
#endif
#endif

/* A function AddressSanitizer leaves uninstrumented: for the few reads and
 * writes of allocator metadata kept in memory that stays poisoned (so that a
 * caller's overflow into it is caught) where unpoisoning around each access
 * would race with other threads doing the same. */
#if defined(_MSC_VER) && !defined(__clang__)
#if defined(__SANITIZE_ADDRESS__)
#define AM_NO_SANITIZE_ADDRESS __declspec(no_sanitize_address)
#else
#define AM_NO_SANITIZE_ADDRESS
#endif
#else
#define AM_NO_SANITIZE_ADDRESS __attribute__((no_sanitize_address))
#endif

/* The alignment every allocation gets at least: alignof(max_align_t). Written
 * out because MSVC's C mode lacks max_align_t in older versions. */
#if defined(_WIN32) && !defined(__MINGW32__)
#define AM_MIN_ALIGN 16u
#else
#include <stdalign.h>
#define AM_MIN_ALIGN ((size_t)alignof(max_align_t))
#endif

#define AM_ALIGN_UP(n, a) (((n) + ((a) - 1)) & ~((size_t)(a) - 1))

/* Bits needed to write x: floor(log2(x)) + 1, and 0 for 0. Size classes
 * (tls_size_class) compute ceil(log2(n)) as am_bit_width(n - 1). */
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
AM_INLINE unsigned am_bit_width(size_t x) {
    unsigned long i;
#if defined(_WIN64)
    return _BitScanReverse64(&i, x) ? (unsigned)i + 1 : 0;
#else
    return _BitScanReverse(&i, x) ? (unsigned)i + 1 : 0;
#endif
}
#else
AM_INLINE unsigned am_bit_width(size_t x) {
    return x ? 64u - (unsigned)__builtin_clzll((unsigned long long)x) : 0;
}
#endif

/* Keep the compiler from deleting work whose result is otherwise unused
 * (Google Benchmark's DoNotOptimize; jemalloc's microbench warns of the same):
 * the pointer escapes, and memory may have been read. Inline, so a measured
 * loop pays no call for it however the row is compiled. */
#if defined(_MSC_VER) && !defined(__clang__)
/* MSVC has no inline asm on x64: a store to a volatile the compiler cannot see
 * through (defined in platform_win32.c), and a barrier for the memory */
extern const void *volatile am_escape_sink;
AM_INLINE void am_escape(const void *p) {
    am_escape_sink = p;
    _ReadWriteBarrier();
}
#define AM_CLOBBER() _ReadWriteBarrier()
#else
AM_INLINE void am_escape(const void *p) {
    __asm__ __volatile__("" : : "r"(p) : "memory");
}
#define AM_CLOBBER() __asm__ __volatile__("" ::: "memory")
#endif

/* Stack bytes reserved in the caller's frame (alloca), freed when it returns:
 * a sample's loop starts at one stack address modulo a page (cell/sample.h). */
#if defined(_MSC_VER) && !defined(__clang__)
#include <malloc.h>
#define AM_STACK_RESERVE(n) _alloca(n)
#elif defined(__GNUC__) || defined(__clang__)
#define AM_STACK_RESERVE(n) __builtin_alloca(n)
#else
#include <alloca.h>
#define AM_STACK_RESERVE(n) alloca(n)
#endif

/* ---- time ---- */
uint64_t am_now_ns(void); /* monotonic, nanosecond resolution */

/* the smallest step of am_now_ns seen in 64 tries: the same on every system */
AM_INLINE double am_timer_resolution_ns(void) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 64; i++) {
        uint64_t a = am_now_ns(), b;
        while ((b = am_now_ns()) == a) {}
        if (b - a < best) best = b - a;
    }
    return (double)best;
}

/* ---- threads and locks ---- */
typedef struct am_thread am_thread;
typedef void (*am_thread_fn)(void *arg);
am_thread *am_thread_start(am_thread_fn fn, void *arg); /* NULL on failure */
void am_thread_join(am_thread *t);
void am_thread_yield(void); /* let another thread run (while waiting for others) */
unsigned am_cpu_count(void);

/* Runs fn(arg) in the calling thread when that thread ends (returns from its
 * function or exits); a thread's hooks run newest first, as atexit's do. Not
 * run for the main thread when the process ends through exit() or by
 * returning from main. 0 on success, -1 when the hook cannot be registered.
 * POSIX: one pthread key whose destructor runs the thread's list of hooks;
 * Win32: the same with FlsAlloc's callback. */
int am_thread_exit_hook(void (*fn)(void *arg), void *arg);

typedef struct am_mutex am_mutex;
am_mutex *am_mutex_create(void);
void am_mutex_destroy(am_mutex *m);
void am_mutex_lock(am_mutex *m);
void am_mutex_unlock(am_mutex *m);

/* ---- virtual memory ---- */
size_t am_page_size(void);
void *am_vm_reserve(size_t bytes);            /* reserved and committed, zeroed; NULL on failure */
void am_vm_release(void *p, size_t bytes);
int am_vm_evict(void *p, size_t bytes);       /* drop pages from memory (0 on success) */
size_t am_vm_resident(const void *p, size_t bytes); /* bytes resident now (mincore) */
/* Caps this process's address space (RLIMIT_AS), so that a size that does not
 * fit makes allocation return NULL instead of exhausting a shared machine:
 * 0 on success, -1 where the OS has no such limit (Windows). Where the process
 * already holds more than the cap (a malloc that reserves its heap up front),
 * the cap counts above what it holds. */
int am_limit_address_space(uint64_t bytes);

/* A file-backed mapping: the file is created at path with the given size and
 * mapped shared, read-write. */
typedef struct am_file_map { void *base; size_t size; intptr_t handle; intptr_t mapping; } am_file_map;
int am_file_map_create(am_file_map *m, const char *path, size_t bytes);
void am_file_map_close(am_file_map *m);
int am_file_evict(am_file_map *m, size_t offset, size_t bytes);

/* ---- process ---- */
size_t am_peak_rss_bytes(void); /* peak resident set of this process */
/* Page faults of this process so far, every thread's: minor (the page was in
 * memory or zero-filled) and major (read from disk). 0 on success. Windows
 * counts both kinds together: all of them are reported as minor there. */
int am_page_faults(uint64_t *minor, uint64_t *major);

/* The library that serves this process's malloc, written to buf (n bytes, NUL
 * ended): the file that defines the malloc calls are bound to, then the version
 * from the library's own call where it has one, e.g. "libjemalloc.so.2
 * jemalloc 5.3.0-0-g54eaed1d", "libc.so.6 glibc 2.36". So a row linked against
 * a malloc library can prove the library is the one measured (LD_PRELOAD, a
 * missing -l, a static malloc would all show here). 0 when found, -1 when not
 * (buf then says why). */
int am_malloc_library(char *buf, size_t n);

/* Whether this process's addresses were drawn at random when it started:
 * 1 yes, 0 no (Linux's ADDR_NO_RANDOMIZE persona, which the runner's
 * --layout fixed passes on, or randomization off for the whole system),
 * -1 unknown (Windows). The answer tells which layout a sample was taken in. */
int am_layout_randomized(void);

/* Moves where this process's memory lands from now on: the program break up
 * by heap_bytes and the next mappings down by map_bytes, by reserving that
 * much address space and never touching it (no memory is used). Called before
 * anything is allocated, it moves the whole heap of a malloc that grows by brk
 * and every later mapping. 0 on success, -1 where the system cannot (nothing
 * moved). --layout shifted (runner/layout.py) gives each visit its own move. */
int am_move_memory(uint64_t heap_bytes, uint64_t map_bytes);

/* ---- hardware counters: user-mode instructions and cycles of this process ----
 * open returns NULL where they cannot be read (no perf_event_open, not permitted,
 * a virtual machine without a PMU ...) and points *why at a one-line reason,
 * valid until the next open. Threads started after start are counted too. */
typedef struct am_hw_counters am_hw_counters;
am_hw_counters *am_hw_counters_open(const char **why);
void am_hw_counters_start(am_hw_counters *c);
int am_hw_counters_stop(am_hw_counters *c, uint64_t *instructions, uint64_t *cycles); /* 0 on success */
void am_hw_counters_close(am_hw_counters *c);

#endif
