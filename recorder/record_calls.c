/* record_calls.c: the malloc family of the recording library (make record,
 * LD_PRELOAD, Linux and glibc only). Each wrapper lets the C library serve the
 * call and writes it into the calling thread's buffer. It is not a malloc: it
 * allocates nothing through malloc, and takes no lock on the fast path, which
 * is all in this file so that it inlines; refills and naming live elsewhere. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "record.h"

/* ---- the boot heap ----
 * dlsym may allocate before real.calloc is known: such calls are served from
 * here, and never freed */
static _Alignas(64) unsigned char boot_heap[1 << 16];
static atomic_size_t boot_used;

static void *boot_alloc(size_t n)
{
    size_t at = atomic_fetch_add(&boot_used, (n + 31) & ~(size_t)15);
    if (at + 16 + n > sizeof boot_heap)
        return NULL;
    memcpy(boot_heap + at, &n, sizeof n); /* the size, for realloc */
    return boot_heap + at + 16;
}

static int in_boot_heap(const void *p)
{
    return (const unsigned char *)p >= boot_heap && (const unsigned char *)p < boot_heap + sizeof boot_heap;
}

/* ---- the address -> block table: open addressing in mmap'd memory ----
 * A slot's key is 0 (never used), TOMB (freed) or the block's address. An
 * address is inserted by the thread that got it and removed by whichever
 * frees it, before it goes back to the C library, so no address is in the
 * table twice. The home slot keeps neighbouring blocks on neighbouring slots:
 * the table's pages are touched as the heap's are. */
#define TOMB ((uintptr_t)1)
#define MAX_PROBE 4096
struct slot {
    _Atomic uintptr_t key;
    uint64_t block; /* thread << 40 | number */
    uint64_t size;
};
static struct slot *g_table;
static size_t g_table_bytes, g_mask;

static size_t home_slot(uintptr_t a)
{
    return ((a >> 4) ^ (a >> 28)) & g_mask;
}

static int table_insert(uintptr_t a, uint64_t block, uint64_t size)
{
    size_t i = home_slot(a);
    for (int n = 0; n < MAX_PROBE; n++, i = (i + 1) & g_mask) {
        uintptr_t k = atomic_load_explicit(&g_table[i].key, memory_order_relaxed);
        if (UNLIKELY(k == a)) { /* freed where no wrapper saw it: the C library just gave it anew */
            g_table[i].block = block;
            g_table[i].size = size;
            return 1;
        }
        while (k == 0 || k == TOMB) {
            if (atomic_compare_exchange_weak(&g_table[i].key, &k, a)) {
                g_table[i].block = block;
                g_table[i].size = size;
                return 1;
            }
        }
    }
    return 0;
}

static int table_remove(uintptr_t a, uint64_t *block, uint64_t *size)
{
    size_t i = home_slot(a);
    for (int n = 0; n < MAX_PROBE; n++, i = (i + 1) & g_mask) {
        uintptr_t k = atomic_load_explicit(&g_table[i].key, memory_order_acquire);
        if (k == a) {
            *block = g_table[i].block;
            *size = g_table[i].size;
            atomic_store_explicit(&g_table[i].key, TOMB, memory_order_release);
            return 1;
        }
        if (k == 0)
            return 0;
    }
    return 0;
}

/* the table, mapped when recording starts and anew in a child of fork */
int table_map(void)
{
    for (int bits = 24; bits >= 16; bits -= 2) {
        size_t bytes = ((size_t)1 << bits) * sizeof(struct slot);
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            g_table = p;
            g_table_bytes = bytes;
            g_mask = ((size_t)1 << bits) - 1;
            return 1;
        }
    }
    return 0;
}

/* ---- the order of calls: g_word (record.h) and the hint ---- */
#ifndef SEQ_BITS /* smaller in a test build, to pass 2^SEQ_BITS calls quickly */
#define SEQ_BITS 24
#endif
#define SEQ_MASK ((UINT32_C(1) << SEQ_BITS) - 1)
_Alignas(64) _Atomic uint64_t g_word;
/* The word keeps the sequence number's low 24 bits only. The whole number of
 * a call is the one with those bits nearest to this hint: a recent call's
 * number, raised whenever a call crosses a multiple of 2^HINT_BITS. Read each
 * call, written once in 2^HINT_BITS calls: it is off by less than 2^23 unless
 * a thread stops for millions of calls between its add and its read. */
#ifndef HINT_BITS
#define HINT_BITS 20
#endif
_Alignas(64) _Atomic uint64_t g_hint;
_Atomic uint64_t g_foreign_frees;

void calls_after_fork(void)
{
    munmap(g_table, g_table_bytes);
    table_map();
    atomic_store(&g_word, 0);
    atomic_store(&g_hint, 0);
    atomic_store(&g_foreign_frees, 0);
}

