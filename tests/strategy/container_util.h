/* container_util.h: what the container tests share: heaps with and without a
 * byte limit, and the live-byte count that must return to zero. Not a test. */
#ifndef AM_CONTAINER_UTIL_H
#define AM_CONTAINER_UTIL_H

#include "check.h"
#include "workload.h"

static am_heap *new_heap(void) {
    am_options o;
    am_options_default(&o);
    return am_create(&o);
}

/* A heap that runs out of memory soon, under the least limit of the list
 * above `above`. A strategy may refuse a limit it cannot meet (a fixed first
 * chunk larger than it), so the limit grows until one is accepted. */
static am_heap *new_limited_heap_above(size_t above, size_t *limit_out) {
    static const size_t limits[] = {4096, 16384, 65536, 262144, 1u << 20, 0};
    for (int i = 0; limits[i]; i++) {
        if (limits[i] <= above) continue;
        am_options o;
        am_options_default(&o);
        o.limit = limits[i];
        am_heap *h = am_create(&o);
        if (h) {
            if (limit_out) *limit_out = limits[i];
            return h;
        }
    }
    return NULL;
}

static am_heap *new_limited_heap(size_t *limit_out) { return new_limited_heap_above(0, limit_out); }

static size_t live_bytes(const am_heap *h) {
    am_stats s;
    am_get_stats(h, &s);
    return s.bytes_live;
}

#endif
