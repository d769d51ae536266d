/* system.c: the system strategy's slow paths. The byte limit is counted here,
 * in requested bytes, since malloc does not say what it took from the OS. */
#include "system.h"
#include "sanitize.h"
#include <string.h>
#if defined(_WIN32)
#include <malloc.h>
#endif

system_heap *system_create(const am_options *o) {
    system_heap *h = calloc(1, sizeof *h);
    if (h) h->limit = o ? o->limit : 0;
    return h;
}

void system_destroy(system_heap *h) { free(h); }

/* The system heap is thread safe, so its limit count is atomic: take n bytes
 * of the limit (0 when they do not fit) or give them back. */
static int take_bytes(system_heap *h, size_t n) {
    size_t live = atomic_load_explicit(&h->live, memory_order_relaxed);
    do {
        if (n > h->limit - live) return 0;
    } while (!atomic_compare_exchange_weak_explicit(&h->live, &live, live + n, memory_order_relaxed,
                                                    memory_order_relaxed));
    size_t peak = atomic_load_explicit(&h->live_peak, memory_order_relaxed);
    while (live + n > peak &&
           !atomic_compare_exchange_weak_explicit(&h->live_peak, &peak, live + n, memory_order_relaxed,
                                                  memory_order_relaxed)) {}
    return 1;
}

static void give_bytes(system_heap *h, size_t n) {
    atomic_fetch_sub_explicit(&h->live, n, memory_order_relaxed);
}

void *system_alloc_slow(system_heap *h, size_t n) {
    if (!take_bytes(h, n)) return NULL;
    void *p = malloc(n);
    if (!p) give_bytes(h, n);
    return p;
}

void system_free_slow(system_heap *h, void *p, size_t n) {
    if (!p) return;
    give_bytes(h, n);
    system_sized_free(p, n);
}

void *system_alloc_aligned(system_heap *h, size_t n, size_t align) {
    /* rounded up to the alignment below, a size this large would wrap to a
     * small block; and no object may exceed PTRDIFF_MAX bytes */
    if (n > (size_t)PTRDIFF_MAX - align) return NULL;
    if (h->limit && !take_bytes(h, n)) return NULL;
    /* aligned_alloc wants a size that is a multiple of the alignment */
#if defined(_WIN32)
    void *p = _aligned_malloc(n, align);
#else
    size_t size = AM_ALIGN_UP(n, align);
    void *p = aligned_alloc(align, size);
    /* mimalloc 2.0.9 (Debian 12) misaligns blocks of at most 1 KiB aligned to
     * 256..1024 bytes (its issue #700): ask again with a larger size */
    for (int i = 0; p && ((uintptr_t)p & (align - 1)) && i < 4; i++) {
        free(p);
        size = AM_ALIGN_UP(size < 1025 ? 1025 : 2 * size, align);
        p = aligned_alloc(align, size);
    }
    if (p && ((uintptr_t)p & (align - 1))) { free(p); p = NULL; }
    /* the rounding is ours, not the caller's: ASan should see n bytes */
    if (p) am_poison((char *)p + n, size - n);
#endif
    if (!p && h->limit) give_bytes(h, n);
    return p;
}

void system_free_aligned(system_heap *h, void *p, size_t n, size_t align) {
    (void)align;
    if (h->limit && p) give_bytes(h, n);
#if defined(_WIN32)
    _aligned_free(p);
#else
    free(p);
#endif
}

void *system_realloc(system_heap *h, void *p, size_t old_n, size_t new_n) {
    if (!p) return system_alloc(h, new_n);
#if AM_SYSTEM_SIZED
    /* A sized row shrinks by a new block: a library that shrinks in place
     * keeps the block in its old size class, and the sized free that follows
     * names the new size (tcmalloc's tc_free_sized trusts it; the block went
     * onto another class's free list and a later free crashed). */
    int by_new_block = new_n < old_n;
#if AM_SYSTEM_SIZED == AM_SIZED_TCMALLOC
    /* tcmalloc grows a block past its class by a quarter more than asked
     * (do_realloc's lower_bound_to_grow), into a class the sized free of the
     * new size does not name: a threaded trace's replay crashed in
     * ReleaseToCentralCache. A block made by malloc(old_n) is in old_n's
     * class; it serves new_n in place while new_n fits that class. */
    if (new_n > old_n && new_n > tc_malloc_size(p)) by_new_block = 1;
#endif
    if (by_new_block) {
        void *q = system_alloc(h, new_n);
        if (!q) return NULL;
        memcpy(q, p, new_n < old_n ? new_n : old_n);
        system_free(h, p, old_n);
        return q;
    }
#endif
    if (h->limit && new_n > old_n && !take_bytes(h, new_n - old_n)) return NULL;
    void *q = realloc(p, new_n);
    if (h->limit) {
        if (!q && new_n > old_n) give_bytes(h, new_n - old_n);
        if (q && new_n < old_n) give_bytes(h, old_n - new_n);
    }
    return q;
}

void system_reset(system_heap *h) { (void)h; }

void system_usage(const system_heap *h, size_t *reserved, size_t *reserved_peak) {
    /* malloc's own reservations are not visible portably: report the limited
     * count where it is kept, else 0 (unknown); peak RSS tells the rest */
    system_heap *m = (system_heap *)h; /* atomics are read through a non-const pointer */
    *reserved = h->limit ? atomic_load_explicit(&m->live, memory_order_relaxed) : 0;
    *reserved_peak = h->limit ? atomic_load_explicit(&m->live_peak, memory_order_relaxed) : 0;
}
