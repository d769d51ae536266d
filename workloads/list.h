/* list.h: every workload, one line each. The order is the order of tables.
 * AM_SWEEP(name): the workload also sweeps threads or param (workload.h). */
AM_WORKLOAD(thrash_pool)
AM_WORKLOAD(contention)
AM_SWEEP(contention)
