/* test_detection.c: the bugs a checked build of a strategy must catch. Each
 * test injects one bug (use after free, overflow by one byte, double free,
 * wrong-size free ...) in a forked child and passes only if the child dies
 * with the expected report on stderr. The checker depends on the build: the
 * allocmark debug layer (make DEBUG=1) or AddressSanitizer (VARIANT=-asan);
 * in plain builds, for strategies that do not poison (S_ASAN_POISONS) and on
 * Windows, the injections are skipped with a note, never passed silently. */
#include <stdlib.h>
#include <string.h>

#include "allocator.h"
#include "check.h"

#if !defined(_WIN32)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#define HAVE_FORK 1
#else
#define HAVE_FORK 0
#endif

#if AM_S(_ASAN_POISONS)
#define ASAN_SEES_BLOCKS AM_ASAN
#else
#define ASAN_SEES_BLOCKS 0
#endif

enum { CHECKER_NONE, CHECKER_DEBUG, CHECKER_ASAN };
#if AM_DEBUG
#define CHECKER CHECKER_DEBUG
#elif AM_ASAN
#define CHECKER CHECKER_ASAN
#else
#define CHECKER CHECKER_NONE
#endif

static volatile unsigned char sink;

/* ---- the bugs, each run alone in a child process ---- */

static void bug_use_after_free(am_heap *h) {
    volatile unsigned char *p = am_alloc(h, 64);
    p[8] = 1;
    am_free(h, (void *)p, 64);
    sink = p[8];
}

static void bug_overflow_by_one(am_heap *h, size_t n) {
    volatile unsigned char *p = am_alloc(h, n);
    memset((void *)p, 1, n);
    p[n] = 2;
    am_free(h, (void *)p, n);
}
static void bug_overflow_24(am_heap *h) { bug_overflow_by_one(h, 24); }
static void bug_overflow_64(am_heap *h) { bug_overflow_by_one(h, 64); }

static void bug_overflow_aligned(am_heap *h) {
    volatile unsigned char *p = am_alloc_aligned(h, 100, 64);
    p[100] = 2;
    am_free_aligned(h, (void *)p, 100, 64);
}

static void bug_double_free(am_heap *h) {
    void *p = am_alloc(h, 64);
    void *q = am_alloc(h, 64); /* keeps a reusing strategy from handing p out again */
    am_free(h, p, 64);
    am_free(h, p, 64);
    am_free(h, q, 64);
}

static void bug_wrong_size_free(am_heap *h) {
    void *p = am_alloc(h, 64);
    am_free(h, p, 32);
}

static void bug_realloc_overflow(am_heap *h) {
    unsigned char *p = am_alloc(h, 16);
    p = am_realloc(h, p, 16, 40);
    ((volatile unsigned char *)p)[40] = 2;
    am_free(h, p, 40);
}

/* an array grown as a vector grows, then written one byte past its end */
static void bug_array_overflow(am_heap *h) {
    int *a = am_alloc_array(h, 10, sizeof(int));
    memset(a, 1, 10 * sizeof(int));
    a = am_realloc_array(h, a, 10, 25, sizeof(int));
    ((volatile unsigned char *)a)[25 * sizeof(int)] = 2;
    am_free_array(h, a, 25, sizeof(int));
}

static void bug_array_as_bytes(am_heap *h) {
    void *p = am_alloc_array(h, 10, 8);
    am_free_aligned(h, p, 80, 256); /* freed by the wrong call */
}

static void bug_foreign_pointer(am_heap *h) {
    char *p = am_alloc(h, 64);
    am_free(h, p + 16, 48);
}

#if HAVE_FORK
/* Runs bug in a child with stderr captured; returns 1 if the child died
 * (signal or non-zero exit) and its stderr holds one of the expected texts. */
