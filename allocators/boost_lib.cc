// boost_lib.cc: the boost-pool row's pools (boost_lib.h), C++17 over the Boost
// headers: a boost::pool<> per chunk size, called as boost::pool_allocator
// calls its singleton pool. The calls C makes are extern "C"; with link-time
// optimisation they inline into the C containers. Boost's pool returns null
// when its user allocator does: no exception is involved.
#include <cstddef>
#include <new>

#include <boost/pool/pool.hpp>

extern "C" {
#include "boost_lib.h"
}

namespace {

// The heap whose call is under way, whose budget the next block is counted
// against (Boost's user allocator is static functions).
thread_local boost_lib_heap *current_heap;

struct counting_user_allocator {
    typedef std::size_t size_type;
    typedef std::ptrdiff_t difference_type;

    static char *malloc(size_type bytes) {
        return static_cast<char *>(bp_budget_block(&current_heap->big.budget, &current_heap->refused, bytes));
    }
    static void free(char *block) { bp_budget_block_free(&current_heap->big.budget, &current_heap->refused, block); }
};

typedef boost::pool<counting_user_allocator> pool_type;

// pool [i] has chunks of i * BP_MIN_PARTITION bytes ([0]: BP_MIN_PARTITION, unused);
// a pool can be neither copied nor moved, so they are built in place
struct pools {
    alignas(pool_type) unsigned char storage[BP_CLASSES][sizeof(pool_type)];
    std::size_t built = 0;
    pool_type &operator[](std::size_t i) { return *std::launder(reinterpret_cast<pool_type *>(storage[i])); }
    ~pools() {
        while (built) (*this)[--built].~pool_type();
    }
};

inline pool_type &pool_of(boost_lib_heap *h, std::size_t partition) {
    current_heap = h;
    return (*static_cast<pools *>(h->pools))[partition / BP_MIN_PARTITION];
}

// Boost's two walks of the free list stay calls, as clang leaves them: gcc
// inlined ordered_free(p, n) whole, and a container's teardown walk, grown by
// it, then stayed out of line instead of inlining into the workload's run.
AM_NOINLINE void *ordered_malloc(pool_type &pool, std::size_t n) { return pool.ordered_malloc(n); }
AM_NOINLINE void ordered_free(pool_type &pool, void *chunks, std::size_t n) { pool.ordered_free(chunks, n); }

} // namespace

extern "C" void *boost_lib_pools_new(boost_lib_heap *h, const am_options *o) {
    try {
        pools *ps = new pools;
        for (; ps->built < BP_CLASSES; ps->built++) {
            std::size_t i = ps->built, partition = i ? i * BP_MIN_PARTITION : BP_MIN_PARTITION;
            new (ps->storage[i]) pool_type(partition, BP_START_SIZE, bp_max_size(o ? o->max_chunk : 0, partition));
        }
        (void)h;
        return ps;
    } catch (...) {
        return nullptr;
    }
}

extern "C" void boost_lib_pools_delete(boost_lib_heap *h) {
    current_heap = h;
    delete static_cast<pools *>(h->pools);
}

extern "C" void boost_lib_purge(boost_lib_heap *h) {
    current_heap = h;
    pools &ps = *static_cast<pools *>(h->pools);
    for (std::size_t i = 0; i < ps.built; i++) ps[i].purge_memory();
}

// pool_allocator<T>::allocate(1) of a single object: ordered_malloc(1)
AM_CXX_FAST_PATH void *boost_lib_alloc(boost_lib_heap *h, std::size_t n) {
    if (AM_UNLIKELY(n > BP_MAX_PARTITION)) return boost_lib_alloc_aligned(h, n, AM_MIN_ALIGN);
    return ordered_malloc(pool_of(h, BP_OBJECT_PARTITION(n)), 1);
}

AM_CXX_FAST_PATH void boost_lib_free(boost_lib_heap *h, void *p, std::size_t n) {
    if (AM_UNLIKELY(p == nullptr)) return;
    if (AM_UNLIKELY(n > BP_MAX_PARTITION)) bp_big_free(&h->big, p);
    else ordered_free(pool_of(h, BP_OBJECT_PARTITION(n)), p, 1);
}

// pool_allocator<T>::allocate(count): ordered_malloc(count) on the pool of
// sizeof(T), rounded to BP_MIN_PARTITION as the model's pools are
AM_CXX_FAST_PATH void *boost_lib_alloc_array(boost_lib_heap *h, std::size_t count, std::size_t elem) {
    if (elem && count > SIZE_MAX / elem) return nullptr;
    if (elem > BP_MAX_PARTITION) return boost_lib_alloc_aligned(h, count * elem, AM_MIN_ALIGN);
    std::size_t part = BP_ARRAY_PARTITION(elem ? elem : 1);
    return ordered_malloc(pool_of(h, part), bp_chunks_for(count * elem, part));
}

AM_CXX_FAST_PATH void boost_lib_free_array(boost_lib_heap *h, void *p, std::size_t count, std::size_t elem) {
    if (!p) return;
    if (elem > BP_MAX_PARTITION) {
        bp_big_free(&h->big, p);
        return;
    }
    std::size_t part = BP_ARRAY_PARTITION(elem ? elem : 1);
    ordered_free(pool_of(h, part), p, bp_chunks_for(count * elem, part));
}
