/* visit_place.h: placement N of one fixed sequence, the moves a cell process
 * makes before it allocates anything (--place N, runner/layout.py's --layout
 * shifted). With the kernel's randomization off, an executable's heap and
 * mappings start at the same addresses in every process, and that one layout
 * can be lucky or unlucky for it; the kernel's draw instead differs between
 * any two runs. Placement N moves the heap up by up to 256 MiB and the
 * mappings down by up to 1 GiB, in pages, the same N the same moves in every
 * run, so that runs which visit a cell in placements 0, 1, 2, ... take it
 * through one set of layouts. Megabytes, not pages: a page's step changed
 * nothing, and moves of this size brought the spread between processes back
 * (docs/measurements.md, "One layout a process"). */
#ifndef AM_VISIT_PLACE_H
#define AM_VISIT_PLACE_H

#include <stdint.h>
#include "workload.h"

#define AM_PLACE_PAGE ((uint64_t)4096)
#define AM_PLACE_HEAP_PAGES ((uint64_t)256 << 20 >> 12) /* 256 MiB */
#define AM_PLACE_MAP_PAGES ((uint64_t)1 << 30 >> 12)    /* 1 GiB */

typedef struct am_place {
    uint64_t heap_bytes, map_bytes;
} am_place;

AM_INLINE am_place am_place_of(uint64_t n) {
    /* a key of its own: the sequence is not the inputs' */
    uint64_t state = n ^ 0x6C61796F75747321ull, draw = am_rand(&state);
    am_place p;
    p.heap_bytes = (draw % AM_PLACE_HEAP_PAGES) * AM_PLACE_PAGE;
    p.map_bytes = ((draw >> 32) % AM_PLACE_MAP_PAGES) * AM_PLACE_PAGE;
    return p;
}

#endif