static int dies_with(void (*bug)(am_heap *), const char *const *expected, char *why, size_t cap) {
    int fd[2];
    if (pipe(fd) != 0) { snprintf(why, cap, "pipe failed"); return 0; }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) { snprintf(why, cap, "fork failed"); return 0; }
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        am_options o;
        am_options_default(&o);
        o.initial_bytes = (size_t)1 << 20;
        am_heap *h = am_create(&o);
        if (h) bug(h);
        _exit(h ? 0 : 3); /* survived: the bug went unseen */
    }
    close(fd[1]);
    static char err[1 << 16];
    size_t len = 0;
    ssize_t r;
    while ((r = read(fd[0], err + len, sizeof err - 1 - len)) > 0) len += (size_t)r;
    err[len] = 0;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    int died = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) { snprintf(why, cap, "am_create failed"); return 0; }
    for (const char *const *e = expected; *e; e++)
        if (died && strstr(err, *e)) return 1;
    const char *nl = strchr(err, '\n');
    snprintf(why, cap, "child %s; stderr: %.*s", died ? "died" : "survived the bug",
             (int)(nl ? nl - err : (long)strlen(err)), err);
    return 0;
}
#endif

/* expected reports: [0] from the debug layer, [1..] from ASan */
static void expect(void (*bug)(am_heap *), const char *debug_text, const char *const *asan_texts,
                   const char *asan_gap) {
#if !HAVE_FORK
    (void)bug; (void)debug_text; (void)asan_texts; (void)asan_gap;
    CHECK_SKIP("needs fork(): not on Windows");
#else
    const char *debug_only[2] = {debug_text, NULL};
    const char *const *texts;
    if (CHECKER == CHECKER_NONE) CHECK_SKIP("plain build: run with DEBUG=1 or VARIANT=-asan (make check)");
    if (CHECKER == CHECKER_DEBUG) {
        if (!debug_text) CHECK_SKIP(asan_gap);
        texts = debug_only;
    } else {
        if (!asan_texts) CHECK_SKIP(asan_gap);
        if (!ASAN_SEES_BLOCKS)
            CHECK_SKIP("ASan: this strategy does not poison its blocks yet (no " AM_STR(AM_STRATEGY) "_ASAN_POISONS)");
        texts = asan_texts;
    }
    char why[600];
    CHECK_MSG(dies_with(bug, texts, why, sizeof why), "expected \"%s\": %s", texts[0], why);
#endif
}

/* ASan calls a read of a poisoned byte use-after-poison; malloc's own blocks
 * get the precise names */
static const char *const asan_uaf[] = {"heap-use-after-free", "use-after-poison", NULL};
static const char *const asan_overflow[] = {"heap-buffer-overflow", "use-after-poison", NULL};
static const char *const asan_double[] = {"double free", "double-free", NULL};

static void test_use_after_free(void) {
    expect(bug_use_after_free, NULL, asan_uaf,
           "DEBUG=1 does not catch a read after free: freed blocks are filled with 0xDD instead "
           "(debug_fills checks that); ASan catches it");
}
static void test_overflow_by_one_24(void) { expect(bug_overflow_24, "buffer overflow", asan_overflow, NULL); }
static void test_overflow_by_one_64(void) { expect(bug_overflow_64, "buffer overflow", asan_overflow, NULL); }
static void test_overflow_aligned(void) { expect(bug_overflow_aligned, "buffer overflow", asan_overflow, NULL); }
static void test_double_free(void) { expect(bug_double_free, "double free of block", asan_double, NULL); }
static void test_wrong_size_free(void) {
    expect(bug_wrong_size_free, "wrong-size free", NULL,
           "ASan cannot see the size passed to a sized free; DEBUG=1 checks it");
}
static void test_realloc_overflow(void) { expect(bug_realloc_overflow, "buffer overflow", asan_overflow, NULL); }
static void test_array_overflow(void) { expect(bug_array_overflow, "buffer overflow", asan_overflow, NULL); }
static void test_array_freed_as_bytes(void) {
    expect(bug_array_as_bytes, "mismatch", NULL, "ASan cannot see which call freed a block; DEBUG=1 checks it");
}
static void test_foreign_pointer(void) {
    expect(bug_foreign_pointer, "not a live block", NULL,
           "ASan sees a pointer into a live block as addressable; DEBUG=1 checks it");
}

/* ---- the debug layer keeps the contract (run in every build) ---- */

static am_heap *small_heap(void) {
    am_options o;
    am_options_default(&o);
    o.initial_bytes = (size_t)1 << 20;
    return am_create(&o);
}

