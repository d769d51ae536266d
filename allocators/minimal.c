/* minimal.c: the buffer, large blocks, resizing and reset; the fast paths are in
 * minimal.h. */
#include "minimal.h"
#include <stdlib.h>
#include <string.h>

minimal_heap *minimal_create(const am_options *o) {
    size_t size = o && o->initial_bytes ? o->initial_bytes : AM_MINIMAL_DEFAULT_BYTES;
    if (o && o->limit && size > o->limit) size = o->limit;
    minimal_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    size_t usable = size; /* a limit below a page still holds */
    size = AM_ALIGN_UP(size, am_page_size());
    h->base = am_vm_reserve(size);
    if (!h->base) { free(h); return NULL; }
    /* Not touched here: reset rewinds to the same pages, so the warm-up
     * repetition touches exactly the pages a workload uses, before any sample. */
    h->size = size;
    h->bump.cur = h->base;
    h->bump.end = h->base + usable;
    h->bump.poisoned = h->base;
    return h;
}

void minimal_destroy(minimal_heap *h) {
    if (!h) return;
    /* the address range may be mapped again, by anyone */
    am_unpoison(h->base, (size_t)(h->bump.poisoned - h->base));
    am_vm_release(h->base, h->size);
    free(h);
}

/* A free large block: its link, and its rounded size (it has room for both). */
typedef struct minimal_large { struct minimal_large *next; size_t need; } minimal_large;

static unsigned large_list(size_t need) { return am_bit_width(need) % AM_MINIMAL_LARGE_LISTS; }

/* The newest free block of exactly this rounded size, else a bumped one
 * (once any large block has been freed since reset). */
void *minimal_alloc_slow(minimal_heap *h, size_t n) {
    size_t need = AM_ALIGN_UP(n, AM_MIN_ALIGN);
    if (need < n) return NULL;
    unsigned list = large_list(need);
    minimal_large *prev = NULL, *b = h->large[list];
    while (b) { /* prev's header stays addressable while b is looked at */
        am_unpoison(b, sizeof *b);
        if (b->need == need) {
            if (prev) prev->next = b->next;
            else h->large[list] = b->next;
            if (prev) am_poison(prev, sizeof *prev);
            am_poison(b, need);
            am_unpoison(b, n);
            return b;
        }
        if (prev) am_poison(prev, sizeof *prev);
        prev = b;
        b = b->next;
    }
    if (prev) am_poison(prev, sizeof *prev);
    return am_bump_alloc(&h->bump, n);
}

/* A large block that is not the last one bumped: kept for an exact-size reuse. */
void minimal_free_slow(minimal_heap *h, void *p, size_t n) {
    size_t need = AM_ALIGN_UP(n, AM_MIN_ALIGN);
    minimal_large *b = p;
    b->need = need;
    b->next = h->large[large_list(need)];
    h->large[large_list(need)] = b;
    h->large_used = 1;
    am_poison(p, need);
}

void *minimal_alloc_aligned(minimal_heap *h, size_t n, size_t align) {
    size_t k = minimal_class(n);
    if (k < AM_MINIMAL_CLASSES) h->small_used |= (uint64_t)1 << k;
    return am_bump_alloc_aligned(&h->bump, n, align);
}

void minimal_free_aligned(minimal_heap *h, void *p, size_t n, size_t align) {
    (void)align;
    minimal_free(h, p, n);
}

/* A shrink (any block shrinks in place; the last one gives bytes back) or a
 * move: a new block, a copy and a free. */
void *minimal_realloc_slow(minimal_heap *h, void *p, size_t old_n, size_t new_n) {
    minimal_note_high(h);
    void *q = am_bump_resize(&h->bump, p, old_n, new_n);
    size_t k = minimal_class(new_n);
    if (q && k < AM_MINIMAL_CLASSES) h->small_used |= (uint64_t)1 << k;
    if (q) return q;
    q = minimal_alloc(h, new_n);
    if (q) {
        memcpy(q, p, old_n < new_n ? old_n : new_n);
        minimal_free(h, p, old_n);
    }
    return q;
}

/* The buffer is address space; what counts is the part ever handed out. */
void minimal_usage(const minimal_heap *h, size_t *reserved, size_t *reserved_peak) {
    size_t used = (size_t)(h->bump.cur - h->base);
    size_t high = used > h->high ? used : h->high;
    *reserved = AM_ALIGN_UP(high, am_page_size());
    *reserved_peak = *reserved;
}
