/* boost_pool.c: the slow half of the Boost.Pool engine: new blocks, the
 * ordered list operations (linear walks, as in Boost), purge, and the
 * malloc-per-request path for what no pool serves. */
#include "boost_pool.h"
#include <stdlib.h>

struct bp_big {
    bp_big *prev, *next;
    void *raw;
    size_t bytes;
};
#define BP_BIG_HDR AM_ALIGN_UP(sizeof(bp_big), AM_MIN_ALIGN)

#define ADDR(p) ((uintptr_t)(p))

void bp_pool_init(bp_pool *p, size_t partition, size_t max_bytes, bp_budget *b) {
    p->first = NULL;
    p->blocks = NULL;
    p->partition = partition;
    p->max_size = bp_max_size(max_bytes, partition);
    p->start_size = p->max_size && p->max_size < BP_START_SIZE ? p->max_size : BP_START_SIZE;
    p->next_size = p->start_size;
    p->budget = b;
}

static char *chunks_of(bp_block *b) { return (char *)b + BP_BLOCK_HDR; }
static size_t chunks_in(const bp_pool *p, const bp_block *b) { return (b->bytes - BP_BLOCK_HDR) / p->partition; }

static bp_block *block_take(bp_pool *p, size_t chunks) {
    size_t bytes = BP_BLOCK_HDR + chunks * p->partition;
    bp_block *b = bp_budget_take(p->budget, bytes);
    if (!b) return NULL;
    b->bytes = bytes;
    am_poison(chunks_of(b), chunks * p->partition);
    return b;
}

/* A new block of `want` chunks, and never fewer than `least`. Under a limit it
 * is shrunk to what the limit leaves, so that the limit is used to the last
 * block and a heap that said NULL keeps saying it; when malloc itself fails,
 * Boost's one retry at half the size. */
static bp_block *block_new(bp_pool *p, size_t want, size_t least) {
    const bp_budget *g = p->budget;
    if (least > (SIZE_MAX - BP_BLOCK_HDR) / p->partition) return NULL;
    if (want > (SIZE_MAX - BP_BLOCK_HDR) / p->partition) want = least;
    if (g->limit) {
        size_t room = g->limit - g->reserved;
        size_t fit = room > BP_BLOCK_HDR ? (room - BP_BLOCK_HDR) / p->partition : 0;
        if (fit < least) return NULL;
        if (want > fit) want = fit;
    }
    bp_block *b = block_take(p, want);
    if (!b && want / 2 >= least) b = block_take(p, want / 2);
    return b;
}

static void bp_grow(bp_pool *p) {
    if (p->next_size > SIZE_MAX / 4 / p->partition) return;
    if (!p->max_size) p->next_size <<= 1;
    else if (p->next_size < p->max_size)
        p->next_size = p->next_size << 1 < p->max_size ? p->next_size << 1 : p->max_size;
}

/* Links n chunks from start in address order, the last to `end`; under ASan
 * the run is left poisoned: it is free. */
static void *segregate(char *start, size_t n, size_t partition, void *end) {
    char *c = start;
    size_t step = AM_FUZZ_HOOK(chunk_step, partition, n);
    am_unpoison(start, n * partition);
    for (size_t i = 1; i < n; i++, c += step) BP_NEXT(c) = c + step;
    BP_NEXT(c) = end;
    am_poison(start, n * partition);
    return start;
}

/* The free chunk after which ptr belongs in address order; NULL: at the front. */
static void *find_prev(bp_pool *p, void *ptr) {
    char *it = p->first;
    if (!it || ADDR(it) > ADDR(ptr)) return NULL;
    for (;;) {
        char *next = bp_next(it);
        if (!next || ADDR(next) >= ADDR(ptr)) return it;
        it = next;
    }
}

static void add_ordered(bp_pool *p, char *start, size_t n) {
    void *prev = find_prev(p, start);
    if (!prev) p->first = segregate(start, n, p->partition, p->first);
    else bp_set_next(prev, segregate(start, n, p->partition, bp_next(prev)));
}

/* The link at `at`: the pool's head (Boost's &first, as if it were a chunk)
 * or a free chunk's, read and written through the chunk's poisoning. The
 * head is no chunk, so ASan builds tell the two apart; elsewhere both are a
 * plain load or store. */
static void *link_at(bp_pool *p, void *at) {
    if (AM_ASAN && at == (void *)&p->first) return p->first;
    return bp_next(at);
}

static void set_link_at(bp_pool *p, void *at, void *next) {
    if (AM_ASAN && at == (void *)&p->first) p->first = next;
    else bp_set_next(at, next);
}

/* The n chunks from the one after *start, when they follow each other in the
 * list and in memory: the last of them; else NULL, *start moved to the chunk
 * where the run broke (simple_segregated_storage::try_malloc_n). The chunk
 * size is a value, as Boost passes it: read from the pool once a walk. */
