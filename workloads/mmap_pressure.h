/* mmap_pressure.h: what tests see of the mmap_pressure workload (OSRM's mmap
 * allocator): the structure it keeps between repetitions, so that a test can drop it
 * and see the strategy's memory (and mmap_file's temporary files) go. */
#ifndef AM_MMAP_PRESSURE_H
#define AM_MMAP_PRESSURE_H

#include <stddef.h>

/* Frees the structure and destroys the heap that holds it (also run at exit). */
void am_mmap_pressure_release(void);

/* Bytes of the structure's memory that were evictable (whole pages) and, of
 * those, resident after the last repetition's eviction, before its queries. */
void am_mmap_pressure_residency(size_t *evictable, size_t *resident);

#endif
