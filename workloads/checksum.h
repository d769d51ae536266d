/* checksum.h: what a workload and its reference share so that they agree on a
 * checksum: values drawn in rand()'s range, qsort's order of ints, and FNV-1a
 * over values in order. Not a hash table's hash: it is there to change when one
 * value is wrong or out of place. */
#ifndef AM_CHECKSUM_H
#define AM_CHECKSUM_H

#include "workload.h"

#define AM_FNV_OFFSET 0xCBF29CE484222325ull

/* one FNV-1a step over a 32-bit value (an int is folded as its bits) */
AM_INLINE uint64_t am_fnv_add(uint64_t h, uint32_t x) { return (h ^ x) * 0x100000001B3ull; }

/* a value in [0, 2^31), the range of rand() in the 2009 Boost monotonic comparison */
AM_INLINE int am_rand_int(uint64_t *rng) { return (int)(am_rand(rng) & 0x7fffffff); }

/* ascending ints, for qsort */
AM_INLINE int am_compare_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

#endif
