/* test_mmap_arena.c: what the mmap arenas promise beyond the contract: page-
 * granular chunks that double, the region list, eviction that keeps contents,
 * and for mmap_file a real shared file that is gone once released. Built for
 * the mmap_arena and mmap_file rows only (the Makefile's test_<source>.c rule). */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "workload.h"

#if defined(AM_MMAP_ARENA_H) && !defined(_WIN32)
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#ifdef AM_MMAP_ARENA_H

/* DEBUG=1 hands the strategy every block enlarged by a header and a canary
 * (allocator.h), so the addresses and counts of its own layout checked here
 * hold only in the other builds, which run these tests. */
#if AM_DEBUG
#define LAYOUT_TEST() CHECK_SKIP("DEBUG=1: the debug layer enlarges every block, so the layout checked here differs")
#else
#define LAYOUT_TEST() ((void)0)
#endif

#if AM_MMAP_FILE && defined(__linux__)
#include <sys/vfs.h>
/* whether the arena's default directory is a tmpfs, whose pages cannot be dropped */
static int in_tmpfs(void) {
    const char *dir = getenv("AM_TMPDIR");
    struct statfs fs;
    if (statfs(dir && *dir ? dir : "/tmp", &fs) != 0) return 1;
    return fs.f_type == 0x01021994; /* TMPFS_MAGIC */
}
#endif

static size_t reserved_of(am_heap *h) {
    am_stats s;
    am_get_stats(h, &s);
    return s.bytes_reserved;
}

static am_heap *new_heap(size_t initial, size_t limit, const char *dir) {
    am_options o;
    am_options_default(&o);
    o.initial_bytes = initial;
    o.limit = limit;
    o.path = dir;
    return am_create(&o);
}

typedef struct region_list {
    int count;
    char *base[32];
    size_t size[32], used[32];
} region_list;

static void collect(void *ctx, void *base, size_t size, size_t used) {
    region_list *r = ctx;
    if (r->count < 32) {
        r->base[r->count] = base;
        r->size[r->count] = size;
        r->used[r->count] = used;
    }
    r->count++;
}

static void test_chunks_are_pages_and_double(void) {
    LAYOUT_TEST();
    size_t page = am_page_size();
    am_heap *h = new_heap(1000, 0, NULL); /* rounded up to a page */
    CHECK(h != NULL);
    CHECK(reserved_of(h) == page);
    char *first = am_alloc(h, 100);
    CHECK(first != NULL && ((uintptr_t)first & (page - 1)) == 0);
    char *b = am_alloc(h, 50);
    CHECK(b == first + 112); /* bump order, as monotonic */
    am_free(h, b, 50);
    CHECK(am_alloc(h, 50) == b); /* last-block rollback */
    while (reserved_of(h) < page + 2 * page + 4 * page) CHECK(am_alloc(h, 1000) != NULL);
    CHECK(reserved_of(h) == 7 * page);
    region_list r;
    memset(&r, 0, sizeof r);
    mmap_arena_regions(h, collect, &r);
    CHECK(r.count == 3);
    CHECK(r.base[0] == first);
    CHECK(r.size[0] == page && r.size[1] == 2 * page && r.size[2] == 4 * page);
    for (int i = 0; i < 3; i++) {
        CHECK(((uintptr_t)r.base[i] & (page - 1)) == 0);
        CHECK(r.used[i] > 0 && r.used[i] <= r.size[i]);
    }
    CHECK(r.used[0] >= page - 1008); /* a chunk is left when the next 1000 does not fit */
    /* reset keeps every mapping and rewinds; the spares are used again in order */
    am_reset(h);
    CHECK(reserved_of(h) == 7 * page);
    CHECK(am_alloc(h, 8) == first);
    region_list again;
    memset(&again, 0, sizeof again);
    mmap_arena_regions(h, collect, &again);
    CHECK(again.count == 3 && again.used[0] == 16 && again.used[1] == 0 && again.used[2] == 0);
    uintptr_t lo = (uintptr_t)r.base[1], hi = lo + r.size[1], q = 0;
    for (int i = 0; i < 100 && (q < lo || q >= hi); i++) q = (uintptr_t)am_alloc(h, 1000);
    CHECK_MSG(q >= lo && q < hi, "after reset, the second chunk was not used again");
    CHECK(reserved_of(h) == 7 * page); /* and no new mapping */
    /* a request no spare can hold gets a new mapping, put before the spares */
    char *big = am_alloc(h, 5 * page);
    CHECK(big != NULL && reserved_of(h) > 7 * page);
    memset(&again, 0, sizeof again);
    mmap_arena_regions(h, collect, &again);
    CHECK(again.count == 4 && again.base[2] == big && again.base[3] == r.base[2]);
    am_destroy(h);
}

static void test_limit_counts_mapped_pages(void) {
    LAYOUT_TEST();
    size_t page = am_page_size();
    am_heap *h = new_heap(page, 5 * page, NULL);
    CHECK(h != NULL);
    size_t got = 0;
    while (am_alloc(h, 1000)) got++;
    CHECK(reserved_of(h) <= 5 * page);
    CHECK_MSG(got * 1008 >= 4 * page, "only %zu blocks of 1000 under %zu bytes", got, 5 * page);
    CHECK(am_alloc(h, page) == NULL);
    am_destroy(h);
    /* below a page: one page is mapped, and only the limit's bytes of it are
     * handed out and counted (as minimal does) */
    h = new_heap(0, page / 2, NULL);
    CHECK(h != NULL);
    got = 0;
    while (am_alloc(h, 16)) got++;
    CHECK_MSG(got == page / 2 / 16, "%zu blocks of 16 bytes under a %zu-byte limit", got, page / 2);
    CHECK(reserved_of(h) <= page / 2);
    am_destroy(h);
}