static char *try_malloc_n(bp_pool *p, void **start, size_t n, size_t partition) {
    char *iter = link_at(p, *start);
    while (--n != 0) {
        char *next = bp_next(iter);
        if (ADDR(next) != ADDR(iter) + partition) {
            *start = iter;
            return NULL;
        }
        iter = next;
    }
    return iter;
}

/* n chunks that follow each other in the list and in memory, or NULL: one
 * pass over the list, each try starting after the run that broke the last,
 * in Boost's steps (simple_segregated_storage::malloc_n): a chunk's link is
 * read again where a try begins and where the run is unlinked. */
static void *malloc_n(bp_pool *p, size_t n) {
    void *start = &p->first;
    size_t partition = p->partition;
    char *iter;
    if (n == 0) return NULL;
    do {
        if (link_at(p, start) == NULL) return NULL;
        iter = try_malloc_n(p, &start, n, partition);
    } while (iter == NULL);
    void *run = link_at(p, start);
    set_link_at(p, start, bp_next(iter));
    return run;
}

void *bp_malloc_slow(bp_pool *p) {
    bp_block *b = block_new(p, p->next_size, 1);
    if (!b) return NULL;
    bp_grow(p);
    b->next = p->blocks;
    p->blocks = b;
    p->first = segregate(chunks_of(b), chunks_in(p, b), p->partition, p->first);
    return bp_malloc(p);
}

void *bp_ordered_malloc(bp_pool *p, size_t n) {
    void *run = malloc_n(p, n);
    if (run) return run;
    /* none: a new block of at least n chunks, the rest of it into the list in order */
    bp_block *b = block_new(p, p->next_size < n ? n : p->next_size, n);
    if (!b) return NULL;
    if (p->next_size < n) p->next_size = n;
    size_t have = chunks_in(p, b);
    if (have > n) add_ordered(p, chunks_of(b) + n * p->partition, have - n);
    bp_grow(p);
    /* Boost keeps an ordered pool's blocks sorted by address too */
    bp_block **at = &p->blocks;
    while (*at && ADDR(*at) < ADDR(b)) at = &(*at)->next;
    b->next = *at;
    *at = b;
    return chunks_of(b);
}

void bp_free_n(bp_pool *p, void *chunks, size_t n) {
    p->first = segregate(chunks, n, p->partition, p->first);
}

AM_NOINLINE void bp_ordered_free_n(bp_pool *p, void *chunks, size_t n) {
    add_ordered(p, chunks, n);
}

void bp_purge(bp_pool *p) {
    bp_block *b = p->blocks;
    while (b) {
        bp_block *next = b->next;
        bp_budget_give(p->budget, b, b->bytes);
        b = next;
    }
    p->blocks = NULL;
    p->first = NULL;
    p->next_size = p->start_size;
}

size_t bp_free_count(const bp_pool *p) {
    size_t n = 0;
    for (void *c = p->first; c; c = bp_next(c)) n++;
    return n;
}

void bp_set_init(bp_set *s, const am_options *o) {
    s->budget.limit = o ? o->limit : 0;
    s->budget.reserved = s->budget.peak = 0;
    s->bigs = NULL;
    s->pools[0].partition = 0; /* never used: no chunk is 0 bytes */
    for (size_t i = 1; i < BP_CLASSES; i++)
        bp_pool_init(&s->pools[i], i * BP_MIN_PARTITION, o ? o->max_chunk : 0, &s->budget);
}

void bp_set_purge(bp_set *s) {
    for (size_t i = 1; i < BP_CLASSES; i++) bp_purge(&s->pools[i]);
    while (s->bigs) bp_big_free(s, s->bigs + 1);
}

void *bp_big_alloc(bp_set *s, size_t n, size_t align) {
    if (align < AM_MIN_ALIGN) align = AM_MIN_ALIGN;
    size_t extra = BP_BIG_HDR + (align - AM_MIN_ALIGN);
    if (n > SIZE_MAX - extra) return NULL;
    char *raw = bp_budget_take(&s->budget, n + extra);
    if (!raw) return NULL;
    char *user = (char *)AM_ALIGN_UP(ADDR(raw) + BP_BIG_HDR, align);
    bp_big *g = (bp_big *)user - 1;
    g->raw = raw;
    g->bytes = n + extra;
    g->prev = NULL;
    g->next = s->bigs;
    if (s->bigs) s->bigs->prev = g;
    s->bigs = g;
    /* ASan sees the whole malloc: the alignment slack on either side is not the caller's */
    am_poison(raw, (size_t)((char *)g - raw));
    am_poison(user + n, (size_t)(raw + g->bytes - (user + n)));
    return user;
}

void bp_big_free(bp_set *s, void *p) {
    if (!p) return;
    bp_big *g = (bp_big *)p - 1;
    if (g->prev) g->prev->next = g->next;
    else s->bigs = g->next;
    if (g->next) g->next->prev = g->prev;
    bp_budget_give(&s->budget, g->raw, g->bytes);
}
