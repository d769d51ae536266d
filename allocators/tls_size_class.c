/* tls_size_class.c: the thread-local pool's slow paths: the thread's record
 * and its exit hook, carving a block for an empty class, new malloc blocks
 * under the byte limit, and giving everything back at thread end, destroy or
 * reset. The fast paths are in tls_size_class.h, and so is what ASan is told. */
#include "tls_size_class.h"
#include <stdlib.h>

struct tls_size_class_block {
    tls_size_class_block *next;
    size_t size; /* bytes taken from malloc, this header included */
};

/* One per thread that has created a heap; lives until the thread ends. */
struct tls_size_class_thread {
    tls_size_class_heap *heaps;
};

#define HEADER AM_ALIGN_UP(sizeof(tls_size_class_block), AM_MIN_ALIGN)

static AM_THREAD_LOCAL tls_size_class_thread *this_thread;

static void release_blocks(tls_size_class_heap *h) {
    tls_size_class_block *b = h->blocks;
    while (b) {
        tls_size_class_block *next = b->next;
        /* ASan: in the newest block poison reaches h->poisoned at most */
        am_unpoison(b, b == h->blocks ? (size_t)(h->poisoned - (char *)b) : b->size);
        free(b);
        b = next;
    }
    h->blocks = NULL;
    memset(h->free_list, 0, sizeof h->free_list);
    h->cur = h->end = h->poisoned = NULL;
    h->reserved = 0;
}

/* The thread-exit hook: the heaps' blocks go now, the heaps themselves stay
 * (orphaned) until someone destroys them. */
static void thread_ended(void *arg) {
    tls_size_class_thread *t = arg;
    for (tls_size_class_heap *h = t->heaps; h; h = h->next) {
        release_blocks(h);
        h->owner = NULL;
    }
    if (this_thread == t) this_thread = NULL;
    free(t);
}

static tls_size_class_thread *thread_record(void) {
    tls_size_class_thread *t = this_thread;
    if (t) return t;
    t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (am_thread_exit_hook(thread_ended, t) != 0) { free(t); return NULL; }
    this_thread = t;
    return t;
}

tls_size_class_heap *tls_size_class_create(const am_options *o) {
    tls_size_class_thread *t = thread_record();
    if (!t) return NULL;
    tls_size_class_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->limit = o ? o->limit : 0;
    h->block_bytes = o && o->initial_bytes ? o->initial_bytes : AM_TSC_BLOCK_BYTES;
    h->owner = t;
    h->next = t->heaps;
    if (t->heaps) t->heaps->prev = h;
    t->heaps = h;
    return h;
}

void tls_size_class_destroy(tls_size_class_heap *h) {
    if (!h) return;
    tls_size_class_thread *t = h->owner;
    if (t) {
        AM_TSC_CHECK_OWNER(h);
        if (h->prev) h->prev->next = h->next;
        else t->heaps = h->next;
        if (h->next) h->next->prev = h->prev;
    }
    release_blocks(h);
    free(h);
}

int tls_size_class_owned(const tls_size_class_heap *h) {
    return h->owner != NULL && h->owner == this_thread;
}

/* A new current block with room for `size` bytes: the usual block size, or as
 * much of it as the limit leaves, or NULL. */
static int new_block(tls_size_class_heap *h, size_t size) {
    size_t least = HEADER + size;
    size_t bytes = HEADER + (size > h->block_bytes ? size : h->block_bytes);
    size_t room = h->limit ? h->limit - h->reserved : SIZE_MAX;
    if (bytes > room) bytes = room;
    if (bytes < least) return 0;
    tls_size_class_block *b = malloc(bytes);
    if (!b && bytes > least) b = malloc(bytes = least);
    if (!b) return 0;
    b->size = bytes;
    b->next = h->blocks;
    h->blocks = b;
    h->cur = (char *)b + HEADER;
    h->end = (char *)b + bytes;
    h->poisoned = h->cur;
    h->reserved += bytes;
    if (h->reserved > h->reserved_peak) h->reserved_peak = h->reserved;
    return 1;
}

/* ASan builds: [cur, poisoned) is kept poisoned, a step at a time past the
 * carve pointer (so that an overflow of the newest block is seen), and a
 * carved block is addressable for its n bytes only. Beyond the mark a malloc
 * block is left as malloc gave it, addressable: the cost follows use. */
static void poison_carved(tls_size_class_heap *h, char *b, size_t n) {
    const size_t step = (size_t)64 << 10;
    if (h->poisoned < h->cur || (size_t)(h->poisoned - h->cur) < 64) {
        char *from = b + (n & ~(size_t)7); /* the whole granules below are unpoisoned next */
        if (from < h->poisoned) from = h->poisoned;
        char *to = (size_t)(h->end - h->cur) > step ? h->cur + step : h->end;
        if (to > from) am_poison(from, (size_t)(to - from));
        h->poisoned = to;
    }
    am_unpoison(b, n);
}

void *tls_size_class_alloc_slow(tls_size_class_heap *h, unsigned k, size_t n) {
    if (k >= AM_TSC_CLASSES) return NULL;
    AM_TSC_CHECK_OWNER(h);
    size_t size = (size_t)1 << k;
    if (size > (size_t)(h->end - h->cur) && !new_block(h, size)) return NULL;
    char *b = h->cur;
    h->cur += size;
    if (AM_ASAN) poison_carved(h, b, n);
    return b;
}

/* Over-allocate by align and keep the block's own address in the word
 * before the aligned one: blocks of a class are not aligned beyond 16. */
void *tls_size_class_alloc_aligned(tls_size_class_heap *h, size_t n, size_t align) {
    if (align <= AM_MIN_ALIGN) return tls_size_class_alloc(h, n);
    if (n > SIZE_MAX - align) return NULL;
    char *b = tls_size_class_alloc(h, n + align);
    if (!b) return NULL;
    char *q = (char *)AM_ALIGN_UP((uintptr_t)b + sizeof(void *), (uintptr_t)align);
    ((void **)q)[-1] = b;
    /* ASan: only the n bytes at q are the caller's, not the padding or the word before */
    am_poison(b, n + align);
    am_unpoison(q, n);
    return q;
}

void tls_size_class_free_aligned(tls_size_class_heap *h, void *p, size_t n, size_t align) {
    if (align <= AM_MIN_ALIGN) { tls_size_class_free(h, p, n); return; }
    if (!p) return;
    void **back = (void **)p - 1;
    am_unpoison(back, sizeof *back);
    tls_size_class_free(h, *back, n + align); /* poisons the whole block again */
}

void tls_size_class_reset(tls_size_class_heap *h) {
    AM_TSC_CHECK_OWNER(h);
    release_blocks(h);
}

void tls_size_class_usage(const tls_size_class_heap *h, size_t *reserved, size_t *reserved_peak) {
    *reserved = h->reserved;
    *reserved_peak = h->reserved_peak;
}
