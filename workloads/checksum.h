/* checksum.h: what a workload and its oracle share so that they agree on a
 * checksum: values drawn in rand()'s range, qsort's order of ints, and FNV-1a
 * over values in order. Not a hash table's hash: it is there to change when one
 * value is wrong or out of place. */
#ifndef AM_CHECKSUM_H
#define AM_CHECKSUM_H

#include "workload.h"

#define AM_FNV_OFFSET 0xCBF29CE484222325ull

/* one FNV-1a step over a 32-bit value (an int is folded as its bits) */
AM_INLINE uint64_t am_fnv_add(uint64_t h, uint32_t x) { return (h ^ x) * 0x100000001B3ull; }

/* The values workloads put in their containers, one after the other: a
 * 64-bit LCG (Knuth's MMIX constants) whose high bits are taken, a multiply
 * and an add a value, and no division, so that drawing values weighs little
 * next to the container work (splitmix64, am_rand, takes four times as many
 * instructions). The state starts from the seed through am_rand. */
AM_INLINE uint64_t am_values_start(uint64_t seed) { return am_rand(&seed); }

AM_INLINE uint64_t am_values_next(uint64_t *x) {
    return *x = *x * 6364136223846793005ull + 1442695040888963407ull;
}

/* a value in [0, 2^31), the range of rand() in the 2009 Boost monotonic comparison */
AM_INLINE int am_value(uint64_t *x) { return (int)(am_values_next(x) >> 33); }

/* a value in [0, n) for 0 < n <= 2^32: the top 32 bits scaled by n */
AM_INLINE uint32_t am_value_below(uint64_t *x, uint64_t n) {
    return (uint32_t)(((am_values_next(x) >> 32) * n) >> 32);
}

/* ascending ints, for qsort */
AM_INLINE int am_compare_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

#endif
