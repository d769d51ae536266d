/* query_heap.h: the parts of the query_heap workload (OSRM's query heap) that tests
 * see: its generated road-like graph and its queries, so that a test can check the
 * distances with a Dijkstra of its own. Not a graph library: one graph shape. */
#ifndef AM_QUERY_HEAP_H
#define AM_QUERY_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* Compressed rows: the edges of node u are first[u] .. first[u + 1] - 1. */
typedef struct am_graph {
    uint32_t n;
    const uint32_t *first;  /* n + 1 */
    const uint32_t *target; /* first[n] */
    const uint32_t *weight;
} am_graph;

/* The graph of n nodes (plain malloc, built once per process and size: it is
 * not the allocator under test); NULL when out of memory. */
const am_graph *am_query_heap_graph(size_t n);

/* Queries one thread runs in one repetition of the workload at size n. */
size_t am_query_heap_queries(size_t n);

/* The source and target of a thread's queries, count pairs into pairs[2k], pairs[2k+1]. */
void am_query_heap_pairs(uint64_t seed, unsigned thread, uint32_t n, size_t count, uint32_t *pairs);

/* What query k of thread `thread` adds to the checksum, given its distance:
 * weighted by position so that two wrong distances cannot cancel. */
uint64_t am_query_heap_term(unsigned thread, size_t queries, size_t k, uint64_t dist);

#endif
