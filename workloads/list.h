/* list.h: every workload, one line each. The order is the order of tables. */
AM_WORKLOAD(thrash_pool)
