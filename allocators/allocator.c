/* allocator.c: what all strategies share out of line: default options, the
 * reports of the debug layer and of the ASan free check (never on a fast path),
 * and the table of the run-time bound build (AM_VIRTUAL). */
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

#if defined(AM_STRATEGY) && AM_VIRTUAL
/* The table of the run-time bound build (<row>@virtual): each entry is an
 * ordinary function with the strategy's fast path inlined into it, as a
 * std::pmr::memory_resource's do_allocate has its pool's. */
static void *vt_alloc(am_heap *h, size_t n) { return AM_BELOW(_alloc)(h, n); }
static void vt_free(am_heap *h, void *p, size_t n) { AM_BELOW(_free)(h, p, n); }
static void *vt_alloc_aligned(am_heap *h, size_t n, size_t align) { return AM_BELOW(_alloc_aligned)(h, n, align); }
static void vt_free_aligned(am_heap *h, void *p, size_t n, size_t align) { AM_BELOW(_free_aligned)(h, p, n, align); }
static void *vt_realloc(am_heap *h, void *p, size_t old_n, size_t new_n) {
    return AM_BELOW(_realloc)(h, p, old_n, new_n);
}
#if AM_S(_HAS_ARRAY)
static void *vt_alloc_array(am_heap *h, size_t count, size_t elem) { return AM_BELOW(_alloc_array)(h, count, elem); }
static void vt_free_array(am_heap *h, void *p, size_t count, size_t elem) { AM_BELOW(_free_array)(h, p, count, elem); }
static void *vt_realloc_array(am_heap *h, void *p, size_t old_count, size_t new_count, size_t elem) {
    return AM_BELOW(_realloc_array)(h, p, old_count, new_count, elem);
}
#endif
static void vt_reset(am_heap *h) { AM_S(_reset)(h); }

static const am_vtable strategy_vtable = {
    vt_alloc, vt_free, vt_alloc_aligned, vt_free_aligned, vt_realloc,
#if AM_S(_HAS_ARRAY)
    vt_alloc_array, vt_free_array, vt_realloc_array,
#endif
    vt_reset,
};
const am_vtable *volatile am_bound_vtable = &strategy_vtable;
#endif
