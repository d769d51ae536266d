// boost_fast_lib.cc: the boost-fast_pool rows' pools (boost_fast_lib.h), C++17
// over the Boost headers: a singleton_pool's pool_type per chunk size, called
// as boost::fast_pool_allocator calls its singleton pool. The calls C makes are
// extern "C"; with link-time optimisation they inline into the C containers.
// Boost's pool returns null when its user allocator does: no exception is
// involved.
#include <cstddef>
#include <new>

#include <boost/pool/detail/guard.hpp>
#include <boost/pool/detail/mutex.hpp>
#include <boost/pool/pool.hpp>

extern "C" {
#include "boost_fast_lib.h"
}

namespace {

// The shared budget, under its own lock with the mutex: each pool holds only
// its own mutex when it grows.
struct budget_lock {
    budget_lock() { BOOST_FAST_LIB_LOCK(); }
    ~budget_lock() { BOOST_FAST_LIB_UNLOCK(); }
};

struct counting_user_allocator {
    typedef std::size_t size_type;
    typedef std::ptrdiff_t difference_type;

    static char *malloc(size_type bytes) {
        boost_fast_lib_shared *s = &boost_fast_lib_singletons;
        budget_lock held;
        return static_cast<char *>(bp_budget_block(&s->big.budget, &s->refused, bytes));
    }
    static void free(char *block) {
        boost_fast_lib_shared *s = &boost_fast_lib_singletons;
        budget_lock held;
        bp_budget_block_free(&s->big.budget, &s->refused, block);
    }
};

#if AM_BOOST_FAST_MUTEX
typedef boost::details::pool::default_mutex mutex_type;
#else
typedef boost::details::pool::null_mutex mutex_type;
#endif
typedef boost::details::pool::guard<mutex_type> guard;

// singleton_pool's pool_type: the pool and its mutex in one object
struct pool_type : mutex_type, boost::pool<counting_user_allocator> {
    pool_type(std::size_t partition, std::size_t max_size)
        : boost::pool<counting_user_allocator>(partition, BP_START_SIZE, max_size) {}
    // pool::malloc()'s first two lines, through the pool's protected store()
    bool has_free() const { return !store().empty(); }
    void *pop() { return (store().malloc)(); }
};

// pool [i] has chunks of i * BP_MIN_PARTITION bytes ([0]: BP_MIN_PARTITION,
// unused), in static storage as singleton_pool's; neither copied nor moved,
// so built in place
alignas(pool_type) unsigned char storage[BP_CLASSES][sizeof(pool_type)];

inline pool_type &pool_of(std::size_t partition) {
    return *std::launder(reinterpret_cast<pool_type *>(storage[partition / BP_MIN_PARTITION]));
}

// singleton_pool::ordered_malloc(n) and free(p, n): walks of the free list
// and of the run, calls as the model's are
AM_NOINLINE void *ordered_malloc(pool_type &pool, std::size_t n) {
    guard g(pool);
    return pool.ordered_malloc(n);
}
AM_NOINLINE void free_n(pool_type &pool, void *chunks, std::size_t n) {
    guard g(pool);
    (pool.free)(chunks, n);
}

// pool::malloc() on an empty list: malloc_need_resize(), a new block
AM_NOINLINE void *malloc_grow(pool_type &pool) { return (pool.malloc)(); }

// singleton_pool::malloc() and free(p). malloc() is split where a C++
// compiler splits it: g++ 12 and clang++ 14 both inline its pop into a
// std::list<int, fast_pool_allocator<int>> and call malloc_need_resize().
// Whole, clang's link-time inliner took malloc_need_resize() into this
// function and then left the function a call from C (22 instructions an
// allocation, counted on thrash_pool_sort_list_int).
inline void *malloc_one(pool_type &pool) {
    guard g(pool);
    if (AM_LIKELY(pool.has_free())) return pool.pop();
    return malloc_grow(pool);
}
inline void free_one(pool_type &pool, void *chunk) {
    guard g(pool);
    (pool.free)(chunk);
}

} // namespace

extern "C" void boost_fast_lib_pools_build(const am_options *o) {
    for (std::size_t i = 0; i < BP_CLASSES; i++) {
        std::size_t partition = i ? i * BP_MIN_PARTITION : BP_MIN_PARTITION;
        new (storage[i]) pool_type(partition, bp_max_size(o ? o->max_chunk : 0, partition)); // neither allocates nor throws
    }
}

// the destructor purges the pool, giving its blocks back through the user allocator
extern "C" void boost_fast_lib_pools_take_down(void) {
    for (std::size_t i = BP_CLASSES; i > 0; i--) pool_of((i - 1) * BP_MIN_PARTITION).~pool_type();
}

extern "C" void boost_fast_lib_purge(void) {
    for (std::size_t i = 1; i < BP_CLASSES; i++) {
        pool_type &pool = pool_of(i * BP_MIN_PARTITION);
        guard g(pool);
        pool.purge_memory();
    }
}

// fast_pool_allocator<T>::allocate(1): malloc() on the singleton of sizeof(T)
AM_CXX_FAST_PATH void *boost_fast_lib_alloc(boost_fast_lib_heap *h, std::size_t n) {
    if (AM_UNLIKELY(n > BP_MAX_PARTITION)) return boost_fast_lib_alloc_aligned(h, n, AM_MIN_ALIGN);
    return malloc_one(pool_of(BP_OBJECT_PARTITION(n)));
}

// deallocate(p, 1): free(p), unordered
AM_CXX_FAST_PATH void boost_fast_lib_free(boost_fast_lib_heap *h, void *p, std::size_t n) {
    if (AM_UNLIKELY(p == nullptr)) return;
    if (AM_UNLIKELY(n > BP_MAX_PARTITION)) boost_fast_lib_free_aligned(h, p, n, AM_MIN_ALIGN);
    else free_one(pool_of(BP_OBJECT_PARTITION(n)), p);
}

// allocate(count): malloc() for one, ordered_malloc(count) else, on the pool
// of sizeof(T) rounded to BP_MIN_PARTITION as the model's pools are
AM_CXX_FAST_PATH void *boost_fast_lib_alloc_array(boost_fast_lib_heap *h, std::size_t count, std::size_t elem) {
    if (elem && count > SIZE_MAX / elem) return nullptr;
    if (elem > BP_MAX_PARTITION) return boost_fast_lib_alloc_aligned(h, count * elem, AM_MIN_ALIGN);
    std::size_t part = BP_ARRAY_PARTITION(elem ? elem : 1);
    pool_type &pool = pool_of(part);
    if (count <= 1) return malloc_one(pool);
    return ordered_malloc(pool, bp_chunks_for(count * elem, part));
}

// deallocate(p, count): free(p) or free(p, count), both unordered
AM_CXX_FAST_PATH void boost_fast_lib_free_array(boost_fast_lib_heap *h, void *p, std::size_t count, std::size_t elem) {
    if (!p) return;
    if (elem > BP_MAX_PARTITION) {
        boost_fast_lib_free_aligned(h, p, count * elem, AM_MIN_ALIGN);
        return;
    }
    std::size_t part = BP_ARRAY_PARTITION(elem ? elem : 1);
    pool_type &pool = pool_of(part);
    if (count <= 1) free_one(pool, p);
    else free_n(pool, p, bp_chunks_for(count * elem, part));
}
