/* monotonic.c: the monotonic arena's slow paths: the first buffer, chunk
 * growth under the byte limit, moving a block that cannot resize in place, and
 * reset. The fast paths are in monotonic.h and bump.h, which also poison
 * ahead of the bump pointer under ASan; here the first chunk's poisoned part
 * is poisoned again on reset and unpoisoned before it goes back to malloc, to
 * the caller or to the thread. */
#include "monotonic.h"
#include <stdlib.h>
#include <string.h>

struct monotonic_chunk {
    monotonic_chunk *prev;
    size_t size; /* bytes taken from malloc, this header included */
};

#define HEADER AM_ALIGN_UP(sizeof(monotonic_chunk), AM_MIN_ALIGN)

#if AM_MONOTONIC_LOCAL
/* Thread-local rather than static so that each thread's heap has its own,
 * as a stack buffer would be. */
/* aligned, so the whole buffer is usable wherever the linker puts it */
static AM_THREAD_LOCAL _Alignas(16) char local_buffer[AM_MONOTONIC_LOCAL_BYTES];
static AM_THREAD_LOCAL int local_in_use;
#endif

static void count_reserved(monotonic_heap *h, size_t bytes) {
    h->reserved += bytes;
    if (h->reserved > h->reserved_peak) h->reserved_peak = h->reserved;
}

/* How far poison reaches in the first chunk (ASan builds). */
static char *first_poisoned(const monotonic_heap *h) {
    char *mark = h->first_poisoned ? h->first_poisoned : h->first;
    int in_first = h->bump.end == h->first_end && h->bump.cur >= h->first;
    if (in_first && h->bump.poisoned > mark) mark = h->bump.poisoned;
    return mark;
}

/* The chunk becomes the current one; the rest of the old one is abandoned. */
static void enter(monotonic_heap *h, char *begin, char *end) {
    if (AM_ASAN && h->bump.end) h->first_poisoned = first_poisoned(h);
    h->bump.cur = begin;
    h->bump.end = end;
    h->bump.poisoned = begin;
}

static monotonic_chunk *new_chunk(monotonic_heap *h, size_t size) {
    monotonic_chunk *c = malloc(size);
    if (!c) return NULL;
    c->size = size;
    count_reserved(h, size);
    return c;
}

/* Uses [p, p + bytes) as the first chunk, trimmed to alignment and limit. */
static void use_buffer(monotonic_heap *h, void *p, size_t bytes) {
    char *begin = (char *)AM_ALIGN_UP((uintptr_t)p, AM_MIN_ALIGN);
    size_t skip = (size_t)(begin - (char *)p);
    bytes = bytes > skip ? bytes - skip : 0;
    if (h->limit && bytes > h->limit) bytes = h->limit;
    bytes &= ~(size_t)(AM_MIN_ALIGN - 1);
    h->first = begin;
    h->first_end = begin + bytes;
    count_reserved(h, bytes);
    enter(h, h->first, h->first_end);
    /* chunks after a buffer are at least twice its size */
    if (h->next_size < 2 * bytes) h->next_size = 2 * bytes;
    if (h->max_chunk && h->next_size > h->max_chunk) h->next_size = h->max_chunk;
}

monotonic_heap *monotonic_create(const am_options *o) {
    monotonic_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    size_t first = o && o->initial_bytes ? o->initial_bytes : AM_MONOTONIC_DEFAULT_CHUNK;
    h->limit = o ? o->limit : 0;
    h->max_chunk = o ? o->max_chunk : 0;
    if (h->max_chunk && first > h->max_chunk) first = h->max_chunk;
    if (first < HEADER + AM_MIN_ALIGN) first = HEADER + AM_MIN_ALIGN;
    h->next_size = first;
    if (o && o->buffer && o->buffer_size) {
        use_buffer(h, o->buffer, o->buffer_size);
        return h;
    }
#if AM_MONOTONIC_LOCAL
    if (!local_in_use) {
        local_in_use = 1;
        h->local_claim = &local_in_use;
        use_buffer(h, local_buffer, sizeof local_buffer);
        return h;
    }
#endif
    if (h->limit && first > h->limit) first = h->limit;
    if (first < HEADER + AM_MIN_ALIGN) { free(h); return NULL; }
    monotonic_chunk *c = new_chunk(h, first);
    if (!c) { free(h); return NULL; }
    c->prev = NULL;
    h->first_chunk = c;
    h->first = (char *)c + HEADER;
    h->first_end = (char *)c + first;
    enter(h, h->first, h->first_end);
    if (h->next_size <= SIZE_MAX / 4) h->next_size *= 2;
    if (h->max_chunk && h->next_size > h->max_chunk) h->next_size = h->max_chunk;
    return h;
}