static inline struct tstate *state(void)
{
    struct tstate *t = t_state;
    if (UNLIKELY(t == NULL))
        t = new_state();
    return t;
}

static NOINLINE void raise_hint(uint64_t seq)
{
    uint64_t old = atomic_load_explicit(&g_hint, memory_order_relaxed);
    while (old < seq && !atomic_compare_exchange_weak_explicit(&g_hint, &old, seq, memory_order_relaxed,
                                                                memory_order_relaxed)) {
    }
}

/* one call: its place in the order, the live bytes, the record's first byte */
static inline unsigned char *begin(struct tstate *t, unsigned kind, int64_t live_change, unsigned flags)
{
    if (UNLIKELY(t->pos > BUF_SIZE - MAX_RECORD))
        flush_own(t);
    uint64_t w = atomic_fetch_add_explicit(&g_word, SEQ_ONE + (uint64_t)live_change, memory_order_relaxed) +
                 SEQ_ONE + (uint64_t)live_change;
    uint32_t low = (uint32_t)(w >> LIVE_BITS) & SEQ_MASK;
    uint64_t live = w & LIVE_MASK;
    if (live > t->peak)
        t->peak = live;
    uint64_t hint = atomic_load_explicit(&g_hint, memory_order_relaxed);
    uint32_t ahead = (low - (uint32_t)hint) & SEQ_MASK;
    uint64_t seq = ahead < (SEQ_MASK >> 1) || hint < (SEQ_MASK + 1 - ahead) ? hint + ahead
                                                                             : hint - (SEQ_MASK + 1 - ahead);
    if (UNLIKELY((seq >> HINT_BITS) > (hint >> HINT_BITS)))
        raise_hint(seq);
    unsigned char *o = t->buf + t->pos;
    uint64_t step = seq - t->seq;
    t->seq = seq;
    t->counts[kind]++;
    if (LIKELY(step == 1)) {
        *o++ = (unsigned char)(kind | flags);
        return o;
    }
    *o++ = (unsigned char)(kind | flags | AM_REC_SEQ);
    return put(o, step);
}

static inline void commit(struct tstate *t, unsigned char *end)
{
    t->pos = (size_t)(end - t->buf);
    atomic_store_explicit(&t->committed, t->pos, memory_order_release);
}

static inline unsigned char *put_block(struct tstate *t, unsigned char *tag, unsigned char *o, uint64_t block)
{
    uint32_t owner = (uint32_t)(block >> 40);
    uint64_t number = block & LIVE_MASK;
    if (LIKELY(owner == t->tid))
        return put(o, t->nalloc - number);
    *tag |= AM_REC_OTHER;
    return put(put(o, owner), number);
}

static inline void new_block(struct tstate *t, void *p, uint64_t size)
{
    t->nalloc++;
    if (UNLIKELY(!table_insert((uintptr_t)p, (uint64_t)t->tid << 40 | t->nalloc, size)))
        t->untracked++;
}

