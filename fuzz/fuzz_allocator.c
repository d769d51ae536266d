/* fuzz_allocator.c: a libFuzzer target, built once per strategy row (make
 * fuzz). The input bytes are a sequence of heap operations (allocate, free the
 * k-th live block, realloc, aligned and array allocations, reset) run on one
 * heap, while a shadow of the live blocks checks: alignment; no overlap (each
 * block carries its own byte pattern, verified when freed and at the end);
 * contents kept across realloc; and, with AM_STATS, live bytes equal to the
 * shadow's. ASan and UBSan, built in, catch the rest. Not a benchmark. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator.h"

#define MAX_LIVE 256
#define MAX_LIVE_BYTES ((size_t)8 << 20)

/* minimal's first buffer is its whole heap: 16 MiB holds MAX_LIVE_BYTES and a
 * long input's garbage. The others start from their default chunk or block
 * (64 KiB), as measured: growth is fuzzed too, and an execution stays cheap
 * under ASan (a 16 MiB block per input made tls_size_class 10 runs a second) */
#define FUZZ_WHOLE_HEAP_minimal 1

typedef struct shadow {
    unsigned char *p;
    size_t n;
    size_t align; /* kind: 0 plain, 1 array of elem-sized elements, else the alignment */
    size_t elem;
    uint32_t tag;
} shadow;

typedef struct input { const uint8_t *d; size_t len, at; } input;

static unsigned next8(input *in) { return in->at < in->len ? in->d[in->at++] : 0; }
static unsigned next16(input *in) { unsigned lo = next8(in); return lo | (next8(in) << 8); }

static void fail(const char *what, const shadow *s) {
    fprintf(stderr, "fuzz_allocator[%s]: %s (block %p, %zu bytes, tag %u)\n", AM_ROW_NAME, what,
            s ? (void *)s->p : NULL, s ? s->n : 0, s ? (unsigned)s->tag : 0);
    abort();
}

static unsigned char pat(uint32_t tag, size_t i) { return (unsigned char)(tag * 167u + (i >> 3) * 13u + i + 1u); }

static void fill(shadow *s, size_t from) {
    for (size_t i = from; i < s->n; i++) s->p[i] = pat(s->tag, i);
}

/* every byte of small blocks; of large ones the ends and a stride, which
 * keeps an overlap visible and the fuzzer fast */
static void verify(const shadow *s, size_t upto, const char *when) {
    for (size_t i = 0; i < upto; i += (i < 256 || upto - i <= 256) ? 1 : 61)
        if (s->p[i] != pat(s->tag, i)) fail(when, s);
}

/* the alignment malloc owes a block: less than AM_MIN_ALIGN only for blocks
 * too small to hold a max_align_t (as jemalloc, tcmalloc and mimalloc do) */
static size_t owed(size_t n, size_t align) {
    size_t a = align > AM_MIN_ALIGN ? align : AM_MIN_ALIGN;
    if (align <= AM_MIN_ALIGN)
        while (a > 1 && a > n) a >>= 1;
    return a;
}

/* an array only owes what its element needs (the largest power of two that
 * divides elem, up to AM_MIN_ALIGN), as tests/strategy/test_allocator.c's
 * alignment_array says: Boost's pool_allocator<T> gives no more */
static size_t owed_block(const shadow *s, size_t n) {
    if (s->align != 1) return owed(n, s->align);
    size_t a = s->elem & (~s->elem + 1);
    return a < AM_MIN_ALIGN ? a : AM_MIN_ALIGN;
}

/* sizes: mostly small, some up to 16 KiB */
static size_t pick_size(input *in) {
    unsigned r = next16(in);
    switch (r & 7) {
    case 0: case 1: case 2: case 3: return 1 + ((r >> 3) & 63);
    case 4: case 5: case 6: return 1 + ((r >> 3) & 1023);
    default: return 1 + (((size_t)(r >> 3) << 1) & 0x3FFF);
    }
}

