/* debug.h: the allocmark debug layer (built with AM_DEBUG=1, `make DEBUG=1`):
 * the am_* calls of allocator.h, once for every strategy, with a header before
 * and a canary after each block. Freeing checks the canary (overflow), the
 * header's magic (double free, foreign pointer), the size, alignment and kind
 * of call (wrong-size free); blocks are filled with 0xAB when handed out and
 * 0xDD when freed. A violation prints one line to stderr and aborts.
 * Included by allocator.h only; not a sanitizer (see sanitize.h for ASan).
 * am_dbg_* sit between the strategy and allocator.h's am_* calls (AM_BELOW):
 * the per-heap statistics and the counting wrapper stay above them and see the
 * caller's sizes. */
#ifndef AM_DEBUG_H
#define AM_DEBUG_H

#include <string.h>

/* The strategy sees every request enlarged by the prefix and the canary, and
 * consistently so (alloc, free and realloc all pass enlarged sizes), so that
 * strategies which look at sizes or addresses (the last-block rollback of a
 * bump arena) behave as in release builds. The header is the last bytes of
 * the prefix, right before the caller's block: free lists that strategies
 * keep in the first word of a freed block leave the magic intact. */
typedef struct am_debug_header {
    size_t elem;     /* element size of an am_alloc_array block; 0 for bytes */
    size_t size;     /* bytes the caller asked for */
    uint32_t prefix; /* bytes from the strategy's block to the caller's */
    uint32_t magic;
} am_debug_header;

#define AM_DEBUG_LIVE 0xA110CA7Eu
#define AM_DEBUG_FREED 0xDEADB10Cu
#define AM_DEBUG_HEAD AM_ALIGN_UP(sizeof(am_debug_header), AM_MIN_ALIGN)
#define AM_DEBUG_CANARY 8u /* bytes after each block, all AM_DEBUG_CANARY_BYTE */
#define AM_DEBUG_CANARY_BYTE 0xFD
#define AM_DEBUG_FILL_ALLOC 0xAB
#define AM_DEBUG_FILL_FREE 0xDD

/* reports one violation on stderr ("allocmark: ...") and aborts */
void am_debug_fail(const char *fmt, ...);

/* prefix multiple of the alignment: the caller's block keeps the alignment
 * the strategy gave the enlarged one */
AM_INLINE size_t am_dbg_prefix(size_t align) {
    return align <= AM_MIN_ALIGN ? AM_DEBUG_HEAD : AM_ALIGN_UP(AM_DEBUG_HEAD, align);
}

AM_INLINE am_debug_header *am_dbg_header(void *p) {
    return (am_debug_header *)((char *)p - sizeof(am_debug_header));
}

/* extra elements that hold the prefix and the canary of an array block */
AM_INLINE size_t am_dbg_extra_elems(size_t elem) {
    return elem ? (AM_DEBUG_HEAD + AM_DEBUG_CANARY + elem - 1) / elem : 0;
}

AM_INLINE void am_dbg_set_canary(char *p, size_t n) {
    memset(p + n, AM_DEBUG_CANARY_BYTE, AM_DEBUG_CANARY);
}

/* marks a block the strategy handed out: header, canary, fill; returns the
 * caller's pointer. fill_from: bytes already the caller's (realloc). */
AM_INLINE void *am_dbg_open(void *base, size_t n, size_t elem, size_t prefix, size_t fill_from) {
    char *p = (char *)base + prefix;
    am_debug_header *hd = am_dbg_header(p);
    hd->elem = elem;
    hd->size = n;
    hd->prefix = (uint32_t)prefix;
    hd->magic = AM_DEBUG_LIVE;
    if (fill_from < n) memset(p + fill_from, AM_DEBUG_FILL_ALLOC, n - fill_from);
    am_dbg_set_canary(p, n);
    return p;
}

/* checks a block the caller gives back (free or realloc); returns the
 * strategy's pointer. Every check reads only the header and the canary. */
AM_INLINE void *am_dbg_check(void *p, size_t n, size_t elem, size_t prefix, const char *op) {
    am_debug_header *hd = am_dbg_header(p);
    if (hd->magic == AM_DEBUG_FREED)
        am_debug_fail("%s of block %p (%zu bytes)", op[0] == 'f' ? "double free" : "realloc of freed", p, n);
    if (hd->magic != AM_DEBUG_LIVE)
        am_debug_fail("invalid %s of %p (%zu bytes): not a live block (foreign or misaligned pointer, "
                      "freed long ago, or its header was overwritten by an underflow)", op, p, n);
    if (hd->prefix != prefix)
        am_debug_fail("alignment mismatch in %s of block %p (%zu bytes): allocated with a %u-byte "
                      "prefix, %s with one of %zu (aligned and plain calls mixed?)",
                      op, p, hd->size, (unsigned)hd->prefix, op, prefix);
    if (hd->elem != elem)
        am_debug_fail("kind mismatch in %s of block %p (%zu bytes): allocated with element size %zu, "
                      "%s with element size %zu (0: byte calls)", op, p, hd->size, hd->elem, op, elem);
    if (hd->size != n)
        am_debug_fail("wrong-size %s of block %p: allocated %zu bytes, %s as %zu bytes", op, p,
                      hd->size, op, n);
    {
        const unsigned char *c = (const unsigned char *)p + n;
        size_t i;
        for (i = 0; i < AM_DEBUG_CANARY; i++)
            if (c[i] != AM_DEBUG_CANARY_BYTE)
                am_debug_fail("buffer overflow: block %p (%zu bytes) was written past its end "
                              "(byte %zu after it is 0x%02x), found at %s", p, n, i, c[i], op);
    }
    return (char *)p - prefix;
}