static uint64_t product(size_t a, size_t b)
{
    size_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* malloc, valloc, pvalloc, calloc and the aligned ones: count 0 for no calloc */
static inline void record_alloc(unsigned kind, void *p, size_t count, size_t size, size_t align)
{
    struct tstate *t = state();
    if (UNLIKELY(t == NULL))
        return;
    uint64_t bytes = kind == AM_CALL_CALLOC ? product(count, size) : size;
    unsigned char *o = begin(t, kind, p ? (int64_t)bytes : 0, p ? 0 : AM_REC_NULL);
    if (kind == AM_CALL_CALLOC)
        o = put(o, count);
    if (align)
        o = put(o, align);
    o = put(o, size);
    if (p)
        new_block(t, p, bytes);
    commit(t, o);
}

#define BOOTING() (UNLIKELY(real.free == NULL) && atomic_load(&g_booting))
#define RECORDING() (LIKELY(atomic_load_explicit(&g_on, memory_order_relaxed)) && LIKELY(!t_busy))

/* ---- the malloc family ---- */
EXPORT void *malloc(size_t n)
{
    if (BOOTING())
        return boot_alloc(n);
    NEED_REAL(malloc);
    void *p = real.malloc(n);
    if (RECORDING())
        record_alloc(AM_CALL_MALLOC, p, 0, n, 0);
    return p;
}

EXPORT void *calloc(size_t count, size_t n)
{
    if (BOOTING()) {
        uint64_t bytes = product(count, n);
        return bytes == UINT64_MAX ? NULL : boot_alloc((size_t)bytes); /* static memory is zero */
    }
    NEED_REAL(calloc);
    void *p = real.calloc(count, n);
    if (RECORDING())
        record_alloc(AM_CALL_CALLOC, p, count, n, 0);
    return p;
}

EXPORT void free(void *p)
{
    if (UNLIKELY(in_boot_heap(p)))
        return;
    NEED_REAL(free);
    if (RECORDING()) {
        uint64_t block, size;
        if (p != NULL && UNLIKELY(!table_remove((uintptr_t)p, &block, &size))) {
            atomic_fetch_add_explicit(&g_foreign_frees, 1, memory_order_relaxed);
        } else {
            struct tstate *t = state();
            if (LIKELY(t != NULL)) {
                unsigned char *o = begin(t, AM_CALL_FREE, p ? -(int64_t)size : 0, p ? 0 : AM_REC_NULL);
                if (p)
                    o = put_block(t, t->buf + t->pos, o, block); /* the tag is at pos */
                commit(t, o);
            }
        }
    }
    real.free(p);
}

/* realloc and reallocarray: the old block ends when a block comes of the call
 * or the size is 0 (glibc frees then); else it stays */
static void *resize(unsigned kind, void *old, size_t count, size_t n)
{
    size_t bytes = n;
    if (kind == AM_CALL_REALLOCARRAY && __builtin_mul_overflow(count, n, &bytes)) {
        bytes = SIZE_MAX;
    }
    if (UNLIKELY(in_boot_heap(old) || BOOTING())) {
        size_t had = 0;
        if (old)
            memcpy(&had, (unsigned char *)old - 16, sizeof had);
        void *p = bytes == SIZE_MAX ? NULL : malloc(bytes);
        if (p)
            memcpy(p, old, had < bytes ? had : bytes);
        return p;
    }
    NEED_REAL(realloc);
    if (!RECORDING()) {
        if (bytes == SIZE_MAX) {
            errno = ENOMEM;
            return NULL;
        }
        return real.realloc(old, bytes);
    }
    struct tstate *t = state();
    uint64_t block = 0, size = 0;
    int known = old != NULL && table_remove((uintptr_t)old, &block, &size);
    void *p;
    if (bytes == SIZE_MAX) {
        errno = ENOMEM;
        p = NULL;
    } else {
        p = real.realloc(old, bytes);
    }
    if (UNLIKELY(t == NULL))
        return p;
    if (old != NULL && !known)
        t->foreign_reallocs++;
    int old_ends = known && (p != NULL || bytes == 0);
    if (known && !old_ends)
        table_insert((uintptr_t)old, block, size);
    int64_t change = (p ? (int64_t)bytes : 0) - (old_ends ? (int64_t)size : 0);
    unsigned char *o = begin(t, kind, change, (p ? 0 : AM_REC_NULL) | (known ? 0 : AM_REC_NO_OLD));
    unsigned char *tag = t->buf + t->pos;
    if (known)
        o = put_block(t, tag, o, block);
    if (kind == AM_CALL_REALLOCARRAY)
        o = put(o, count);
    o = put(o, n);
    if (p)
        new_block(t, p, bytes);
    commit(t, o);
    return p;
}

EXPORT void *realloc(void *old, size_t n)
{
    return resize(AM_CALL_REALLOC, old, 1, n);
}

EXPORT void *reallocarray(void *old, size_t count, size_t n)
{
    return resize(AM_CALL_REALLOCARRAY, old, count, n);
}

/* the aligned ones: glibc serves them without calling malloc, but t_busy keeps
 * a C library that does from recording a call twice */
#define ALIGNED(kind, call, align, n)                                                                              \
    do {                                                                                                           \
        int was = t_busy;                                                                                          \
        t_busy = 1;                                                                                                \
        void *p = call;                                                                                            \
        t_busy = was;                                                                                              \
        if (RECORDING())                                                                                           \
            record_alloc(kind, p, 0, n, align);                                                                    \
        return p;                                                                                                  \
    } while (0)

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    NEED_REAL(aligned_alloc);
    ALIGNED(AM_CALL_ALIGNED_ALLOC, real.aligned_alloc(align, n), align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
    NEED_REAL(memalign);
    ALIGNED(AM_CALL_MEMALIGN, real.memalign(align, n), align, n);
}

EXPORT void *valloc(size_t n)
{
    NEED_REAL(valloc);
    ALIGNED(AM_CALL_VALLOC, real.valloc(n), 0, n);
}

EXPORT void *pvalloc(size_t n)
{
    NEED_REAL(pvalloc);
    ALIGNED(AM_CALL_PVALLOC, real.pvalloc(n), 0, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    NEED_REAL(posix_memalign);
    int was = t_busy;
    t_busy = 1;
    int r = real.posix_memalign(out, align, n);
    t_busy = was;
    if (RECORDING())
        record_alloc(AM_CALL_POSIX_MEMALIGN, r == 0 ? *out : NULL, 0, n, align);
    return r;
}
