/* mmap_arena.c: the mmap arena's slow paths: mapping chunks (anonymous, or a
 * fresh file each with -DAM_MMAP_FILE=1), growth under the byte limit, reset
 * (which keeps every mapping and rewinds), and the region list and eviction
 * for memory-pressure workloads. The fast paths are monotonic's, in bump.h.
 * Under ASan bump.h poisons ahead of the bump pointer; here the used part of
 * every chunk is poisoned again on reset, and what poison reached is
 * unpoisoned before the chunk is unmapped: the addresses may be mapped again
 * by anyone. */
#include "mmap_arena.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Descriptors live in malloc memory, not in the mapping: eviction then never
 * touches them, and a file holds only what was allocated. */
struct mmap_arena_chunk {
    mmap_arena_chunk *next; /* the next chunk in the order they are used */
    am_file_map map; /* base and size; handle is the file (mmap_file only) */
    size_t usable;   /* map.size, or less when a limit below a page trims the one chunk */
    size_t used;     /* bytes handed out, recorded when the chunk is left */
    size_t poisoned; /* ASan builds: bytes from base that poison reached, recorded when left */
    char *path;      /* a file still to remove on release (where it could not be unlinked early) */
};

static void count_reserved(mmap_arena_heap *h, size_t bytes) {
    h->reserved += bytes;
    if (h->reserved > h->reserved_peak) h->reserved_peak = h->reserved;
}

#if AM_MMAP_FILE
static char *file_name(mmap_arena_heap *h) {
    size_t len = strlen(h->dir);
    char *path = malloc(len + 80);
    if (!path) return NULL;
    /* time, heap address and a count: unique across heaps, threads and runs */
    snprintf(path, len + 80, "%s/am-mmap-%llx-%llx-%u.map", h->dir,
             (unsigned long long)am_now_ns(), (unsigned long long)(uintptr_t)h, h->files_made++);
    return path;
}
#endif

/* A mapping of bytes (whole pages) of which usable count against the limit
 * and are handed out. */
static mmap_arena_chunk *map_chunk(mmap_arena_heap *h, size_t bytes, size_t usable) {
    mmap_arena_chunk *c = calloc(1, sizeof *c);
    if (!c) return NULL;
#if AM_MMAP_FILE
    char *path = file_name(h);
    if (!path || am_file_map_create(&c->map, path, bytes) != 0) {
        if (path) remove(path); /* created but not sized or mapped */
        free(path);
        free(c);
        return NULL;
    }
#if defined(_WIN32)
    c->path = path; /* a mapped file cannot be deleted here: on release */
#else
    remove(path);
    free(path);
#endif
#else
    c->map.base = am_vm_reserve(bytes);
    if (!c->map.base) { free(c); return NULL; }
    c->map.size = bytes;
#endif
    c->usable = usable;
    count_reserved(h, usable);
    return c;
}

static size_t poisoned_of(const mmap_arena_heap *h, const mmap_arena_chunk *c) {
    size_t now = c == h->current ? (size_t)(h->bump.poisoned - (char *)c->map.base) : 0;
    return now > c->poisoned ? now : c->poisoned;
}

static void unmap_chunk(mmap_arena_heap *h, mmap_arena_chunk *c) {
    h->reserved -= c->usable;
    am_unpoison(c->map.base, poisoned_of(h, c));
#if AM_MMAP_FILE
    am_file_map_close(&c->map);
    if (c->path) remove(c->path);
    free(c->path);
#else
    am_vm_release(c->map.base, c->map.size);
#endif
    free(c);
}

static void enter(mmap_arena_heap *h, mmap_arena_chunk *c) {
    if (h->current) {
        h->current->used = (size_t)(h->bump.cur - (char *)h->current->map.base);
        h->current->poisoned = poisoned_of(h, h->current);
    }
    h->current = c;
    h->bump.cur = c->map.base;
    h->bump.end = (char *)c->map.base + c->usable;
    h->bump.poisoned = h->bump.cur;
}

static size_t pages(size_t bytes) {
    size_t page = am_page_size();
    return bytes > SIZE_MAX - page ? 0 : AM_ALIGN_UP(bytes, page);
}

