/* bump.h: the pointer-bump fast paths shared by the arena strategies
 * (monotonic, mmap_arena): a free range [cur, end) at the end of the current
 * chunk. Not a strategy: where chunks come from is the includer's business.
 *
 * Under ASan the includer poisons a chunk whole when it is taken from the
 * system (and the used part on reset); these calls then unpoison exactly the
 * bytes handed out and poison a block again when it is freed or moved, so
 * padding, freed blocks and the rest of the chunk stay unaddressable. */
#ifndef AM_BUMP_H
#define AM_BUMP_H

#include "types.h"
#include "sanitize.h"

/* cur stays AM_MIN_ALIGN-aligned: chunks start aligned and every step is a
 * multiple of AM_MIN_ALIGN. */
typedef struct am_bump {
    char *cur, *end;
} am_bump;

/* NULL when the block does not fit (the caller takes its slow path). n >= 1,
 * so need is 0 only when the rounding overflowed: need - 1 then wraps to
 * SIZE_MAX and the one comparison catches it too. */
AM_FORCE_INLINE void *am_bump_alloc(am_bump *b, size_t n) {
    size_t need = AM_ALIGN_UP(n, AM_MIN_ALIGN);
    if (AM_UNLIKELY(need - 1 >= (size_t)(b->end - b->cur))) return NULL;
    void *p = b->cur;
    b->cur += need;
    am_unpoison(p, n);
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
 * the chunk, any block shrinks. NULL when the block has to move. */
AM_FORCE_INLINE void *am_bump_resize(am_bump *b, void *p, size_t old_n, size_t new_n) {
    size_t need = AM_ALIGN_UP(new_n, AM_MIN_ALIGN);
    if (new_n > SIZE_MAX - AM_MIN_ALIGN) return NULL;
    if (am_bump_is_last(b, p, old_n)) {
        if (need > (size_t)(b->end - (char *)p)) return NULL;
        b->cur = (char *)p + need;
    } else if (need > AM_ALIGN_UP(old_n, AM_MIN_ALIGN)) {
        return NULL;
    }
    am_poison(p, AM_ALIGN_UP(old_n, AM_MIN_ALIGN));
    am_unpoison(p, new_n);
    return p;
}

/* Aligned to align (a power of two above AM_MIN_ALIGN); NULL when it does not
 * fit. The padding before the block is lost until reset. */
AM_INLINE void *am_bump_alloc_aligned(am_bump *b, size_t n, size_t align) {
    uintptr_t at = AM_ALIGN_UP((uintptr_t)b->cur, (uintptr_t)align);
    size_t need = AM_ALIGN_UP(n, AM_MIN_ALIGN);
    if (need == 0 || at > (uintptr_t)b->end || need > (size_t)((uintptr_t)b->end - at)) return NULL;
    b->cur = (char *)at + need;
    am_unpoison((char *)at, n);
    return (char *)at;
}

#endif