static void test_debug_keeps_alignment(void) {
    am_heap *h = small_heap();
    CHECK(h);
    static const size_t aligns[] = {1, 8, 16, 32, 64, 256, 4096};
    for (size_t i = 0; i < sizeof aligns / sizeof *aligns; i++) {
        size_t a = aligns[i];
        void *p = am_alloc_aligned(h, 40, a);
        void *q = am_alloc(h, 16 + i * 7); /* malloc owes less to smaller blocks */
        CHECK(p && q);
        size_t want = a < AM_MIN_ALIGN ? AM_MIN_ALIGN : a;
        CHECK_MSG((uintptr_t)p % want == 0, "align %zu: %p", a, p);
        CHECK((uintptr_t)q % AM_MIN_ALIGN == 0);
        memset(p, 7, 40);
        memset(q, 9, 16 + i * 7);
        am_free(h, q, 16 + i * 7);
        am_free_aligned(h, p, 40, a);
    }
    am_destroy(h);
}

static void test_debug_realloc_keeps_contents(void) {
    am_heap *h = small_heap();
    CHECK(h);
    unsigned char *p = am_alloc(h, 10);
    CHECK(p);
    for (int i = 0; i < 10; i++) p[i] = (unsigned char)(i + 1);
    p = am_realloc(h, p, 10, 3000);
    CHECK(p);
    for (int i = 0; i < 10; i++) CHECK(p[i] == i + 1);
    memset(p + 10, 5, 2990);
    p = am_realloc(h, p, 3000, 5);
    CHECK(p);
    for (int i = 0; i < 5; i++) CHECK(p[i] == i + 1);
    int *a = am_alloc_array(h, 3, sizeof(int));
    CHECK(a);
    a[0] = 1; a[1] = 2; a[2] = 3;
    a = am_realloc_array(h, a, 3, 100, sizeof(int));
    CHECK(a && a[0] == 1 && a[1] == 2 && a[2] == 3);
    a[99] = 4;
    am_free_array(h, a, 100, sizeof(int));
    am_free(h, p, 5);
#if AM_STATS
    am_stats s;
    am_get_stats(h, &s);
    CHECK_MSG(s.bytes_live == 0, "live %zu after freeing everything", s.bytes_live);
    CHECK(s.bytes_requested == 10 + 3000 + 5 + 12 + 400); /* debug overhead is not counted */
#endif
    am_destroy(h);
}

static void test_debug_fills(void) {
#if !AM_DEBUG
    CHECK_SKIP("fill patterns only with DEBUG=1");
#else
    am_heap *h = small_heap();
    CHECK(h);
    unsigned char *p = am_alloc(h, 48);
    CHECK(p);
    for (int i = 0; i < 48; i++) CHECK(p[i] == AM_DEBUG_FILL_ALLOC);
    p = am_realloc(h, p, 48, 200);
    CHECK(p);
    for (int i = 48; i < 200; i++) CHECK(p[i] == AM_DEBUG_FILL_ALLOC);
#if HAVE_FORK
    /* a read after free sees 0xDD; read in a child, where the block may also
     * have been unmapped (a crash there is fine), from a heap of the child's
     * own: mmap_file's mappings are shared, so a free of p there would be
     * seen here */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        am_heap *c = small_heap();
        unsigned char *q = c ? am_alloc(c, 200) : NULL;
        if (!q) _exit(2);
        am_free(c, q, 200);
        _exit(((volatile unsigned char *)q)[100] == AM_DEBUG_FILL_FREE ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(!WIFEXITED(status) || WEXITSTATUS(status) == 0);
#endif
    am_free(h, p, 200);
    am_destroy(h);
#endif
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"use_after_free", test_use_after_free},
        {"overflow_by_one_24", test_overflow_by_one_24},
        {"overflow_by_one_64", test_overflow_by_one_64},
        {"overflow_aligned", test_overflow_aligned},
        {"double_free", test_double_free},
        {"wrong_size_free", test_wrong_size_free},
        {"realloc_overflow", test_realloc_overflow},
        {"array_overflow", test_array_overflow},
        {"array_freed_as_bytes", test_array_freed_as_bytes},
        {"foreign_pointer", test_foreign_pointer},
        {"debug_keeps_alignment", test_debug_keeps_alignment},
        {"debug_realloc_keeps_contents", test_debug_realloc_keeps_contents},
        {"debug_fills", test_debug_fills},
        {NULL, NULL},
    };
    return am_run_tests("detection-" AM_ROW_NAME, tests, argc, argv);
}
