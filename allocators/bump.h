/* bump.h: the pointer-bump fast paths shared by the arena strategies
 * (monotonic, mmap_arena): a free range [cur, end) at the end of the current
 * chunk. Not a strategy: where chunks come from is the includer's business.
 *
 * Under ASan these calls keep the bytes just past the bump pointer poisoned
 * (a step at a time, so that the cost follows use, not chunk size), unpoison
 * exactly the bytes handed out, and poison a block again when it is freed or
 * resized; the includer poisons what was used on reset and unpoisons it
 * before the chunk goes back to the system. */
#ifndef AM_BUMP_H
#define AM_BUMP_H

#include "types.h"
#include "sanitize.h"

/* cur stays AM_MIN_ALIGN-aligned: chunks start aligned and every step is a
 * multiple of AM_MIN_ALIGN. */
typedef struct am_bump {
    char *cur, *end;
    char *poisoned; /* ASan builds: [cur, poisoned) is poisoned; the includer sets it to cur on entering a chunk */
} am_bump;

#define AM_BUMP_POISON_STEP ((size_t)64 << 10)

/* ASan builds: poison from the end of the n-byte block at p (which is about
 * to be unpoisoned) and from the old mark to a step past cur; padding before
 * p that lies beyond the old mark is poisoned too. */
AM_INLINE void am_bump_poison_ahead(am_bump *b, char *p, size_t n) {
    char *from = p + (n & ~(size_t)7);
    char *to = (size_t)(b->end - b->cur) > AM_BUMP_POISON_STEP ? b->cur + AM_BUMP_POISON_STEP : b->end;
    if (b->poisoned < p) am_poison(b->poisoned, (size_t)(p - b->poisoned));
    else if (from < b->poisoned) from = b->poisoned;
    if (to > from) am_poison(from, (size_t)(to - from));
    if (to > b->poisoned) b->poisoned = to;
}

/* after cur moved past [p, p + n): that block addressable, what follows not */
#if AM_ASAN
#define AM_BUMP_HANDOUT(b, p, n)                                                   \
    do {                                                                           \
        if ((b)->poisoned < (b)->cur || (size_t)((b)->poisoned - (b)->cur) < 64)      \
            am_bump_poison_ahead((b), (char *)(p), (n));                           \
        am_unpoison((p), (n));                                                     \
    } while (0)
#else
#define AM_BUMP_HANDOUT(b, p, n) ((void)0)
#endif

/* NULL when the block does not fit (the caller takes its slow path). n >= 1,
 * so need is 0 only when the rounding overflowed: need - 1 then wraps to
 * SIZE_MAX and the one comparison catches it too. */
AM_FORCE_INLINE void *am_bump_alloc(am_bump *b, size_t n) {
    size_t need = AM_ALIGN_UP(n, AM_MIN_ALIGN);
    if (AM_UNLIKELY(need - 1 >= (size_t)(b->end - b->cur))) return NULL;
    void *p = b->cur;
    b->cur += need;
    AM_BUMP_HANDOUT(b, p, n);
    return p;
}

/* Whether [p, p + n rounded up) is the last block handed out. Integer
 * arithmetic, so a NULL p is merely "no". */
AM_FORCE_INLINE int am_bump_is_last(const am_bump *b, const void *p, size_t n) {
    return (uintptr_t)p + AM_ALIGN_UP(n, AM_MIN_ALIGN) == (uintptr_t)b->cur;
}

/* Freeing the last block gives its bytes back; any other free is a no-op
 * (but under ASan the block becomes unaddressable either way). */
AM_FORCE_INLINE void am_bump_free(am_bump *b, void *p, size_t n) {
    if (p) am_poison(p, AM_ALIGN_UP(n, AM_MIN_ALIGN));
    if (am_bump_is_last(b, p, n)) b->cur = (char *)p;
}

/* Resize where the block is: the last block grows or shrinks while it fits in
 * the chunk, any block shrinks. NULL when the block has to move. Only the last
 * block moves cur, so only it goes through the poison-ahead bookkeeping: any
 * other block may lie in an earlier chunk, and poisoning "up to the block"
 * from this chunk's mark would cover whatever lies between (mappings can be
 * adjacent, the current one just below). */
AM_FORCE_INLINE void *am_bump_resize(am_bump *b, void *p, size_t old_n, size_t new_n) {
    size_t need = AM_ALIGN_UP(new_n, AM_MIN_ALIGN);
    if (new_n > SIZE_MAX - AM_MIN_ALIGN) return NULL;
    int last = am_bump_is_last(b, p, old_n);
    if (last) {
        if (need > (size_t)(b->end - (char *)p)) return NULL;
        b->cur = (char *)p + need;
    } else if (need > AM_ALIGN_UP(old_n, AM_MIN_ALIGN)) {
        return NULL;
    }
    am_poison(p, AM_ALIGN_UP(old_n, AM_MIN_ALIGN));
    if (last) AM_BUMP_HANDOUT(b, p, new_n);
    else am_unpoison(p, new_n);
    return p;
}

/* Aligned to align (a power of two above AM_MIN_ALIGN); NULL when it does not
 * fit. The padding before the block is lost until reset. */
AM_INLINE void *am_bump_alloc_aligned(am_bump *b, size_t n, size_t align) {
    uintptr_t at = AM_ALIGN_UP((uintptr_t)b->cur, (uintptr_t)align);
    size_t need = AM_ALIGN_UP(n, AM_MIN_ALIGN);
    if (need == 0 || at > (uintptr_t)b->end || need > (size_t)((uintptr_t)b->end - at)) return NULL;
    b->cur = (char *)at + need;
    AM_BUMP_HANDOUT(b, (char *)at, n);
    return (char *)at;
}

#endif
