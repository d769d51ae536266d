/* test_counting.c: the counting wrapper (counting.h) on this row: a scripted
 * sequence of allocations under nested owners gives the exact table of seed
 * 002's layout (columns, blank zero deltas, children by bytes in use, deltas
 * since the previous report), blocks stay intact behind their headers, and a
 * double free or a free with the wrong size is caught and recorded. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "allocator.h"

static const char *const FIRST[] = {
    "                                 | Bytes Allocated| -delta-| Max Bytes Allocated| Allocations| -delta-| Deallocations| -delta-\n",
    "    TransportManager             |           7,164|   7,164|               7,164|           5|       5|             1|       1\n",
    "      *direct*                   |             100|     100|                 100|           1|       1|             0|        \n",
    "      cl6_dc3                    |           7,000|   7,000|               7,000|           3|       3|             1|       1\n",
    "        node1                    |           5,000|   5,000|               5,000|           1|       1|             0|        \n",
    "        node3                    |           2,000|   2,000|               3,000|           2|       2|             1|       1\n",
    "      ConnectionStates           |              64|      64|                  64|           1|       1|             0|        \n",
    NULL};
static const char *const SECOND[] = {
    "                                 | Bytes Allocated| -delta-| Max Bytes Allocated| Allocations| -delta-| Deallocations| -delta-\n",
    "    TransportManager             |             164|  -7,000|               7,164|           5|        |             3|       2\n",
    "      *direct*                   |             100|        |                 100|           1|        |             0|        \n",
    "      ConnectionStates           |              64|        |                  64|           1|        |             0|        \n",
    "      cl6_dc3                    |               0|  -7,000|               7,000|           3|        |             3|       2\n",
    "        node1                    |               0|  -5,000|               5,000|           1|        |             1|       1\n",
    "        node3                    |               0|  -2,000|               3,000|           2|        |             2|       1\n",
    NULL};

/* the report equals the expected lines; prints the difference otherwise */
static int same_table(const char *got, const char *const *want) {
    size_t at = 0;
    for (int i = 0; want[i]; i++) {
        size_t n = strlen(want[i]);
        if (!got || strncmp(got + at, want[i], n) != 0) {
            fprintf(stderr, "line %d: want\n%sgot\n%.*s\n", i, want[i], (int)n, got ? got + at : "(null)");
            return 0;
        }
        at += n;
    }
    if (got[at]) fprintf(stderr, "extra lines:\n%s", got + at);
    return got[at] == 0;
}

static void fill(unsigned char *p, size_t n, unsigned char v) { memset(p, v, n); }
static int intact(const unsigned char *p, size_t n, unsigned char v) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

static void test_table_of_nested_owners(void) {
    am_counting_start();
    am_heap *h = am_create(NULL);
    CHECK(h != NULL);
    am_owner_push("TransportManager");
    unsigned char *a = am_alloc(h, 100);
    am_owner_push("cl6_dc3");
    am_owner_push("node3");
    unsigned char *b = am_alloc(h, 1000), *c = am_alloc(h, 2000);
    CHECK(a && b && c);
    fill(a, 100, 1);
    fill(b, 1000, 2);
    fill(c, 2000, 3);
    am_free(h, b, 1000);
    am_owner_pop();
    am_owner_push("node1");
    unsigned char *d = am_realloc(h, NULL, 0, 5000);
    CHECK(d != NULL);
    fill(d, 5000, 4);
    am_owner_pop();
    am_owner_pop();
    am_owner_push("ConnectionStates");
    unsigned char *e = am_alloc_aligned(h, 64, 64);
    CHECK(e != NULL && ((uintptr_t)e & 63) == 0);
    fill(e, 64, 5);
    am_owner_pop();
    am_owner_pop();
    CHECK(am_owner_current() == NULL);

    char *t = am_counting_report();
    CHECK(same_table(t, FIRST));
    free(t);
    am_owner_counts n3;
    CHECK(am_owner_counts_of("TransportManager/cl6_dc3/node3", &n3) == 0);
    CHECK(n3.bytes == 2000 && n3.peak == 3000 && n3.allocs == 2 && n3.frees == 1);
    CHECK(am_owner_counts_of("TransportManager/nosuch", &n3) != 0);

    /* frees are filed under the block's owner, whoever is current */
    CHECK(intact(a, 100, 1) && intact(c, 2000, 3) && intact(d, 5000, 4) && intact(e, 64, 5));
    am_free(h, c, 2000);
    am_free(h, d, 5000);
    t = am_counting_report();
    CHECK(same_table(t, SECOND));
    free(t);
    am_free(h, a, 100);
    am_free_aligned(h, e, 64, 64);
    am_stats s;
    am_get_stats(h, &s);
    CHECK(s.bytes_live == 0 && s.allocs == 5 && s.frees == 5);
    CHECK(am_counting_errors() == 0);
    am_destroy(h);
    am_counting_stop();
}

