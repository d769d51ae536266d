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

static void *budget_take(bp_budget *b, size_t bytes) {
    if (b->limit && bytes > b->limit - b->reserved) return NULL;
    void *p = malloc(bytes);
    if (!p) return NULL;
    b->reserved += bytes;
    if (b->reserved > b->peak) b->peak = b->reserved;
    return p;
}

static void budget_give(bp_budget *b, void *p, size_t bytes) {
    b->reserved -= bytes;
    free(p);
}

void bp_pool_init(bp_pool *p, size_t partition, size_t max_bytes, bp_budget *b) {
    p->first = NULL;
    p->blocks = NULL;
    p->partition = partition;
    p->max_size = max_bytes ? (max_bytes / partition ? max_bytes / partition : 1) : 0;
    p->start_size = p->max_size && p->max_size < BP_START_SIZE ? p->max_size : BP_START_SIZE;
    p->next_size = p->start_size;
    p->budget = b;
}

static char *chunks_of(bp_block *b) { return (char *)b + BP_BLOCK_HDR; }

static bp_block *block_new(bp_pool *p, size_t chunks) {
    if (chunks > (SIZE_MAX - BP_BLOCK_HDR) / p->partition) return NULL;
    size_t bytes = BP_BLOCK_HDR + chunks * p->partition;
    bp_block *b = budget_take(p->budget, bytes);
    if (b) b->bytes = bytes;
    return b;
}

static void grow(bp_pool *p) {
    if (p->next_size > SIZE_MAX / 4 / p->partition) return;
    if (!p->max_size) p->next_size <<= 1;
    else if (p->next_size < p->max_size)
        p->next_size = p->next_size << 1 < p->max_size ? p->next_size << 1 : p->max_size;
}

/* Links n chunks from start in address order, the last to `end`. */
static void *segregate(char *start, size_t n, size_t partition, void *end) {
    char *c = start;
    for (size_t i = 1; i < n; i++, c += partition) BP_NEXT(c) = c + partition;
    BP_NEXT(c) = end;
    return start;
}

/* The free chunk after which ptr belongs in address order; NULL: at the front. */
static void *find_prev(bp_pool *p, void *ptr) {
    char *it = p->first;
    if (!it || ADDR(it) > ADDR(ptr)) return NULL;
    while (BP_NEXT(it) && ADDR(BP_NEXT(it)) < ADDR(ptr)) it = BP_NEXT(it);
    return it;
}

static void add_ordered(bp_pool *p, char *start, size_t n) {
    void *prev = find_prev(p, start);
    if (!prev) p->first = segregate(start, n, p->partition, p->first);
    else BP_NEXT(prev) = segregate(start, n, p->partition, BP_NEXT(prev));
}

/* n chunks that follow each other in the list and in memory, or NULL: one
 * pass over the list, restarting after each run that breaks (simple_
 * segregated_storage::malloc_n). */
static void *malloc_n(bp_pool *p, size_t n) {
    void *start = &p->first; /* a pretend chunk whose link is `first` */
    for (;;) {
        char *it = BP_NEXT(start);
        if (!it) return NULL;
        size_t k = n;
        while (--k) {
            char *next = BP_NEXT(it);
            if (ADDR(next) != ADDR(it) + p->partition) break;
            it = next;
        }
        if (!k) {
            void *run = BP_NEXT(start);
            BP_NEXT(start) = BP_NEXT(it);
            return run;
        }
        start = it;
    }
}

void *bp_malloc_need_resize(bp_pool *p) {
    bp_block *b = block_new(p, p->next_size);
    if (!b && p->next_size > 4) { /* Boost retries once at half the size */
        p->next_size >>= 1;
        b = block_new(p, p->next_size);
    }
    if (!b) return NULL;
    size_t n = (b->bytes - BP_BLOCK_HDR) / p->partition;
    grow(p);
    b->next = p->blocks;
    p->blocks = b;
    p->first = segregate(chunks_of(b), n, p->partition, p->first);
    return bp_malloc(p);
}

void *bp_ordered_malloc(bp_pool *p, size_t n) {
    void *run = malloc_n(p, n);
    if (run) return run;
    /* none: a new block of at least n chunks, the rest of it into the list in order */
    if (p->next_size < n) p->next_size = n;
    bp_block *b = block_new(p, p->next_size);
    if (!b && n < p->next_size) {
        p->next_size >>= 1;
        if (p->next_size < n) p->next_size = n;
        b = block_new(p, p->next_size);
    }
    if (!b) return NULL;
    size_t have = (b->bytes - BP_BLOCK_HDR) / p->partition;
    if (have > n) add_ordered(p, chunks_of(b) + n * p->partition, have - n);
    grow(p);
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

void bp_ordered_free_n(bp_pool *p, void *chunks, size_t n) {
    add_ordered(p, chunks, n);
}

void bp_purge(bp_pool *p) {
    bp_block *b = p->blocks;
    while (b) {
        bp_block *next = b->next;
        budget_give(p->budget, b, b->bytes);
        b = next;
    }
    p->blocks = NULL;
    p->first = NULL;
    p->next_size = p->start_size;
}

size_t bp_free_count(const bp_pool *p) {
    size_t n = 0;
    for (void *c = p->first; c; c = BP_NEXT(c)) n++;
    return n;
}

int bp_set_init(bp_set *s, const am_options *o, size_t bookkeeping) {
    s->budget.limit = o ? o->limit : 0;
    s->budget.reserved = s->budget.peak = bookkeeping;
    s->bigs = NULL;
    s->pools[0].partition = 0; /* never used: no chunk is 0 bytes */
    for (size_t i = 1; i < BP_CLASSES; i++)
        bp_pool_init(&s->pools[i], i * BP_MIN_PARTITION, o ? o->max_chunk : 0, &s->budget);
    return !(s->budget.limit && bookkeeping > s->budget.limit);
}

void bp_set_purge(bp_set *s) {
    for (size_t i = 1; i < BP_CLASSES; i++) bp_purge(&s->pools[i]);
    while (s->bigs) bp_big_free(s, s->bigs + 1);
}

void *bp_big_alloc(bp_set *s, size_t n, size_t align) {
    if (align < AM_MIN_ALIGN) align = AM_MIN_ALIGN;
    size_t extra = BP_BIG_HDR + (align - AM_MIN_ALIGN);
    if (n > SIZE_MAX - extra) return NULL;
    char *raw = budget_take(&s->budget, n + extra);
    if (!raw) return NULL;
    char *user = (char *)AM_ALIGN_UP(ADDR(raw) + BP_BIG_HDR, align);
    bp_big *g = (bp_big *)user - 1;
    g->raw = raw;
    g->bytes = n + extra;
    g->prev = NULL;
    g->next = s->bigs;
    if (s->bigs) s->bigs->prev = g;
    s->bigs = g;
    return user;
}

void bp_big_free(bp_set *s, void *p) {
    if (!p) return;
    bp_big *g = (bp_big *)p - 1;
    if (g->prev) g->prev->next = g->next;
    else s->bigs = g->next;
    if (g->next) g->next->prev = g->prev;
    budget_give(&s->budget, g->raw, g->bytes);
}