/* Eviction drops pages; what was written is still there afterwards (re-read
 * from the file, or from swap, or never dropped without swap). */
static void test_evict_keeps_contents(void) {
    am_heap *h = new_heap(64 * 1024, 0, NULL);
    CHECK(h != NULL);
    enum { N = 300 };
    uint64_t *p[N];
    for (int i = 0; i < N; i++) {
        p[i] = am_alloc(h, 4000);
        CHECK(p[i] != NULL);
        for (int k = 0; k < 500; k++) p[i][k] = (uint64_t)i * 1000003u + (uint64_t)k;
    }
    region_list r;
    memset(&r, 0, sizeof r);
    mmap_arena_regions(h, collect, &r);
    CHECK(r.count >= 3);
    size_t before = 0, after = 0;
    for (int i = 0; i < r.count && i < 32; i++) before += am_vm_resident(r.base[i], r.used[i]);
    for (int i = 0; i < r.count && i < 32; i++)
        CHECK_MSG(mmap_arena_evict(h, r.base[i], r.used[i]) == 0, "evicting region %d failed", i);
    for (int i = 0; i < r.count && i < 32; i++) after += am_vm_resident(r.base[i], r.used[i]);
    CHECK(before >= (size_t)N * 4000);
#if AM_MMAP_FILE && defined(__linux__)
    /* clean file pages are dropped for real, unless the file lives in memory
     * (tmpfs); anonymous pages stay where there is no swap */
    if (!in_tmpfs()) CHECK_MSG(after < before / 2, "%zu of %zu bytes still resident after eviction", after, before);
#else
    (void)after;
#endif
    /* a range inside a chunk, widened to pages */
    CHECK(mmap_arena_evict(h, (char *)p[5] + 10, 100) == 0);
    int x = 0;
    CHECK(mmap_arena_evict(h, &x, 4) == -1); /* not the arena's */
    for (int i = 0; i < N; i++)
        for (int k = 0; k < 500; k++)
            CHECK_MSG(p[i][k] == (uint64_t)i * 1000003u + (uint64_t)k, "block %d word %d lost in eviction", i, k);
    am_destroy(h);
}

#if AM_MMAP_FILE && !defined(_WIN32)
static int count_files(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "am-mmap-", 8) == 0) n++;
    closedir(d);
    return n;
}

/* Lines of /proc/self/maps that map a file of this directory (Linux). */
static int mapped_files(const char *dir) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, dir) && strstr(line, "/am-mmap-")) n++;
    fclose(f);
    return n;
}

/* Each chunk is a file in the chosen directory, mapped shared: writes through
 * the mapping are what the file holds. The name is unlinked at once, so the
 * directory stays empty; the file lives while mapped and is gone after destroy. */
static void test_file_backed_and_removed(void) {
    char dir[] = "/tmp/am-test-mmap-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    am_heap *h = new_heap(8192, 0, dir);
    CHECK(h != NULL);
    char *p = am_alloc(h, 3000);
    CHECK(p != NULL);
    memcpy(p + 100, "allocmark", 10);
    int fd = (int)mmap_arena_file_handle(h, p);
    CHECK(fd >= 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    CHECK(S_ISREG(st.st_mode) && (size_t)st.st_size == reserved_of(h));
    CHECK_MSG(st.st_nlink == 0, "the file still has %d names", (int)st.st_nlink);
    region_list r; /* p's offset in the file: 0 but for DEBUG=1's header */
    memset(&r, 0, sizeof r);
    mmap_arena_regions(h, collect, &r);
    CHECK(r.count == 1 && p >= r.base[0] && p < r.base[0] + r.size[0]);
    char back[10];
    CHECK(pread(fd, back, 10, (off_t)(p + 100 - r.base[0])) == 10);
    CHECK(memcmp(back, "allocmark", 10) == 0);
    while (reserved_of(h) < 3 * 8192) CHECK(am_alloc(h, 3000) != NULL);
    CHECK(count_files(dir) == 0); /* an interrupted run leaves nothing behind */
#if defined(__linux__)
    CHECK_MSG(mapped_files(dir) == 2, "%d mapped files, expected 2", mapped_files(dir));
#endif
    am_reset(h); /* the mappings stay */
#if defined(__linux__)
    CHECK(mapped_files(dir) == 2);
#endif
    am_destroy(h);
#if defined(__linux__)
    CHECK(mapped_files(dir) == 0);
#endif
    CHECK(fstat(fd, &st) != 0); /* closed */
    CHECK(count_files(dir) == 0);
    CHECK(rmdir(dir) == 0); /* empty */
}

static void test_missing_directory_fails_cleanly(void) {
    CHECK(new_heap(0, 0, "/nonexistent-allocmark-dir/x") == NULL);
}
#endif

static const am_test tests[] = {
    {"chunks_are_pages_and_double", test_chunks_are_pages_and_double},
    {"limit_counts_mapped_pages", test_limit_counts_mapped_pages},
    {"evict_keeps_contents", test_evict_keeps_contents},
#if AM_MMAP_FILE && !defined(_WIN32)
    {"file_backed_and_removed", test_file_backed_and_removed},
    {"missing_directory_fails_cleanly", test_missing_directory_fails_cleanly},
#endif
    {NULL, NULL}};
#else
static const am_test tests[] = {{NULL, NULL}};
#endif

int main(int argc, char **argv) { return am_run_tests("mmap_arena[" AM_ROW_NAME "]", tests, argc, argv); }
