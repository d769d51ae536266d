/* concurrent_pool.c: the slow paths of concurrent_pool / locked_pool: choosing
 * the block size, growing the chunk list under the mutex, the malloc fallback
 * for other sizes, reset and usage. The fast paths are in concurrent_pool.h. */
#include "concurrent_pool.h"
#include <stdlib.h>
#include <string.h>

struct cp_big {
    cp_big *prev, *next;
    void *base;
    size_t bytes;
};
#define CP_BIG_HDR AM_ALIGN_UP(sizeof(cp_big), AM_MIN_ALIGN)

concurrent_pool_heap *concurrent_pool_create(const am_options *o) {
    concurrent_pool_heap *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->lock = am_mutex_create();
    if (!h->lock) { free(h); return NULL; }
    atomic_init(&h->head, (uint64_t)CP_NIL);
    atomic_init(&h->block_size, (size_t)0);
    atomic_init(&h->table, (cp_table *)NULL);
    h->limit = o ? o->limit : 0;
    h->max_chunk = o ? o->max_chunk : 0;
    if (o && o->block_size) {
        size_t bs = AM_ALIGN_UP(o->block_size, AM_MIN_ALIGN);
        if (bs < o->block_size || bs > SIZE_MAX / 4) { concurrent_pool_destroy(h); return NULL; }
        h->stride = CP_HDR + bs;
        atomic_store_explicit(&h->block_size, bs, memory_order_release);
    }
    return h;
}

void concurrent_pool_destroy(concurrent_pool_heap *h) {
    if (!h) return;
    concurrent_pool_reset(h);
    am_mutex_destroy(h->lock);
    free(h);
}

/* under the lock: bytes from the system, within the limit */
static void *take(concurrent_pool_heap *h, size_t bytes) {
    if (h->limit && bytes > h->limit - h->reserved) return NULL;
    void *p = malloc(bytes);
    if (!p) return NULL;
    h->reserved += bytes;
    if (h->reserved > h->reserved_peak) h->reserved_peak = h->reserved;
    return p;
}

static void give(concurrent_pool_heap *h, void *p, size_t bytes) {
    h->reserved -= bytes;
    free(p);
}

/* under the lock, once the block size is known: the cap and the index layout */
static void set_growth(concurrent_pool_heap *h) {
    size_t cap = h->max_chunk ? h->max_chunk / h->stride : CP_DEFAULT_CAP_BLOCKS;
    if (cap < 1) cap = 1;
    if (cap > ((size_t)1 << 20)) cap = (size_t)1 << 20;
    unsigned bits = 0;
    while (((size_t)1 << bits) < cap) bits++;
    h->cap_blocks = cap;
    h->slot_bits = bits;
    h->next_blocks = AM_CP_CONSTANT ? cap : 1;
}

/* under the lock: one more chunk; its first block is returned, the rest pushed */
static void *cp_grow(concurrent_pool_heap *h) {
    if (h->cap_blocks == 0) set_growth(h);
    uint32_t max_chunks = ((uint32_t)1 << (32 - h->slot_bits)) - 1;
    if (h->chunks >= max_chunks) return NULL;
    size_t blocks = h->next_blocks;
    cp_table *t = atomic_load_explicit(&h->table, memory_order_relaxed);
    if (!t || h->chunks == t->cap) {
        size_t cap = t ? t->cap * 2 : 16;
        cp_table *bigger = take(h, sizeof(cp_table) + (cap - 1) * sizeof(cp_chunk));
        if (!bigger) return NULL;
        bigger->cap = cap;
        bigger->older = t;
        if (t) memcpy(bigger->chunk, t->chunk, t->cap * sizeof(cp_chunk));
        /* published before any block of the new chunk: a reader that sees such
         * a block in the head sees this table too */
        atomic_store_explicit(&h->table, bigger, memory_order_release);
        t = bigger;
    }
    if (blocks > SIZE_MAX / h->stride) return NULL;
    char *chunk = take(h, blocks * h->stride);
    /* near the limit, a smaller chunk may still fit: use the budget up */
    while (!chunk && h->limit && blocks > 1) {
        blocks /= 2;
        chunk = take(h, blocks * h->stride);
    }
    if (!chunk) return NULL;
    uint32_t c = h->chunks++;
    t->chunk[c].base = chunk;
    t->chunk[c].blocks = blocks;
    for (size_t i = 0; i < blocks; i++) {
        uint32_t self = c << h->slot_bits | (uint32_t)i;
        cp_link_init((cp_link *)(chunk + i * h->stride), self, i + 1 < blocks ? self + 1 : CP_NIL);
    }
    am_poison(chunk, blocks * h->stride); /* headers for good, blocks until handed out */
    if (!AM_CP_CONSTANT && h->next_blocks < h->cap_blocks) {
        h->next_blocks *= 2;
        if (h->next_blocks > h->cap_blocks) h->next_blocks = h->cap_blocks;
    }
    if (blocks > 1) {
        /* blocks 1 .. blocks-1 go on the list in one exchange */
        cp_link *first = (cp_link *)(chunk + h->stride);
        cp_link *last = (cp_link *)(chunk + (blocks - 1) * h->stride);
        uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
        uint32_t first_index = cp_self(first);
        do {
            cp_set_next(last, (uint32_t)head);
        } while (!atomic_compare_exchange_weak_explicit(&h->head, &head, cp_head_word(head, first_index),
                                                        memory_order_release, memory_order_relaxed));
    }
    return chunk + CP_HDR;
}

static void *big_alloc(concurrent_pool_heap *h, size_t n, size_t align);

/* the fast path's continuation: the first request (which may fix the block
 * size), an empty list (grow under the mutex), or a request past the block size */