static void free_chunks(monotonic_heap *h, monotonic_chunk *c) {
    while (c) {
        monotonic_chunk *prev = c->prev;
        h->reserved -= c->size;
        am_unpoison(c, c->size);
        free(c);
        c = prev;
    }
}

void monotonic_destroy(monotonic_heap *h) {
    if (!h) return;
    am_unpoison(h->first, (size_t)(first_poisoned(h) - h->first)); /* the caller's, the thread's or malloc's again */
    free_chunks(h, h->chunks);
    free_chunks(h, h->kept);
    free(h->first_chunk);
    if (h->local_claim) *h->local_claim = 0;
    free(h);
}

/* A new chunk big enough for n bytes at align: the next size in the doubling,
 * or as much of it as the limit leaves. */
void *monotonic_alloc_slow(monotonic_heap *h, size_t n, size_t align) {
    if (n > SIZE_MAX / 4 || align > SIZE_MAX / 4) return NULL;
    size_t pad = align > AM_MIN_ALIGN ? align - AM_MIN_ALIGN : 0;
    size_t least = HEADER + AM_ALIGN_UP(n, AM_MIN_ALIGN) + pad;
    /* the chunks reset kept come first, in the order they were taken; one too
     * small for this block is passed over and stays held until the next reset */
    while (h->kept) {
        monotonic_chunk *c = h->kept;
        h->kept = c->prev;
        c->prev = h->chunks;
        h->chunks = c;
        if (c->size >= least) {
            enter(h, (char *)c + HEADER, (char *)c + c->size);
            return align > AM_MIN_ALIGN ? am_bump_alloc_aligned(&h->bump, n, align) : am_bump_alloc(&h->bump, n);
        }
    }
    size_t size = h->next_size > least ? h->next_size : least;
    size_t room = h->limit ? h->limit - h->reserved : SIZE_MAX;
    if (size > room) size = room & ~(size_t)(AM_MIN_ALIGN - 1);
    if (size < least) return NULL;
    monotonic_chunk *c = new_chunk(h, size);
    if (!c && size > least) c = new_chunk(h, size = least);
    if (!c) return NULL;
    c->prev = h->chunks;
    h->chunks = c;
    enter(h, (char *)c + HEADER, (char *)c + size);
    if (h->next_size <= SIZE_MAX / 4) h->next_size *= 2;
    if (h->max_chunk && h->next_size > h->max_chunk) h->next_size = h->max_chunk;
    return align > AM_MIN_ALIGN ? am_bump_alloc_aligned(&h->bump, n, align) : am_bump_alloc(&h->bump, n);
}

void *monotonic_alloc_aligned(monotonic_heap *h, size_t n, size_t align) {
    if (align <= AM_MIN_ALIGN) return monotonic_alloc(h, n);
    void *p = am_bump_alloc_aligned(&h->bump, n, align);
    return p ? p : monotonic_alloc_slow(h, n, align);
}

void monotonic_free_aligned(monotonic_heap *h, void *p, size_t n, size_t align) {
    (void)align;
    am_bump_free(&h->bump, p, n);
}

void *monotonic_realloc_slow(monotonic_heap *h, void *p, size_t old_n, size_t new_n) {
    void *q = monotonic_alloc(h, new_n);
    if (q) {
        memcpy(q, p, old_n < new_n ? old_n : new_n);
        am_poison(p, AM_ALIGN_UP(old_n, AM_MIN_ALIGN));
    }
    return q;
}

/* Rewinds to the first chunk and keeps every other, the ones filled since the
 * last reset (newest first in chunks) back in front of those still kept, so
 * that kept runs oldest first. Under ASan a kept chunk is poisoned whole: what
 * was used in it is not tracked, and its blocks must not be read again. */
void monotonic_reset(monotonic_heap *h) {
    am_poison(h->first, (size_t)(first_poisoned(h) - h->first));
    monotonic_chunk *c = h->chunks;
    while (c) {
        monotonic_chunk *prev = c->prev;
        am_poison((char *)c + HEADER, c->size - HEADER);
        c->prev = h->kept;
        h->kept = c;
        c = prev;
    }
    h->chunks = NULL;
    enter(h, h->first, h->first_end);
}

void monotonic_usage(const monotonic_heap *h, size_t *reserved, size_t *reserved_peak) {
    *reserved = h->reserved;
    *reserved_peak = h->reserved_peak;
}

size_t monotonic_chunk_count(const monotonic_heap *h) {
    size_t n = h->first_chunk ? 1 : 0;
    for (const monotonic_chunk *c = h->chunks; c; c = c->prev) n++;
    for (const monotonic_chunk *c = h->kept; c; c = c->prev) n++;
    return n;
}
