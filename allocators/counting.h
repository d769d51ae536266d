/* counting.h: the counting wrapper of AM_STATS=1 builds (the -stats cells and the
 * tests): bytes in use, peak, allocations and frees per named owner, in a tree
 * ("TransportManager/cl6_dc3/node3/Channel"), printed as BlazingMQ's counting
 * allocator table. It is off until am_counting_start(); then every
 * block carries a header (size, owner, heap, magic) so that a double free or a
 * free with the wrong size is caught and recorded.
 *
 * In measured builds (AM_STATS=0) the owner calls below are empty macros and
 * nothing else exists: workloads tag owners at no cost. The wrapper's glue
 * (am_counted_*) lives in allocator.h, since it calls the strategy. */
#ifndef AM_COUNTING_H
#define AM_COUNTING_H

#include <stddef.h>
#include <stdint.h>
#include "types.h"

typedef struct am_owner am_owner;

#if AM_STATS

/* Set by am_counting_start, before any heap the wrapper is to see is created
 * and before threads start; read by every am_* call of AM_STATS builds. */
extern int am_counting_active;

void am_counting_start(void); /* empty registry, headers from now on */
void am_counting_stop(void);  /* off; forgets every owner (live counted blocks must be gone) */

/* Owners. NULL stands for the root, whose children are the table's top rows.
 * Each thread has its own current owner (the root at first). */
am_owner *am_owner_current(void);
am_owner *am_owner_child(am_owner *parent, const char *name); /* found or made */
void am_owner_enter(am_owner *o);                              /* becomes current */
void am_owner_push(const char *name);                          /* enter(child(current, name)) */
void am_owner_pop(void);                                       /* back to the parent */

/* Counts of one owner (its descendants included), for tests. path: "a/b/c". */
typedef struct am_owner_counts {
    size_t bytes, peak;
    uint64_t allocs, frees;
    size_t direct_bytes;
    uint64_t direct_allocs, direct_frees;
} am_owner_counts;
int am_owner_counts_of(const char *path, am_owner_counts *out); /* 0 when found */

/* The table; every delta column is the change since the previous report,
 * which this call then becomes. Returned text is malloc'ed (NULL if out of memory). */
char *am_counting_report(void);

/* Errors seen (double free, wrong size, not a counted block): how many, and
 * the last message. Each is also printed on stderr when it happens. */
uint64_t am_counting_errors(void);
const char *am_counting_last_error(void);

/* One lock for every AM_STATS counter of heaps shared by threads, and for the
 * registry: statistics builds are for counting, not for speed. */
void am_stats_lock(void);
void am_stats_unlock(void);

/* ---- used by the glue in allocator.h ---- */
typedef struct am_block_hdr {
    void *prev, *next;  /* the list of live counted blocks (user pointers) */
    const void *heap;
    am_owner *owner;
    size_t size;        /* bytes asked for */
    uint64_t magic;     /* last, so that a free list's link in the first words leaves it */
} am_block_hdr;
#define AM_COUNT_HDR AM_ALIGN_UP(sizeof(am_block_hdr), AM_MIN_ALIGN)

void am_counted_track(void *user, size_t n, const void *heap);
/* 0: free it, with *size the size it was allocated with; -1: do not (error recorded) */
int am_counted_untrack(void *user, size_t n, size_t *size);
/* the heap released its live blocks (counted as freed) or forgot them */
void am_counted_forget_heap(const void *heap, int freed);

#else

#define am_owner_current() ((am_owner *)0)
#define am_owner_child(parent, name) ((void)(parent), (void)(name), (am_owner *)0)
#define am_owner_enter(o) ((void)(o))
#define am_owner_push(name) ((void)(name))
#define am_owner_pop() ((void)0)

#endif
#endif
