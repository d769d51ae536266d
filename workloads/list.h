/* list.h: every workload, one line each. The order is the order of tables.
 * AM_SWEEP(name): the workload also sweeps threads or param (workload.h). */
AM_WORKLOAD(thrash_pool)
AM_WORKLOAD(thrash_pool_iter)
AM_WORKLOAD(thrash_pool_sort)
AM_WORKLOAD(vector_dupe)
AM_WORKLOAD(alloc_pair)
AM_WORKLOAD(alloc_bulk)
AM_WORKLOAD(alloc_reverse)
AM_WORKLOAD(alloc_shuffled)
AM_WORKLOAD(contention)
AM_SWEEP(contention)
