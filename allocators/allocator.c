/* allocator.c: what all strategies share out of line: default options and the
 * reports of the debug layer and of the ASan free check (never on a fast path). */
#include "allocator.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void am_options_default(am_options *o) {
    memset(o, 0, sizeof *o);
}

void am_debug_fail(const char *fmt, ...);
void am_asan_bad_free(void *p, size_t n);

/* One line, then abort(): a test forks a child, injects the bug and matches
 * this line; a debugger stops at the abort with the caller on the stack. */
void am_debug_fail(const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "allocmark: %s\n", line);
    fflush(stderr);
    abort();
}

void am_asan_bad_free(void *p, size_t n) {
#if AM_ASAN
    __asan_describe_address(p); /* where it was allocated and freed */
#endif
    am_debug_fail("double free (or free of a pointer not handed out) of block %p (%zu bytes)", p, n);
}
