/* platform_layer.c: the calls of platform.h, checked the same way on POSIX
 * and Win32 (under wine too): clock, threads, mutex, thread-locals, virtual
 * memory, residency, file mappings, peak RSS. No timing thresholds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "platform.h"

static void clock_is_monotonic_and_advances(void) {
    uint64_t prev = am_now_ns();
    for (int i = 0; i < 10000; i++) {
        uint64_t t = am_now_ns();
        CHECK(t >= prev);
        prev = t;
    }
    uint64_t start = am_now_ns(), t;
    while ((t = am_now_ns()) == start) {}
    CHECK(t > start);
    CHECK(am_timer_resolution_ns() > 0);
}

static void cpu_count_and_page_size_are_sane(void) {
    CHECK(am_cpu_count() >= 1);
    size_t page = am_page_size();
    CHECK(page >= 512);
    CHECK((page & (page - 1)) == 0);
}

typedef struct shared { am_mutex *m; long counter; int seen[2]; } shared;
typedef struct worker { shared *s; int id; } worker;

static AM_THREAD_LOCAL int thread_tag;

static void add_under_lock(void *arg) {
    worker *w = arg;
    thread_tag = w->id + 100;
    for (int i = 0; i < 100000; i++) {
        am_mutex_lock(w->s->m);
        w->s->counter++;
        am_mutex_unlock(w->s->m);
    }
    /* the other thread wrote its own tag meanwhile; ours must be untouched */
    w->s->seen[w->id] = thread_tag;
}

static void threads_run_and_mutex_excludes(void) {
    shared s;
    memset(&s, 0, sizeof s);
    s.m = am_mutex_create();
    CHECK(s.m != NULL);
    thread_tag = 7;
    worker w[2] = {{&s, 0}, {&s, 1}};
    am_thread *t0 = am_thread_start(add_under_lock, &w[0]);
    am_thread *t1 = am_thread_start(add_under_lock, &w[1]);
    CHECK(t0 != NULL && t1 != NULL);
    am_thread_join(t0);
    am_thread_join(t1);
    am_mutex_destroy(s.m);
    CHECK(s.counter == 200000);
    CHECK(s.seen[0] == 100 && s.seen[1] == 101);
    CHECK(thread_tag == 7);
}

static void reserve_is_aligned_zeroed_and_writable(void) {
    size_t page = am_page_size(), bytes = 64 * page;
    unsigned char *p = am_vm_reserve(bytes);
    CHECK(p != NULL);
    CHECK(((uintptr_t)p & (page - 1)) == 0);
    int zero = 1;
    for (size_t i = 0; i < bytes; i += 61) zero &= p[i] == 0;
    p[bytes - 1] = 0x5a;
    memset(p, 0xa5, page);
    am_escape(p);
    int ok = p[bytes - 1] == 0x5a && p[page - 1] == 0xa5;
    am_vm_release(p, bytes);
    CHECK(zero);
    CHECK(ok);
}

/* Residency: untouched pages are not resident, touched ones are. Where the
 * system cannot say (a 0 after touching), that is the documented answer. */
static void residency_follows_touches(void) {
    size_t page = am_page_size(), pages = 32, bytes = pages * page;
    unsigned char *p = am_vm_reserve(bytes);
    CHECK(p != NULL);
    size_t before = am_vm_resident(p, bytes);
    for (size_t i = 0; i < bytes; i += page) p[i] = 1;
    am_escape(p);
    size_t after = am_vm_resident(p, bytes);
    size_t half = am_vm_resident(p + page / 2, 2 * page); /* spans 3 pages */
    am_vm_release(p, bytes);
    CHECK(before == 0);
    CHECK(after == 0 || after == bytes);
    CHECK(after == 0 || half == 3 * page);
}

/* Eviction may drop the contents (MADV_DONTNEED) or keep them (PAGEOUT,
 * VirtualUnlock); either way the memory stays mapped and usable. */
