/* types.h: the plain types every strategy's header needs (options, counters,
 * statistics). Strategy headers include this; containers and workloads include
 * allocator.h, which brings in the chosen strategy. */
#ifndef AM_TYPES_H
#define AM_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include "platform.h"

#ifndef AM_STATS
#define AM_STATS 0
#endif

/* The fuzzer's self-test (make fuzz-selftest) proves the fuzzer finds bugs by
 * building rows with deliberate ones. They reach allocator code only through
 * AM_FUZZ_HOOK(site, value, context), which in every other build is the value;
 * the bugs are written in fuzz/inject.h alone, which -DAM_FUZZ_INJECT=n brings
 * in and which does not compile in a build that could be measured. */
#ifdef AM_FUZZ_INJECT
#include "../fuzz/inject.h"
#else
#define AM_FUZZ_HOOK(site, value, context) (value)
#endif

typedef struct am_options {
    size_t limit;         /* most bytes the heap may take from the system; 0 = no limit */
    size_t block_size;    /* fixed-size pools: the block size (0 = the first request's) */
    size_t initial_bytes; /* first chunk or buffer size (0 = the strategy's default) */
    size_t max_chunk;     /* growth cap for chunked strategies (0 = none) */
    void *buffer;         /* caller-supplied first buffer (monotonic's "local") */
    size_t buffer_size;
    const char *path;     /* backing file, for file-mapped strategies */
} am_options;

typedef struct am_counters {
    uint64_t requested; /* bytes asked for, in all */
    size_t live;        /* bytes asked for and not yet freed */
    size_t peak;        /* the most `live` has been */
    uint64_t allocs, frees;
} am_counters;

typedef struct am_stats {
    uint64_t bytes_requested;
    size_t bytes_live, bytes_peak;
    size_t bytes_reserved, reserved_peak;
    uint64_t allocs, frees;
} am_stats;

void am_options_default(am_options *o);

#endif
