/* tls_size_class.c: the thread-local pool's slow paths: finding or making the
 * thread's pool, carving a block for an empty class, new malloc blocks under
 * the byte limit, and giving everything back at thread end, last destroy or
 * reset. The fast paths are in tls_size_class.h. */
#include "tls_size_class.h"
#include <stdlib.h>

struct tls_size_class_block {
    tls_size_class_block *next;
    size_t size; /* bytes taken from malloc, this header included */
};

#define HEADER AM_ALIGN_UP(sizeof(tls_size_class_block), AM_MIN_ALIGN)

static AM_THREAD_LOCAL tls_size_class_pool *thread_pool;

static void release_blocks(tls_size_class_pool *p) {
    tls_size_class_block *b = p->blocks;
    while (b) {
        tls_size_class_block *next = b->next;
        free(b);
        b = next;
    }
    p->blocks = NULL;
    memset(p->free_list, 0, sizeof p->free_list);
    p->cur = p->end = NULL;
    p->reserved = 0;
}

/* The thread-exit hook. Heaps still bound to the pool keep it (orphaned)
 * until the last of them is destroyed; their blocks go now. */
static void thread_ended(void *arg) {
    tls_size_class_pool *p = arg;
    release_blocks(p);
    p->orphaned = 1;
    if (thread_pool == p) thread_pool = NULL;
    if (p->heaps == 0) free(p);
}

tls_size_class_heap *tls_size_class_create(const am_options *o) {
    tls_size_class_pool *p = thread_pool;
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p) return NULL;
        if (am_thread_exit_hook(thread_ended, p) != 0) { free(p); return NULL; }
        thread_pool = p;
    }
    tls_size_class_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    if (p->heaps == 0) {
        p->limit = o ? o->limit : 0;
        p->block_bytes = o && o->initial_bytes ? o->initial_bytes : AM_TSC_BLOCK_BYTES;
    }
    p->heaps++;
    h->pool = p;
    return h;
}

void tls_size_class_destroy(tls_size_class_heap *h) {
    if (!h) return;
    tls_size_class_pool *p = h->pool;
#ifdef AM_DEBUG
    assert(p->orphaned || tls_size_class_owned(h));
#endif
    if (--p->heaps == 0) {
        release_blocks(p);
        if (p->orphaned) free(p);
    }
    free(h);
}

int tls_size_class_owned(const tls_size_class_heap *h) {
    return h->pool == thread_pool;
}

/* A new current block with room for `size` bytes: the usual block size if the
 * limit allows it, else just the one block. */
static int new_block(tls_size_class_pool *p, size_t size) {
    size_t least = HEADER + size;
    size_t bytes = HEADER + (size > p->block_bytes ? size : p->block_bytes);
    size_t room = p->limit ? p->limit - p->reserved : SIZE_MAX;
    if (bytes > room) bytes = least;
    if (bytes > room) return 0;
    tls_size_class_block *b = malloc(bytes);
    if (!b && bytes > least) b = malloc(bytes = least);
    if (!b) return 0;
    b->size = bytes;
    b->next = p->blocks;
    p->blocks = b;
    p->cur = (char *)b + HEADER;
    p->end = (char *)b + bytes;
    p->reserved += bytes;
    if (p->reserved > p->reserved_peak) p->reserved_peak = p->reserved;
    return 1;
}

void *tls_size_class_refill(tls_size_class_heap *h, unsigned k) {
    if (k >= AM_TSC_CLASSES) return NULL;
    tls_size_class_pool *p = h->pool;
    size_t size = (size_t)1 << k;
    if (size > (size_t)(p->end - p->cur) && !new_block(p, size)) return NULL;
    void *b = p->cur;
    p->cur += size;
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
    return q;
}

void tls_size_class_free_aligned(tls_size_class_heap *h, void *p, size_t n, size_t align) {
    if (align <= AM_MIN_ALIGN) { tls_size_class_free(h, p, n); return; }
    if (p) tls_size_class_free(h, ((void **)p)[-1], n + align);
}

void tls_size_class_reset(tls_size_class_heap *h) {
    AM_TSC_CHECK_OWNER(h);
    release_blocks(h->pool);
}

void tls_size_class_usage(const tls_size_class_heap *h, size_t *reserved, size_t *reserved_peak) {
    *reserved = h->pool->reserved;
    *reserved_peak = h->pool->reserved_peak;
}
