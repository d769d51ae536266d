/* row_unit.c: the code of one row but the cell's main, as a single translation
 * unit: the platform layer, the allocator front end, the containers, every
 * workload, the shared engines and, last, the row's own strategy (AM_STRATEGY_C,
 * "<source>.c", which the build passes with AM_STRATEGY and AM_STRATEGY_H). The
 * Makefile and CMakeLists.txt both compile this file, once per row and variant
 * (measured, AM_STATS=0; counted, AM_STATS=1); a cell is this unit plus
 * cell_main.c, the timing loop, which stays a unit of its own, and the trace
 * reader (recorder/trace_read.c, which cell_main.c calls for --trace), one
 * object a build: in this unit its code moved the compiler's inlining budget,
 * and so the code of every row. It is not a place for code: only #include lines.
 *
 * Why one unit: each compiler process costs a start-up (clang: 0.14 s), and
 * one unit a row builds three times faster than one object a source. Slow
 * paths stay out of line (AM_NOINLINE), so the unit does not pull them into
 * the fast paths; file-scope names carry their file's name, so that two
 * workloads' statics cannot clash.
 *
 * The workload files are listed here and the workloads in
 * workloads/workloads.def (their order is the order of the tables). C cannot
 * derive #include lines from a macro list, so the two are kept in step by
 * tests/python/test_build.py, which names the exact line to add: a new
 * workload is its file, its line in workloads.def and its #include below. */

/* A partner's unit (AM_PARTNER_BUILD, partner.h): every global name
 * prefixed, and the table the cell reads last. Macros only: no system header
 * comes before platform_posix.c's _GNU_SOURCE. */
#if AM_PARTNER_BUILD
#include "partner_names.h"
#endif

/* first: platform_posix.c defines _GNU_SOURCE before any system header. Each
 * platform file is empty on the other OS, so both are always listed. */
#include "../platform/platform_posix.c"
#include "../platform/platform_win32.c"

#include "../allocators/allocator.c"
#include "../containers/heap.c"

#include "../workloads/alloc_bulk.c"
#include "../workloads/alloc_pair.c"
#include "../workloads/alloc_reverse.c"
#include "../workloads/alloc_shuffled.c"
#include "../workloads/churn_traverse.c"
#include "../workloads/contention.c"
#include "../workloads/list_create.c"
#include "../workloads/list_create_drop.c"
#include "../workloads/list_dupe.c"
#include "../workloads/list_iterate.c"
#include "../workloads/map_erase.c"
#include "../workloads/map_of_vectors.c"
#include "../workloads/mmap_pressure.c"
#include "../workloads/producer_consumer.c"
#include "../workloads/query_heap.c"
#include "../workloads/registry.c"
#include "../workloads/size_mix.c"
#include "../workloads/thrash_pool.c"
#include "../workloads/thrash_pool_iter.c"
#include "../workloads/thrash_pool_map_list_unaligned.c"
#include "../workloads/thrash_pool_sort.c"
#include "../workloads/thrash_pool_sort_list_int.c"
#include "../workloads/trace.c"
#include "../workloads/utilization.c"
#include "../workloads/vector_dupe.c"
#include "../workloads/vector_of_lists.c"
#include "../workloads/vector_of_lists_drop.c"

/* engines that several strategies build on, and the counting wrapper of
 * AM_STATS builds (empty in measured ones) */
#include "../allocators/boost_pool.c"
#include "../allocators/counting.c"

#ifndef AM_STRATEGY_C
#error "the build must define AM_STRATEGY_C, the row's strategy source (pool.c ...)"
#endif
#include AM_STRATEGY_C

#if AM_PARTNER_BUILD
#include "partner_row.c"
#endif
