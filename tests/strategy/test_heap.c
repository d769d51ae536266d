/* test_heap.c: containers/heap.h (the query heap) under each strategy, with
 * both node -> index storages: pop order with decrease-key against a model,
 * Dijkstra against Bellman-Ford, clear and reuse, out of memory, every byte
 * returned, and the debug check against use from another thread. */
#define AM_DEBUG 1 /* this file tests the ownership check too */
#include <stdlib.h>
#include <string.h>
#include "container_util.h"

#define AM_QHEAP_NAME dheap
#define AM_QHEAP_KEY int32_t
#define AM_QHEAP_DATA uint32_t
#include "heap.h"

#define AM_QHEAP_NAME hheap
#define AM_QHEAP_KEY int32_t
#define AM_QHEAP_DATA uint32_t
#define AM_QHEAP_HASH 1
#include "heap.h"

#define HQ dheap
#define HQ_HASH 0
#include "heap_cases.h"
#undef HQ
#undef HQ_HASH

#define HQ hheap
#define HQ_HASH 1
#include "heap_cases.h"
#undef HQ
#undef HQ_HASH

/* ---- ownership: a heap used from a thread that did not create it is reported ---- */
static int g_reports;
static void record_report(const char *operation) {
    (void)operation;
    g_reports++;
}

static void insert_from_other_thread(void *arg) {
    dheap *q = arg;
    dheap_insert(q, 2, 9, 0);
}

static void own_heap_in_thread(void *arg) {
    (void)arg;
    am_heap *h = new_heap();
    if (!h) return;
    hheap q;
    if (hheap_init(&q, h, 0) == 0) {
        hheap_insert(&q, 1, 1, 1);
        hheap_delete_min(&q);
        hheap_clear(&q);
    }
    hheap_destroy(&q);
    am_destroy(h);
}

static void test_wrong_thread_reported(void) {
    void (*saved)(const char *) = am_qheap_wrong_thread;
    am_qheap_wrong_thread = record_report;
    g_reports = 0;
    am_heap *h = new_heap();
    dheap q;
    int ok = h && dheap_init(&q, h, 10) == 0 && dheap_insert(&q, 1, 5, 0) == 0;
    int reports_same_thread = g_reports;
    am_thread *t = ok ? am_thread_start(insert_from_other_thread, &q) : NULL;
    if (t) am_thread_join(t);
    int reports_other_thread = g_reports;
    /* a heap made and used inside one thread is fine */
    am_thread *t2 = am_thread_start(own_heap_in_thread, NULL);
    if (t2) am_thread_join(t2);
    int reports_own_thread = g_reports - reports_other_thread;
    am_qheap_wrong_thread = saved;
    CHECK(ok && t && t2);
    CHECK(reports_same_thread == 0);
    CHECK(reports_other_thread > 0);
    CHECK(reports_own_thread == 0);
    dheap_destroy(&q);
    CHECK(live_bytes(h) == 0);
    am_destroy(h);
}

static const am_test tests[] = {
    {"heap_dense_pops_in_order", dheap_test_pops_in_order},
    {"heap_hash_pops_in_order", hheap_test_pops_in_order},
    {"heap_dense_dijkstra_equals_bellman_ford", dheap_test_dijkstra},
    {"heap_hash_dijkstra_equals_bellman_ford", hheap_test_dijkstra},
    {"heap_dense_clear_and_bytes", dheap_test_clear_and_bytes},
    {"heap_hash_clear_and_bytes", hheap_test_clear_and_bytes},
    {"heap_dense_out_of_memory", dheap_test_out_of_memory},
    {"heap_hash_out_of_memory", hheap_test_out_of_memory},
    {"heap_wrong_thread_reported", test_wrong_thread_reported},
    {NULL, NULL}};

int main(int argc, char **argv) { return am_run_tests("heap/" AM_ROW_NAME, tests, argc, argv); }