static void evicted_memory_stays_usable(void) {
    size_t page = am_page_size(), bytes = 16 * page;
    unsigned char *p = am_vm_reserve(bytes);
    CHECK(p != NULL);
    memset(p, 3, bytes);
    int rc = am_vm_evict(p, bytes);
    int kept_or_zero = 1;
    for (size_t i = 0; i < bytes; i += page) kept_or_zero &= p[i] == 3 || p[i] == 0;
    memset(p, 4, bytes);
    int rewritten = p[bytes - 1] == 4 && p[0] == 4;
    am_vm_release(p, bytes);
    CHECK(rc == 0);
    CHECK(kept_or_zero);
    CHECK(rewritten);
}

/* Giving back the tail of a reservation keeps the head intact (Windows
 * decommits the tail; POSIX unmaps it), and the whole can be released after. */
static void partial_release_keeps_the_rest(void) {
    size_t page = am_page_size(), bytes = 8 * page;
    unsigned char *p = am_vm_reserve(bytes);
    CHECK(p != NULL);
    memset(p, 9, bytes);
    am_vm_release(p + 4 * page, 4 * page);
    int kept = p[0] == 9 && p[4 * page - 1] == 9;
    memset(p, 1, 4 * page);
    am_vm_release(p, bytes);
    CHECK(kept);
}

static void temp_path(char *out, size_t n) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = getenv("TEMP");
    if (!dir || !*dir) dir = ".";
    snprintf(out, n, "%s/am-platform-%llu.map", dir, (unsigned long long)am_now_ns());
}

static void file_map_keeps_contents_through_eviction(void) {
    char path[1024];
    temp_path(path, sizeof path);
    size_t page = am_page_size(), bytes = 3 * page + 100;
    am_file_map m;
    CHECK(am_file_map_create(&m, path, bytes) == 0);
    unsigned char *p = m.base;
    int zero = p[0] == 0 && p[bytes - 1] == 0;
    for (size_t i = 0; i < bytes; i++) p[i] = (unsigned char)(i * 7);
    int rc = am_file_evict(&m, page, 2 * page);
    int bad = 0;
    for (size_t i = 0; i < bytes; i++) bad += p[i] != (unsigned char)(i * 7);
    am_file_map_close(&m);
#if defined(_WIN32)
    /* FILE_FLAG_DELETE_ON_CLOSE: nothing is left behind */
    FILE *f = fopen(path, "rb");
    int gone = f == NULL;
    if (f) fclose(f);
#else
    int gone = 1;
#endif
    remove(path);
    CHECK(m.base == NULL);
    CHECK(zero);
    CHECK(rc == 0);
    CHECK(bad == 0);
    CHECK(gone);
}

static void file_map_rejects_a_bad_path(void) {
    am_file_map m;
    CHECK(am_file_map_create(&m, "no-such-dir-am/x/y.map", 4096) != 0);
    CHECK(m.base == NULL);
}

static void peak_rss_covers_touched_memory(void) {
    size_t bytes = (size_t)16 << 20;
    unsigned char *p = am_vm_reserve(bytes);
    CHECK(p != NULL);
    for (size_t i = 0; i < bytes; i += 1024) p[i] = 1;
    am_escape(p);
    size_t peak = am_peak_rss_bytes();
    am_vm_release(p, bytes);
    CHECK_MSG(peak >= bytes, "peak rss %llu < %llu", (unsigned long long)peak, (unsigned long long)bytes);
}

int main(int argc, char **argv) {
    static const am_test tests[] = {
        {"clock_is_monotonic_and_advances", clock_is_monotonic_and_advances},
        {"cpu_count_and_page_size_are_sane", cpu_count_and_page_size_are_sane},
        {"threads_run_and_mutex_excludes", threads_run_and_mutex_excludes},
        {"reserve_is_aligned_zeroed_and_writable", reserve_is_aligned_zeroed_and_writable},
        {"residency_follows_touches", residency_follows_touches},
        {"evicted_memory_stays_usable", evicted_memory_stays_usable},
        {"partial_release_keeps_the_rest", partial_release_keeps_the_rest},
        {"file_map_keeps_contents_through_eviction", file_map_keeps_contents_through_eviction},
        {"file_map_rejects_a_bad_path", file_map_rejects_a_bad_path},
        {"peak_rss_covers_touched_memory", peak_rss_covers_touched_memory},
        {NULL, NULL}};
    return am_run_tests("platform", tests, argc, argv);
}
