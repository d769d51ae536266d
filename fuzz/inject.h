/* inject.h: the deliberate bugs of the fuzzer's self-test (make fuzz-selftest,
 * tests/run_check.py), the only place they are written. allocators/types.h
 * includes this file when the self-test builds a row with -DAM_FUZZ_INJECT=n;
 * each AM_FUZZ_HOOK(site, value, context) in the allocators then becomes
 * AM_FUZZ_<site>, which is the value except for the one bug chosen. Not for
 * any other build: it stops the compile unless the build is the ASan counting
 * build the fuzz targets use, which is never measured. */
#ifndef AM_FUZZ_INJECT_H
#define AM_FUZZ_INJECT_H

#include "sanitize.h"

#if !AM_ASAN || !AM_STATS
#error "AM_FUZZ_INJECT: deliberate bugs, for the fuzzer's self-test build only (AddressSanitizer, AM_STATS=1)"
#endif

#define AM_FUZZ_HOOK(site, value, context) AM_FUZZ_##site(value, context)

/* 1, fast_pool (boost_pool.c's segregate): chunks linked AM_MIN_ALIGN bytes
 * short of their partition, so neighbouring blocks overlap */
#if AM_FUZZ_INJECT == 1
#define AM_FUZZ_chunk_step(partition, n) ((partition) > AM_MIN_ALIGN ? (partition) - AM_MIN_ALIGN : (partition))
#else
#define AM_FUZZ_chunk_step(partition, n) (partition)
#endif

/* 2, concurrent_pool (its free): a block in slot 7 of its chunk is pushed on
 * the free list twice, so it is handed out twice */
#if AM_FUZZ_INJECT == 2
#define AM_FUZZ_push_again(no, slot) (((slot) & 7) == 7)
#else
#define AM_FUZZ_push_again(no, slot) (no)
#endif

#endif
