/* test_monotonic.c: what the monotonic arena promises beyond the contract:
 * bump order, last-block rollback, in-place resize, chunk doubling, reset to
 * the first chunk, the local and caller buffers, the limit. Built for the
 * monotonic rows only (the Makefile's test_<source>.c rule). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "workload.h" /* am_rand_below */

#ifdef AM_MONOTONIC_H
/* DEBUG=1 hands the strategy every block enlarged by a header and a canary
 * (allocator.h), so the addresses and counts of its own layout checked here
 * hold only in the other builds, which run these tests. */
#if AM_DEBUG
#define LAYOUT_TEST() CHECK_SKIP("DEBUG=1: the debug layer enlarges every block, so the layout checked here differs")
#define DEBUG_HEAD AM_DEBUG_HEAD                      /* bytes before the caller's block */
#define DEBUG_EXTRA (AM_DEBUG_HEAD + AM_DEBUG_CANARY) /* bytes added to each block */
#else
#define LAYOUT_TEST() ((void)0)
#define DEBUG_HEAD 0
#define DEBUG_EXTRA 0
#endif


static int aligned_to(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

/* In the local build the first heap of a thread starts from the thread's
 * buffer; tests that want malloc chunks first take the buffer with a holder. */
static am_heap *holder;

static void hold_local_buffer(void) {
#if AM_MONOTONIC_LOCAL
    if (!holder) holder = am_create(NULL);
#endif
}

static void release_local_buffer(void) {
    am_destroy(holder);
    holder = NULL;
}

static am_heap *new_heap(size_t initial, size_t max_chunk, size_t limit) {
    am_options o;
    am_options_default(&o);
    o.initial_bytes = initial;
    o.max_chunk = max_chunk;
    o.limit = limit;
    return am_create(&o);
}

static size_t reserved_of(am_heap *h) {
    am_stats s;
    am_get_stats(h, &s);
    return s.bytes_reserved;
}

/* Within a chunk, each block starts where the one before ended (rounded up to
 * AM_MIN_ALIGN), so addresses increase and stay aligned. */
static void test_bump_addresses_increase_aligned(void) {
    LAYOUT_TEST();
    am_heap *h = new_heap(0, 0, 0);
    CHECK(h != NULL);
    uint64_t rng = 1;
    char *prev = NULL;
    size_t prev_n = 0;
    for (int i = 0; i < 500; i++) {
        size_t n = 1 + (size_t)(am_rand_below(&rng, 100));
        char *p = am_alloc(h, n);
        CHECK(p != NULL);
        CHECK(aligned_to(p, AM_MIN_ALIGN));
        if (prev) CHECK_MSG(p == prev + AM_ALIGN_UP(prev_n, AM_MIN_ALIGN), "block %d at %p, expected %p", i,
                            (void *)p, (void *)(prev + AM_ALIGN_UP(prev_n, AM_MIN_ALIGN)));
        memset(p, i & 0xff, n);
        prev = p;
        prev_n = n;
    }
    am_destroy(h);
}

static void test_free_rolls_back_only_the_last_block(void) {
    LAYOUT_TEST();
    am_heap *h = new_heap(0, 0, 0);
    CHECK(h != NULL);
    char *a = am_alloc(h, 100);
    char *b = am_alloc(h, 50);
    CHECK(a && b && b == a + 112);
    am_free(h, a, 100); /* not the last: nothing happens */
    char *c = am_alloc(h, 10);
    CHECK(c == b + 64);
    am_free(h, c, 10); /* the last: its bytes come back */
    char *d = am_alloc(h, 16);
    CHECK(d == c);
    am_free(h, d, 16);
    am_free(h, b, 50); /* now b is last: back to b, but a's bytes stay lost */
    char *e = am_alloc(h, 100);
    CHECK(e == b);
    char *f = am_alloc(h, 50);
    am_free(h, f, 50); /* freed in reverse order, every block comes back */
    am_free(h, e, 100);
    CHECK(am_alloc(h, 1) == b);
    am_destroy(h);
}

static void test_realloc_in_place_when_last(void) {
    LAYOUT_TEST();
    am_heap *h = new_heap(0, 0, 0);
    CHECK(h != NULL);
    unsigned char *p = am_alloc(h, 100);
    CHECK(p != NULL);
    for (int i = 0; i < 100; i++) p[i] = (unsigned char)i;
    unsigned char *q = am_realloc(h, p, 100, 5000);
    CHECK_MSG(q == p, "the last block moved to grow");
    for (int i = 0; i < 100; i++) CHECK(q[i] == (unsigned char)i);
    q = am_realloc(h, p, 5000, 20);
    CHECK_MSG(q == p, "the last block moved to shrink");
    CHECK(am_alloc(h, 1) == (void *)(p + 32)); /* shrinking gave the tail back */

    /* not the last: shrinking stays, growing moves and copies */
    unsigned char *r = am_realloc(h, p, 20, 10);
    CHECK(r == p);
    r = am_realloc(h, p, 10, 40);
    CHECK(r != p && r != NULL);
    for (int i = 0; i < 10; i++) CHECK(r[i] == (unsigned char)i);
    /* a last block that no longer fits its chunk moves to a new one */
    am_reset(h);
    size_t room = (size_t)(h->bump.end - h->bump.cur);
    p = am_alloc(h, room - 64);
    CHECK(p != NULL);
    p[0] = 7;
    q = am_realloc(h, p, room - 64, room + 16);
    CHECK(q != NULL && q != p && q[0] == 7);
    am_destroy(h);
}

/* Chunks double from initial_bytes, stop at max_chunk, and every byte taken
 * from malloc is counted as reserved. */
static void test_chunks_double_and_are_counted(void) {
    hold_local_buffer();
    am_heap *h = new_heap(4096, 0, 0);
    CHECK(h != NULL);
    CHECK(monotonic_chunk_count(h) == 1);
    CHECK(reserved_of(h) == 4096);
    size_t expect = 4096, chunk = 4096;
    for (size_t chunks = 1; chunks < 6;) {
        CHECK(am_alloc(h, 1000) != NULL);
        if (monotonic_chunk_count(h) != chunks) {
            chunks++;
            chunk *= 2;
            expect += chunk;
            CHECK_MSG(reserved_of(h) == expect, "%zu chunks: reserved %zu, expected %zu", chunks,
                      reserved_of(h), expect);
        }
    }
    am_stats s;
    am_get_stats(h, &s);
    CHECK(s.reserved_peak == expect);
    am_destroy(h);

    h = new_heap(4096, 8192, 0);
    CHECK(h != NULL);
    while (monotonic_chunk_count(h) < 5) CHECK(am_alloc(h, 1000) != NULL);
    CHECK_MSG(reserved_of(h) == 4096 + 4 * 8192, "reserved %zu with chunks capped at 8192", reserved_of(h));
    /* a block larger than any chunk gets a chunk of its own size */
    CHECK(am_alloc(h, 100000) != NULL);
    CHECK(reserved_of(h) >= 4096 + 4 * 8192 + 100000);
    am_destroy(h);
    release_local_buffer();
}

/* As the 2009 comparison's storage::reset(): every chunk is kept and rewound,
 * and the next fill takes them again, oldest first, before a new one. */
static void test_reset_rewinds_and_keeps_every_chunk(void) {
    hold_local_buffer();
    am_heap *h = new_heap(4096, 0, 0);
    CHECK(h != NULL);
    char *first = am_alloc(h, 10);
    while (monotonic_chunk_count(h) < 4) CHECK(am_alloc(h, 1500) != NULL);
    size_t held = 4096 + 8192 + 16384 + 32768;
    CHECK(reserved_of(h) == held);
    am_reset(h);
    CHECK(monotonic_chunk_count(h) == 4);
    CHECK(reserved_of(h) == held);
    CHECK_MSG(am_alloc(h, 10) == first, "reset did not rewind to the first chunk's start");
    /* the same fill again takes no new chunk */
    while (h->kept) CHECK(am_alloc(h, 1500) != NULL);
    CHECK_MSG(monotonic_chunk_count(h) == 4 && reserved_of(h) == held,
              "refilling after reset took a new chunk: %zu chunks, %zu bytes", monotonic_chunk_count(h), reserved_of(h));
    /* past the kept chunks, growth goes on from the largest */
    while (monotonic_chunk_count(h) < 5) CHECK(am_alloc(h, 1500) != NULL);
    CHECK(reserved_of(h) == held + 65536);
    /* a block too large for the kept chunks passes them over; they stay held */
    am_reset(h);
    CHECK(am_alloc(h, 40000) != NULL);
    CHECK(monotonic_chunk_count(h) == 5 && reserved_of(h) == held + 65536);
    CHECK(am_alloc(h, 100000) != NULL);
    CHECK(monotonic_chunk_count(h) == 6);
    am_destroy(h);
    release_local_buffer();
}

/* A caller's buffer is used first, counted, rewound to by reset, and never
 * freed: freeing this stack buffer would crash the test. */
static void test_caller_buffer_first_and_never_freed(void) {
    LAYOUT_TEST();
    enum { BYTES = 8192 };
    char raw[BYTES + AM_MIN_ALIGN];
    char *buf = (char *)AM_ALIGN_UP((uintptr_t)raw, AM_MIN_ALIGN);
    memset(buf, 0, BYTES);
    am_options o;
    am_options_default(&o);
    o.buffer = buf;
    o.buffer_size = BYTES;
    o.initial_bytes = 4096; /* so that the chunk after the buffer is twice the buffer */
    am_heap *h = am_create(&o);
    CHECK(h != NULL);
    CHECK(monotonic_chunk_count(h) == 0);
    CHECK(reserved_of(h) == BYTES);
    char *p = am_alloc(h, 100);
    CHECK(p == buf);
    size_t inside = 1;
    char *q;
    while ((uintptr_t)(q = am_alloc(h, 1000)) - (uintptr_t)buf < BYTES) {
        memset(q, 0x5a, 1000);
        inside++;
    }
    CHECK(inside == 9); /* 112 + 8 * 1008 = 8176 bytes fit, the ninth 1000 does not */
    CHECK(monotonic_chunk_count(h) == 1);
    CHECK_MSG(reserved_of(h) == BYTES + 2 * BYTES,
              "after the buffer, the first chunk is twice its size: reserved %zu", reserved_of(h));
    am_reset(h);
    CHECK(monotonic_chunk_count(h) == 1); /* kept, the buffer rewound to */
    CHECK(am_alloc(h, 1) == buf);
    am_destroy(h);
    CHECK(buf[200] == 0x5a); /* still ours, still as written */
}

#if AM_MONOTONIC_LOCAL
typedef struct local_job {
    char *first;
    size_t chunks;
} local_job;

static void local_worker(void *arg) {
    local_job *j = arg;
    am_heap *h = am_create(NULL);
    if (!h) return;
    j->first = h->first;
    j->chunks = monotonic_chunk_count(h);
    am_destroy(h);
}

/* The local build's first heap of a thread starts from the thread's buffer
 * (no malloc chunk); a second heap alive at once starts from malloc; the
 * buffer is handed out again once its heap is destroyed; another thread has
 * its own buffer. */
static void test_local_buffer_first_one_heap_at_a_time(void) {
    am_heap *a = am_create(NULL);
    CHECK(a != NULL);
    CHECK(monotonic_chunk_count(a) == 0);
    char *buf = a->first;
    size_t bytes = (size_t)(a->first_end - a->first); /* the buffer less its alignment */
    CHECK(bytes + AM_MIN_ALIGN > AM_MONOTONIC_LOCAL_BYTES);
    CHECK(reserved_of(a) == bytes);
    char *p = am_alloc(a, 100000);
    CHECK(p == buf + DEBUG_HEAD);
    am_heap *b = am_create(NULL);
    CHECK(b != NULL);
    CHECK(monotonic_chunk_count(b) == 1);
    CHECK(b->first != buf);
    /* the buffer fills, then malloc chunks follow, at least twice its size */
    while (monotonic_chunk_count(a) == 0) CHECK(am_alloc(a, 100000) != NULL);
    CHECK(reserved_of(a) == 3 * bytes);
    am_reset(a);
    CHECK(am_alloc(a, 1) == buf + DEBUG_HEAD);
    am_destroy(a);
    am_heap *c = am_create(NULL);
    CHECK(c != NULL);
    CHECK_MSG(c->first == buf && monotonic_chunk_count(c) == 0, "the buffer was not handed out again");
    local_job j = {NULL, 99};
    am_thread *t = am_thread_start(local_worker, &j);
    CHECK(t != NULL);
    am_thread_join(t);
    CHECK(j.first != NULL && j.first != buf && j.chunks == 0);
    am_destroy(b);
    am_destroy(c);
}
#endif

static void test_limit_returns_null(void) {
    hold_local_buffer();
    const size_t limit = 20000;
    am_heap *h = new_heap(4096, 0, limit);
    CHECK(h != NULL);
    CHECK(am_alloc(h, limit) == NULL); /* with the headers it cannot fit */
    size_t got = 0;
    while (am_alloc(h, 512)) got++;
    CHECK(reserved_of(h) <= limit);
    CHECK_MSG(got * 512 >= limit * 3 / 4, "only %zu blocks of 512 under a %zu-byte limit", got, limit);
    CHECK(am_alloc(h, 512) == NULL); /* asking again is fine */
    size_t held = reserved_of(h);
    am_reset(h);
    CHECK(reserved_of(h) == held); /* the chunks are kept, within the limit */
    CHECK(am_alloc(h, 512) != NULL);
    am_destroy(h);
    release_local_buffer();
#if AM_MONOTONIC_LOCAL
    /* a limit smaller than the local buffer trims it */
    h = new_heap(0, 0, 8192);
    CHECK(h != NULL);
    CHECK(reserved_of(h) == 8192);
    CHECK(am_alloc(h, 8192 - DEBUG_EXTRA) != NULL);
    CHECK(am_alloc(h, 1) == NULL);
    am_destroy(h);
#endif
}

static void test_aligned_and_huge(void) {
    LAYOUT_TEST();
    am_heap *h = new_heap(4096, 0, 0);
    CHECK(h != NULL);
    for (size_t align = 32; align <= 8192; align *= 2) {
        CHECK(am_alloc(h, 1 + align / 3) != NULL); /* knock the cursor off alignment */
        char *p = am_alloc_aligned(h, 100, align);
        CHECK_MSG(p != NULL && aligned_to(p, align), "alloc_aligned(100, %zu) = %p", align, (void *)p);
        memset(p, 1, 100);
        am_free_aligned(h, p, 100, align);
        CHECK(am_alloc(h, 1) == p); /* it was the last block: rolled back */
    }
    CHECK(am_alloc(h, SIZE_MAX) == NULL);
    CHECK(am_alloc(h, SIZE_MAX - 8) == NULL);
    CHECK(am_alloc(h, SIZE_MAX / 2) == NULL);
    CHECK(am_alloc_aligned(h, SIZE_MAX - 100, 64) == NULL);
    CHECK(am_alloc(h, 8) != NULL);
    am_destroy(h);
}

/* bump.h under ASan: resizing in place a block that is not in the current
 * chunk leaves every other block addressable. Two adjacent chunks, the current
 * one just below the other and nearly full: the resize used to poison from the
 * current chunk's mark up to the block, over the blocks in between (the
 * fuzzer found it in mmap_file, whose mappings can be adjacent). */
static void test_bump_resize_outside_the_current_chunk(void) {
    if (!AM_ASAN) CHECK_SKIP("only ASan builds poison");
    char *mem = malloc(8192);
    CHECK(mem != NULL);
    if (!mem) return;
    am_bump upper = {mem + 4096, mem + 8192, mem + 4096};
    char *a = am_bump_alloc(&upper, 16);
    char *p = am_bump_alloc(&upper, 100);
    CHECK(a != NULL && p == a + 16);
    memset(a, 1, 16);
    memset(p, 2, 100);
    am_bump lower = {mem, mem + 4096, mem};
    CHECK(am_bump_alloc(&lower, 4096 - 32) != NULL); /* its mark is at its end, 32 bytes ahead */
    CHECK(am_bump_resize(&lower, p, 100, 100) == p);
    CHECK(!am_is_poisoned(a) && !am_is_poisoned(a + 15));
    CHECK(!am_is_poisoned(p) && !am_is_poisoned(p + 99));
    CHECK(a[15] == 1 && p[99] == 2);
    CHECK(am_bump_resize(&lower, p, 100, 40) == p); /* a shrink: the tail goes */
    CHECK(!am_is_poisoned(a) && !am_is_poisoned(p + 39) && am_is_poisoned(p + 48));
    am_unpoison(mem, 8192);
    free(mem);
}

static const am_test tests[] = {
    {"bump_addresses_increase_aligned", test_bump_addresses_increase_aligned},
    {"bump_resize_outside_the_current_chunk", test_bump_resize_outside_the_current_chunk},
    {"free_rolls_back_only_the_last_block", test_free_rolls_back_only_the_last_block},
    {"realloc_in_place_when_last", test_realloc_in_place_when_last},
    {"chunks_double_and_are_counted", test_chunks_double_and_are_counted},
    {"reset_rewinds_and_keeps_every_chunk", test_reset_rewinds_and_keeps_every_chunk},
    {"caller_buffer_first_and_never_freed", test_caller_buffer_first_and_never_freed},
#if AM_MONOTONIC_LOCAL
    {"local_buffer_first_one_heap_at_a_time", test_local_buffer_first_one_heap_at_a_time},
#endif
    {"limit_returns_null", test_limit_returns_null},
    {"aligned_and_huge", test_aligned_and_huge},
    {NULL, NULL}};
#else
static const am_test tests[] = {{NULL, NULL}};
#endif

int main(int argc, char **argv) { return am_run_tests("monotonic[" AM_ROW_NAME "]", tests, argc, argv); }