AM_INLINE void am_dbg_close(void *p, size_t n) {
    memset(p, AM_DEBUG_FILL_FREE, n);
    am_dbg_header(p)->magic = AM_DEBUG_FREED;
}

/* a size that cannot be enlarged is out of memory, as in release builds; no
 * object exceeds PTRDIFF_MAX bytes, and saying so here keeps GCC's
 * -Warray-bounds from seeing a huge memset where a strategy's alloc is opaque */
#define AM_DBG_TOO_BIG(n, extra) ((n) > (size_t)PTRDIFF_MAX - (extra))

AM_INLINE am_heap *am_dbg_create(const am_options *o) {
    /* a fixed-size pool must fit blocks of that size with their header */
    if (o && o->block_size) {
        am_options d = *o;
        d.block_size += AM_DEBUG_HEAD + AM_DEBUG_CANARY;
        return AM_S(_create)(&d);
    }
    return AM_S(_create)(o);
}

AM_INLINE void *am_dbg_alloc(am_heap *h, size_t n) {
    size_t extra = AM_DEBUG_HEAD + AM_DEBUG_CANARY;
    if (AM_DBG_TOO_BIG(n, extra)) return NULL;
    void *b = AM_S(_alloc)(h, n + extra);
    if (!b) return NULL;
    return am_dbg_open(b, n, 0, AM_DEBUG_HEAD, 0);
}

AM_INLINE void am_dbg_free(am_heap *h, void *p, size_t n) {
    if (!p) { AM_S(_free)(h, p, n); return; }
    void *b = am_dbg_check(p, n, 0, AM_DEBUG_HEAD, "free");
    am_dbg_close(p, n);
    AM_S(_free)(h, b, n + AM_DEBUG_HEAD + AM_DEBUG_CANARY);
}

AM_INLINE void *am_dbg_alloc_aligned(am_heap *h, size_t n, size_t align) {
    size_t prefix = am_dbg_prefix(align);
    size_t extra = prefix + AM_DEBUG_CANARY;
    if (AM_DBG_TOO_BIG(n, extra)) return NULL;
    void *b = align <= AM_MIN_ALIGN ? AM_S(_alloc)(h, n + extra) : AM_S(_alloc_aligned)(h, n + extra, align);
    if (!b) return NULL;
    return am_dbg_open(b, n, 0, prefix, 0);
}

AM_INLINE void am_dbg_free_aligned(am_heap *h, void *p, size_t n, size_t align) {
    size_t prefix = am_dbg_prefix(align);
    void *b = p ? am_dbg_check(p, n, 0, prefix, "free") : NULL;
    if (p) am_dbg_close(p, n);
    if (align <= AM_MIN_ALIGN) AM_S(_free)(h, b, p ? n + prefix + AM_DEBUG_CANARY : n);
    else AM_S(_free_aligned)(h, b, p ? n + prefix + AM_DEBUG_CANARY : n, align);
}
AM_INLINE void *am_dbg_realloc(am_heap *h, void *p, size_t old_n, size_t new_n) {
    size_t extra = AM_DEBUG_HEAD + AM_DEBUG_CANARY;
    if (AM_DBG_TOO_BIG(new_n, extra)) return NULL;
    void *b = p ? am_dbg_check(p, old_n, 0, AM_DEBUG_HEAD, "realloc") : NULL;
    void *q = AM_S(_realloc)(h, b, p ? old_n + extra : 0, new_n + extra);
    if (!q) return NULL; /* the old block is as it was */
    return am_dbg_open(q, new_n, 0, AM_DEBUG_HEAD, p ? old_n : 0);
}

#if AM_S(_HAS_ARRAY)
AM_INLINE void *am_dbg_alloc_array(am_heap *h, size_t count, size_t elem) {
    size_t extra = am_dbg_extra_elems(elem);
    if (elem && count > (size_t)PTRDIFF_MAX / elem - extra) return NULL;
    void *b = AM_S(_alloc_array)(h, count + extra, elem);
    if (!b) return NULL;
    return am_dbg_open(b, count * elem, elem, AM_DEBUG_HEAD, 0);
}
AM_INLINE void am_dbg_free_array(am_heap *h, void *p, size_t count, size_t elem) {
    if (!p) { AM_S(_free_array)(h, p, count, elem); return; }
    void *b = am_dbg_check(p, count * elem, elem, AM_DEBUG_HEAD, "free");
    am_dbg_close(p, count * elem);
    AM_S(_free_array)(h, b, count + am_dbg_extra_elems(elem), elem);
}
AM_INLINE void *am_dbg_realloc_array(am_heap *h, void *p, size_t old_count, size_t new_count, size_t elem) {
    size_t extra = am_dbg_extra_elems(elem);
    if (elem && new_count > (size_t)PTRDIFF_MAX / elem - extra) return NULL;
    void *b = p ? am_dbg_check(p, old_count * elem, elem, AM_DEBUG_HEAD, "realloc") : NULL;
    void *q = AM_S(_realloc_array)(h, b, p ? old_count + extra : 0, new_count + extra, elem);
    if (!q) return NULL;
    return am_dbg_open(q, new_count * elem, elem, AM_DEBUG_HEAD, p ? old_count * elem : 0);
}
#endif

#endif