mmap_arena_heap *mmap_arena_create(const am_options *o) {
    mmap_arena_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->limit = o ? o->limit : 0;
    h->max_chunk = o ? o->max_chunk : 0;
#if AM_MMAP_FILE
    const char *dir = o && o->path ? o->path : getenv("AM_TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    h->dir = malloc(strlen(dir) + 1);
    if (!h->dir) { free(h); return NULL; }
    strcpy(h->dir, dir);
#endif
    size_t first = pages(o && o->initial_bytes ? o->initial_bytes : AM_MMAP_ARENA_DEFAULT_CHUNK);
    if (h->max_chunk && first > h->max_chunk) first = pages(h->max_chunk);
    size_t usable = first;
    if (h->limit && first > h->limit) {
        first = h->limit & ~(am_page_size() - 1);
        usable = first;
        /* a limit below a page still holds: one page mapped, the limit's bytes of it used */
        if (first == 0) {
            first = am_page_size();
            usable = h->limit & ~(size_t)(AM_MIN_ALIGN - 1);
        }
    }
    mmap_arena_chunk *c = first ? map_chunk(h, first, usable) : NULL;
    if (!c) { free(h->dir); free(h); return NULL; }
    h->first = c;
    enter(h, c);
    h->next_size = first <= SIZE_MAX / 4 ? 2 * first : first;
    if (h->max_chunk && h->next_size > h->max_chunk) h->next_size = pages(h->max_chunk);
    return h;
}

void mmap_arena_destroy(mmap_arena_heap *h) {
    if (!h) return;
    mmap_arena_chunk *c = h->first;
    while (c) {
        mmap_arena_chunk *next = c->next;
        unmap_chunk(h, c);
        c = next;
    }
    free(h->dir);
    free(h);
}

/* The next chunk: a spare kept by reset if it is big enough, else a new
 * mapping (put after the current chunk, before the spares), the next size in
 * the doubling or as much of it as the limit leaves. */
void *mmap_arena_alloc_slow(mmap_arena_heap *h, size_t n, size_t align) {
    if (n > SIZE_MAX / 4 || align > SIZE_MAX / 4) return NULL;
    size_t pad = align > AM_MIN_ALIGN ? align - AM_MIN_ALIGN : 0;
    size_t least = pages(AM_ALIGN_UP(n, AM_MIN_ALIGN) + pad);
    mmap_arena_chunk *spare = h->current->next;
    if (spare && least && spare->usable >= least) {
        enter(h, spare);
        return align > AM_MIN_ALIGN ? am_bump_alloc_aligned(&h->bump, n, align) : am_bump_alloc(&h->bump, n);
    }
    size_t size = h->next_size > least ? h->next_size : least;
    size_t room = h->limit ? h->limit - h->reserved : SIZE_MAX;
    if (size > room) size = room & ~(am_page_size() - 1);
    if (!least || size < least) return NULL;
    mmap_arena_chunk *c = map_chunk(h, size, size);
    if (!c && size > least) {
        size = least;
        c = map_chunk(h, size, size);
    }
    if (!c) return NULL;
    c->next = h->current->next;
    h->current->next = c;
    enter(h, c);
    if (h->next_size <= SIZE_MAX / 4) h->next_size *= 2;
    if (h->max_chunk && h->next_size > h->max_chunk) h->next_size = pages(h->max_chunk);
    return align > AM_MIN_ALIGN ? am_bump_alloc_aligned(&h->bump, n, align) : am_bump_alloc(&h->bump, n);
}

void *mmap_arena_alloc_aligned(mmap_arena_heap *h, size_t n, size_t align) {
    if (align <= AM_MIN_ALIGN) return mmap_arena_alloc(h, n);
    void *p = am_bump_alloc_aligned(&h->bump, n, align);
    return p ? p : mmap_arena_alloc_slow(h, n, align);
}

void mmap_arena_free_aligned(mmap_arena_heap *h, void *p, size_t n, size_t align) {
    (void)align;
    am_bump_free(&h->bump, p, n);
}

void *mmap_arena_realloc_slow(mmap_arena_heap *h, void *p, size_t old_n, size_t new_n) {
    void *q = mmap_arena_alloc(h, new_n);
    if (q) {
        memcpy(q, p, old_n < new_n ? old_n : new_n);
        am_poison(p, AM_ALIGN_UP(old_n, AM_MIN_ALIGN));
    }
    return q;
}

/* Unmapping the later chunks would make every round after a reset pay for
 * fresh pages again (a page fault each); a mapped arena keeps its mappings. */
static size_t used_of(const mmap_arena_heap *h, const mmap_arena_chunk *c);

void mmap_arena_reset(mmap_arena_heap *h) {
    for (mmap_arena_chunk *c = h->first; c; c = c->next) {
        am_poison(c->map.base, used_of(h, c));
        c->used = 0;
    }
    h->current->poisoned = poisoned_of(h, h->current);
    h->current = NULL;
    enter(h, h->first);
}

void mmap_arena_usage(const mmap_arena_heap *h, size_t *reserved, size_t *reserved_peak) {
    *reserved = h->reserved;
    *reserved_peak = h->reserved_peak;
}

static size_t used_of(const mmap_arena_heap *h, const mmap_arena_chunk *c) {
    return c == h->current ? (size_t)(h->bump.cur - (char *)c->map.base) : c->used;
}

void mmap_arena_regions(const mmap_arena_heap *h, mmap_arena_region_fn fn, void *ctx) {
    for (const mmap_arena_chunk *c = h->first; c; c = c->next) fn(ctx, c->map.base, c->map.size, used_of(h, c));
}

static mmap_arena_chunk *chunk_of(const mmap_arena_heap *h, const void *p) {
    uintptr_t a = (uintptr_t)p;
    for (mmap_arena_chunk *c = h->first; c; c = c->next) {
        uintptr_t b = (uintptr_t)c->map.base;
        if (a >= b && a - b < c->map.size) return c;
    }
    return NULL;
}

int mmap_arena_evict(mmap_arena_heap *h, void *p, size_t bytes) {
    mmap_arena_chunk *c = chunk_of(h, p);
    if (!c) return -1;
    size_t page = am_page_size();
    size_t from = ((size_t)((char *)p - (char *)c->map.base)) & ~(page - 1);
    size_t to = (size_t)((char *)p - (char *)c->map.base);
    to = bytes > c->map.size - to ? c->map.size : AM_ALIGN_UP(to + bytes, page);
    if (to > c->map.size) to = c->map.size;
    if (to <= from) return 0;
#if AM_MMAP_FILE
    return am_file_evict(&c->map, from, to - from);
#else
    return am_vm_evict((char *)c->map.base + from, to - from);
#endif
}

intptr_t mmap_arena_file_handle(const mmap_arena_heap *h, const void *p) {
#if AM_MMAP_FILE
    const mmap_arena_chunk *c = chunk_of(h, p);
    return c ? c->map.handle : -1;
#else
    (void)h; (void)p;
    return -1;
#endif
}
