/* test_system.c: what the system rows promise beyond the contract: a sized
 * row's realloc leaves a block in the size class of its new size, since the
 * sized free that follows names that size (tcmalloc's tc_free_sized trusts it:
 * a block shrunk in place kept its old class, and one grown past its class
 * went into the class of a quarter more than asked; either went onto the
 * wrong free list, and a later free crashed). Built for the system rows only. */
#include <string.h>

#include "check.h"
#include "sanitize.h"
#include "workload.h"

#if defined(AM_SYSTEM_H) && AM_SYSTEM_SIZED == AM_SIZED_TCMALLOC
#define USABLE(p) tc_malloc_size(p)
#elif defined(AM_SYSTEM_H) && AM_SYSTEM_SIZED == AM_SIZED_JEMALLOC
#define USABLE(p) sallocx((p), 0)
#elif defined(AM_SYSTEM_H) && AM_SYSTEM_SIZED == AM_SIZED_MIMALLOC
#define USABLE(p) mi_usable_size(p)
#endif

#ifdef USABLE
#if AM_DEBUG || AM_ASAN
static void test_a_shrunk_block_is_in_its_new_size_s_class(void) {
    CHECK_SKIP("the debug layer and ASan hand the library other sizes than the test's");
}
static void test_a_grown_block_is_in_its_new_size_s_class(void) {
    CHECK_SKIP("the debug layer and ASan hand the library other sizes than the test's");
}
#else
/* the usable size of a new block of n bytes */
static size_t fresh_usable(am_heap *h, size_t n) {
    void *p = am_alloc(h, n);
    size_t usable = p ? USABLE(p) : 0;
    am_free(h, p, n);
    return usable;
}

static void test_a_shrunk_block_is_in_its_new_size_s_class(void) {
    am_options o;
    am_options_default(&o);
    am_heap *h = am_create(&o);
    CHECK(h);
    for (size_t from = 64; from <= 8192; from *= 2) {
        size_t tos[] = {from / 2 + 8, from * 3 / 4, from - 8};
        for (size_t k = 0; k < sizeof tos / sizeof tos[0]; k++) {
            size_t to = tos[k];
            char *p = am_alloc(h, from);
            CHECK(p);
            memset(p, 7, from);
            char *q = am_realloc(h, p, from, to);
            CHECK(q);
            CHECK(q[0] == 7 && q[to - 1] == 7);
            CHECK_MSG(USABLE(q) == fresh_usable(h, to), "%zu bytes shrunk to %zu: usable %zu, a new block's %zu",
                      from, to, (size_t)USABLE(q), fresh_usable(h, to));
            am_free(h, q, to);
        }
    }
    am_destroy(h);
}

static void test_a_grown_block_is_in_its_new_size_s_class(void) {
    am_options o;
    am_options_default(&o);
    am_heap *h = am_create(&o);
    CHECK(h);
    for (size_t from = 40; from <= 6000; from = from * 3 / 2) {
        size_t tos[] = {from + 8, from + from / 8 + 8, from + from / 4, from * 2};
        for (size_t k = 0; k < sizeof tos / sizeof tos[0]; k++) {
            size_t to = tos[k];
            char *p = am_alloc(h, from);
            CHECK(p);
            memset(p, 7, from);
            char *q = am_realloc(h, p, from, to);
            CHECK(q);
            CHECK(q[0] == 7 && q[from - 1] == 7);
            CHECK_MSG(USABLE(q) == fresh_usable(h, to), "%zu bytes grown to %zu: usable %zu, a new block's %zu",
                      from, to, (size_t)USABLE(q), fresh_usable(h, to));
            am_free(h, q, to);
        }
    }
    am_destroy(h);
}
#endif

static const am_test tests[] = {
    {"a_shrunk_block_is_in_its_new_size_s_class", test_a_shrunk_block_is_in_its_new_size_s_class},
    {"a_grown_block_is_in_its_new_size_s_class", test_a_grown_block_is_in_its_new_size_s_class},
    {NULL, NULL}};
#else
static const am_test tests[] = {{NULL, NULL}};
#endif

int main(int argc, char **argv) { return am_run_tests("system[" AM_ROW_NAME "]", tests, argc, argv); }
