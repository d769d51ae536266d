/* check.h: the smallest test harness that does the job. A test is a function;
 * CHECK stops it at the first false condition and records where. Each test
 * binary prints one PASS or FAIL line per test and a closing
 * "N passed, N failed"; tests/run_all.py adds the binaries up. */
#ifndef AM_CHECK_H
#define AM_CHECK_H

#include <stdio.h>

typedef struct am_test {
    const char *name;
    void (*fn)(void);
} am_test;

extern int am_check_failed;

void am_check_fail(const char *file, int line, const char *what);

#define CHECK(cond)                                                      \
    do {                                                                 \
        if (!(cond)) { am_check_fail(__FILE__, __LINE__, #cond); return; } \
    } while (0)

#define CHECK_MSG(cond, ...)                                             \
    do {                                                                 \
        if (!(cond)) {                                                   \
            fprintf(stderr, __VA_ARGS__);                                \
            fputc('\n', stderr);                                         \
            am_check_fail(__FILE__, __LINE__, #cond);                    \
            return;                                                      \
        }                                                                \
    } while (0)

/* Skips the rest of a test, saying why (a check this build cannot make):
 * printed as SKIP, counted neither as passed nor as failed. */
void am_check_skip(const char *why);
#define CHECK_SKIP(why) do { am_check_skip(why); return; } while (0)

/* Runs every test whose name contains argv[1] (all when absent); returns the
 * process exit code. */
int am_run_tests(const char *suite, const am_test *tests, int argc, char **argv);

#endif