void *concurrent_pool_alloc_slow(concurrent_pool_heap *h, size_t n) {
    size_t bs = atomic_load_explicit(&h->block_size, memory_order_acquire);
    if (bs == 0 && n <= CP_AUTO_MAX) {
        am_mutex_lock(h->lock);
        bs = atomic_load_explicit(&h->block_size, memory_order_relaxed);
        if (bs == 0) {
            bs = AM_ALIGN_UP(n, AM_MIN_ALIGN);
            h->stride = CP_HDR + bs;
            atomic_store_explicit(&h->block_size, bs, memory_order_release);
        }
        am_mutex_unlock(h->lock);
    }
    if (n > bs) return big_alloc(h, n, AM_MIN_ALIGN);
    am_mutex_lock(h->lock);
    /* another thread may have grown the list while this one waited */
#if AM_CP_LOCKED
    void *p = NULL;
    uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
    if ((uint32_t)head != CP_NIL) {
        cp_link *l = cp_link_at(h, (uint32_t)head);
        atomic_store_explicit(&h->head, cp_head_word(head, cp_next(l)), memory_order_relaxed);
        p = (char *)l + CP_HDR;
    }
#else
    void *p = cp_pop(h);
#endif
    if (!p) p = cp_grow(h);
    am_mutex_unlock(h->lock);
    if (p) am_unpoison(p, n);
    return p;
}

static void *big_alloc(concurrent_pool_heap *h, size_t n, size_t align) {
    if (n > SIZE_MAX / 4 || align > SIZE_MAX / 4) return NULL;
    size_t pad = align > AM_MIN_ALIGN ? align : 0;
    size_t bytes = CP_BIG_HDR + pad + n;
    am_mutex_lock(h->lock);
    char *base = take(h, bytes);
    if (!base) { am_mutex_unlock(h->lock); return NULL; }
    char *p = (char *)AM_ALIGN_UP((uintptr_t)base + CP_BIG_HDR, align > AM_MIN_ALIGN ? align : AM_MIN_ALIGN);
    cp_big *b = (cp_big *)(p - CP_BIG_HDR);
    b->base = base;
    b->bytes = bytes;
    b->prev = NULL;
    b->next = h->bigs;
    if (h->bigs) h->bigs->prev = b;
    h->bigs = b;
    h->fallbacks++;
    am_mutex_unlock(h->lock);
    am_poison(p + n, (size_t)(base + bytes - (p + n))); /* an over-aligned block's slack */
    return p;
}

/* a block larger than the pool's: it came from big_alloc */
void concurrent_pool_free_slow(concurrent_pool_heap *h, void *p) {
    cp_big *b = (cp_big *)((char *)p - CP_BIG_HDR);
    am_mutex_lock(h->lock);
    if (b->prev) b->prev->next = b->next;
    else h->bigs = b->next;
    if (b->next) b->next->prev = b->prev;
    give(h, b->base, b->bytes);
    am_mutex_unlock(h->lock);
}

void *concurrent_pool_alloc_aligned(concurrent_pool_heap *h, size_t n, size_t align) {
    return big_alloc(h, n, align);
}

void concurrent_pool_free_aligned(concurrent_pool_heap *h, void *p, size_t n, size_t align) {
    (void)n; (void)align;
    if (p) concurrent_pool_free_slow(h, p);
}

void *concurrent_pool_realloc(concurrent_pool_heap *h, void *p, size_t old_n, size_t new_n) {
    if (!p) return concurrent_pool_alloc(h, new_n);
    size_t bs = atomic_load_explicit(&h->block_size, memory_order_relaxed);
    if (old_n <= bs && new_n <= bs) { /* the same block still fits */
        am_poison(p, bs);
        am_unpoison(p, new_n);
        return p;
    }
    void *q = concurrent_pool_alloc(h, new_n);
    if (!q) return NULL;
    memcpy(q, p, old_n < new_n ? old_n : new_n);
    concurrent_pool_free(h, p, old_n);
    return q;
}

void concurrent_pool_reset(concurrent_pool_heap *h) {
    am_mutex_lock(h->lock);
    while (h->bigs) {
        cp_big *b = h->bigs;
        h->bigs = b->next;
        give(h, b->base, b->bytes);
    }
    cp_table *t = atomic_load_explicit(&h->table, memory_order_relaxed);
    for (uint32_t c = 0; t && c < h->chunks; c++) {
        am_unpoison(t->chunk[c].base, t->chunk[c].blocks * h->stride); /* malloc's again */
        give(h, t->chunk[c].base, t->chunk[c].blocks * h->stride);
    }
    while (t) {
        cp_table *older = t->older;
        give(h, t, sizeof(cp_table) + (t->cap - 1) * sizeof(cp_chunk));
        t = older;
    }
    atomic_store_explicit(&h->table, (cp_table *)NULL, memory_order_relaxed);
    h->chunks = 0;
    h->next_blocks = AM_CP_CONSTANT ? h->cap_blocks : 1;
    uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
    atomic_store_explicit(&h->head, cp_head_word(head, CP_NIL), memory_order_relaxed);
    am_mutex_unlock(h->lock);
}

void concurrent_pool_usage(const concurrent_pool_heap *h, size_t *reserved, size_t *reserved_peak) {
    am_mutex_lock(h->lock);
    *reserved = h->reserved;
    *reserved_peak = h->reserved_peak;
    am_mutex_unlock(h->lock);
}

size_t cp_free_count(concurrent_pool_heap *h) {
    size_t n = 0;
    uint32_t i = (uint32_t)atomic_load(&h->head);
    while (i != CP_NIL) {
        n++;
        i = cp_next(cp_link_at(h, i));
    }
    return n;
}
