/* list.h: every workload, one line each. The order is the order of tables. */
AM_WORKLOAD(thrash_pool)
AM_WORKLOAD(thrash_pool_sort_list_int)
AM_WORKLOAD(thrash_pool_map_list_unaligned)
AM_WORKLOAD(list_create)
AM_WORKLOAD(list_dupe)
AM_WORKLOAD(list_iterate)
AM_WORKLOAD(map_erase)