/* arrays, and blocks still live when the heap goes */
static void test_arrays_and_forgotten_blocks(void) {
    am_counting_start();
    am_heap *h = am_create(NULL);
    CHECK(h != NULL);
    am_owner_push("vector");
    unsigned char *v = am_alloc_array(h, 10, 12);
    CHECK(v != NULL && ((uintptr_t)v & 3) == 0);
    fill(v, 120, 7);
    v = am_realloc_array(h, v, 10, 40, 12);
    CHECK(v != NULL && intact(v, 120, 7));
    am_owner_pop();
    am_owner_counts o;
    CHECK(am_owner_counts_of("vector", &o) == 0);
    CHECK(o.bytes == 480 && o.peak == 600 && o.allocs == 2 && o.frees == 1);
    if (AM_RESET_FREES_LIVE) {
        am_reset(h);
        CHECK(am_owner_counts_of("vector", &o) == 0 && o.bytes == 0 && o.frees == 2);
    } else {
        am_free_array(h, v, 40, 12);
    }
    am_destroy(h);
    am_counting_stop();
}

static void test_double_and_wrong_size_free_are_caught(void) {
    am_counting_start();
    am_heap *h = am_create(NULL);
    CHECK(h != NULL);
    am_owner_push("t");
    void *q = am_alloc(h, 100);
    CHECK(q != NULL);
    am_free(h, q, 99);
    CHECK(am_counting_errors() == 1);
    CHECK(strstr(am_counting_last_error(), "wrong size") != NULL);
    am_owner_counts o;
    CHECK(am_owner_counts_of("t", &o) == 0 && o.bytes == 0 && o.frees == 1);
#if !AM_ASAN /* reading a freed block's header is what ASan forbids */
    void *p = am_alloc(h, 48);
    CHECK(p != NULL);
    am_free(h, p, 48);
    am_free(h, p, 48);
    CHECK(am_counting_errors() == 2);
#if AM_DEBUG /* the debug layer below fills a freed block, the counting header too, with 0xDD */
    CHECK(strstr(am_counting_last_error(), "not a live counted block") != NULL);
#else
    CHECK(strstr(am_counting_last_error(), "double free") != NULL);
#endif
    CHECK(am_owner_counts_of("t", &o) == 0 && o.allocs == 2 && o.frees == 2 && o.bytes == 0);
#endif
    am_owner_pop();
    am_stats s;
    am_get_stats(h, &s);
    CHECK(s.bytes_live == 0 && s.allocs == s.frees);
    am_destroy(h);
    am_counting_stop();
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"table_of_nested_owners", test_table_of_nested_owners},
        {"arrays_and_forgotten_blocks", test_arrays_and_forgotten_blocks},
        {"double_and_wrong_size_free_are_caught", test_double_and_wrong_size_free_are_caught},
        {NULL, NULL}};
    return am_run_tests("counting[" AM_ROW_NAME "]", tests, argc, argv);
}