static void release(am_heap *h, shadow *s) {
    verify(s, s->n, "pattern changed before free: overlap or stray write");
    if (s->align == 1) am_free_array(h, s->p, s->n / s->elem, s->elem);
    else if (s->align) am_free_aligned(h, s->p, s->n, s->align);
    else am_free(h, s->p, s->n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static shadow live[MAX_LIVE];
    size_t nlive = 0, live_bytes = 0;
    uint32_t tag = 0;
    input in = {data, size, 0};
    am_options o;
    am_options_default(&o);
#if AM_CAT(FUZZ_WHOLE_HEAP_, AM_STRATEGY)
    o.initial_bytes = (size_t)16 << 20;
#endif
    am_heap *h = am_create(&o);
    if (!h) fail("am_create failed", NULL);

    while (in.at < in.len) {
        unsigned op = next8(&in) % 10; /* 0-2 alloc, 3 aligned, 4 array, 5 realloc, 6-8 free, 9 reset */
        if (op <= 4) {
            if (nlive == MAX_LIVE || live_bytes >= MAX_LIVE_BYTES) continue;
            shadow s = {NULL, 0, 0, 0, ++tag};
            if (op <= 2) {
                s.n = pick_size(&in);
                s.p = am_alloc(h, s.n);
            } else if (op == 3) {
                s.align = (size_t)1 << (next8(&in) % 13);
                s.n = pick_size(&in);
                s.p = am_alloc_aligned(h, s.n, s.align);
                if (s.align == 1) s.align = 2; /* 1 marks arrays; 2 is an alignment like 1 */
            } else {
                s.elem = 1 + next8(&in) % 48;
                s.align = 1;
                s.n = (1 + next8(&in) % 64) * s.elem;
                s.p = am_alloc_array(h, s.n / s.elem, s.elem);
            }
            if (!s.p) continue; /* out of memory is allowed */
            if ((uintptr_t)s.p % owed_block(&s, s.n)) fail("misaligned block", &s);
            fill(&s, 0);
            live[nlive++] = s;
            live_bytes += s.n;
        } else if (op == 5) {
            if (!nlive) continue;
            /* realloc the k-th live block (plain or array ones) */
            shadow *s = &live[next8(&in) % nlive];
            if (s->align > 1) continue;
            size_t n = s->align == 1 ? (1 + next8(&in) % 200) * s->elem : pick_size(&in);
            unsigned char *q = s->align == 1 ? am_realloc_array(h, s->p, s->n / s->elem, n / s->elem, s->elem)
                                             : am_realloc(h, s->p, s->n, n);
            if (!q) { verify(s, s->n, "failed realloc changed the block"); continue; }
            size_t keep = s->n < n ? s->n : n;
            live_bytes = live_bytes - s->n + n;
            s->p = q;
            verify(s, keep, "realloc lost contents");
            if ((uintptr_t)q % owed_block(s, n)) fail("misaligned realloc", s);
            s->n = n;
            fill(s, keep);
        } else if (op <= 8) {
            if (!nlive) continue;
            size_t k = next8(&in) % nlive;
            release(h, &live[k]);
            live_bytes -= live[k].n;
            live[k] = live[--nlive];
        } else {
            /* reset: where it does not release live blocks (malloc), free them first */
            for (size_t i = 0; i < nlive; i++) {
                verify(&live[i], live[i].n, "pattern changed before reset: overlap or stray write");
                if (!AM_RESET_FREES_LIVE) release(h, &live[i]);
            }
            am_reset(h);
            nlive = live_bytes = 0;
        }
#if AM_STATS
        am_stats st;
        am_get_stats(h, &st);
        if (st.bytes_live != live_bytes) {
            fprintf(stderr, "statistics say %zu live bytes, the shadow %zu\n", st.bytes_live, live_bytes);
            fail("statistics differ from the shadow", NULL);
        }
        if (st.bytes_peak < st.bytes_live) fail("peak below live", NULL);
#endif
    }
    for (size_t i = 0; i < nlive; i++) release(h, &live[i]);
    am_destroy(h);
    return 0;
}
