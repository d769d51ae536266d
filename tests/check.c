/* check.c: runs the tests of one binary and prints their results. */
#include "check.h"
#include <string.h>

int am_check_failed;
static char failure[512];
static int skipped_now;
static char skip_reason[512];

void am_check_fail(const char *file, int line, const char *what) {
    am_check_failed = 1;
    snprintf(failure, sizeof failure, "%s:%d: %s", file, line, what);
}

void am_check_skip(const char *why) {
    skipped_now = 1;
    snprintf(skip_reason, sizeof skip_reason, "%s", why);
}

int am_run_tests(const char *suite, const am_test *tests, int argc, char **argv) {
    const char *filter = argc > 1 ? argv[1] : "";
    int passed = 0, failed = 0, skipped = 0;
    for (const am_test *t = tests; t->name; t++) {
        if (!strstr(t->name, filter)) continue;
        am_check_failed = 0;
        failure[0] = 0;
        skipped_now = 0;
        t->fn();
        if (skipped_now && !am_check_failed) {
            printf("SKIP %s/%s: %s\n", suite, t->name, skip_reason);
            skipped++;
        } else if (am_check_failed) {
            printf("FAIL %s/%s: %s\n", suite, t->name, failure);
            failed++;
        } else {
            printf("PASS %s/%s\n", suite, t->name);
            passed++;
        }
        fflush(stdout);
    }
    if (passed + failed + skipped == 0) {
        /* said, not silent: tests/run_all.py fails a binary that prints no
         * result, which would otherwise pass a broken or empty one */
        printf("SKIP %s: %s\n", suite, *filter ? "no test matches the filter" : "no test applies to this build");
        skipped++;
    }
    if (skipped) printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    else printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* Sanitizer settings for every test binary: an allocation too large to
 * satisfy returns NULL (the tests check it does) instead of aborting, and
 * tcmalloc's one registration object, never freed by design, is not a leak. */
#if defined(__SANITIZE_ADDRESS__)
#define AM_CHECK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AM_CHECK_ASAN 1
#endif
#endif
#ifdef AM_CHECK_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:MallocExtension::Register\n"; }
#endif
