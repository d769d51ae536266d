// pmr.cc: the pmr rows' resource (pmr.h), C++17. The calls C makes are
// extern "C" and reach the resource through its final type, so that its
// do_allocate is called directly; with link-time optimisation they inline into
// the C containers. No exception leaves this file: out of memory is NULL.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <new>

extern "C" {
#include "pmr.h"
}

namespace {

// The upstream: the default resource, its bytes counted and bounded by the
// heap's limit. Reached once per chunk the resource takes, never per block.
//
// The pool resources also keep their own tables here (the table of pools,
// each pool's list of chunks, the list of big blocks, synchronized_pool_resource's
// per-thread sets of pools), asked with pointer alignment where the memory of
// blocks is asked with AM_MIN_ALIGN or more (pmr_alloc rounds every block to
// it). A table is counted but never refused: libstdc++ 12's pool does not
// survive a refused list of chunks (replenish swallows the exception, then
// takes a block from the end of a list that may be empty), nor a refusal
// while a thread's pools move to the shared set as it exits. So the memory
// of blocks leaves room under the limit for a table to grow: twice the
// largest table yet (a list of chunks grows by half in libstdc++, the list of
// big blocks twofold as a std::vector does; the first table, of pools, is the
// largest new one). Reserved bytes pass the limit only where the tables asked
// between two chunks come to more than that (two lists growing at once, a
// thread's exit in pmr-sync-pool), or where the limit is below the table of
// pools the heap takes when it is made; every block is refused then.
class counting_upstream final : public std::pmr::memory_resource {
public:
    explicit counting_upstream(pmr_heap *h) : heap_(h), next_(std::pmr::get_default_resource()) {}

private:
    static bool is_table(std::size_t align) { return AM_PMR_KIND != AM_PMR_MONOTONIC && align < AM_MIN_ALIGN; }

    // room kept for the tables to grow (the monotonic resource keeps none)
    std::size_t table_room() const { return AM_PMR_KIND == AM_PMR_MONOTONIC ? 0 : 2 * heap_->largest_table; }

    void *do_allocate(std::size_t n, std::size_t align) override {
        // no object is larger than PTRDIFF_MAX: refused here, since a
        // sanitizer's operator new ends the process on such a size instead of
        // throwing (a huge request grows past it by the resource's header)
        if (n > static_cast<std::size_t>(PTRDIFF_MAX)) throw std::bad_alloc();
        std::size_t need = n + table_room(), limit = heap_->limit;
        if (limit != 0 && !is_table(align) && (need > limit || heap_->reserved > limit - need)) throw std::bad_alloc();
        void *p = next_->allocate(n, align);
        heap_->reserved += n;
        if (heap_->reserved > heap_->reserved_peak) heap_->reserved_peak = heap_->reserved;
        if (is_table(align) && n > heap_->largest_table) heap_->largest_table = n;
        return p;
    }
    void do_deallocate(void *p, std::size_t n, std::size_t align) override {
        heap_->reserved -= n;
        next_->deallocate(p, n, align);
    }
    bool do_is_equal(const std::pmr::memory_resource &o) const noexcept override { return this == &o; }

    pmr_heap *heap_;
    std::pmr::memory_resource *next_;
};

#if AM_PMR_KIND == AM_PMR_MONOTONIC
using resource_base = std::pmr::monotonic_buffer_resource;
#elif AM_PMR_KIND == AM_PMR_POOL
using resource_base = std::pmr::unsynchronized_pool_resource;
#elif AM_PMR_KIND == AM_PMR_SYNC_POOL
using resource_base = std::pmr::synchronized_pool_resource;
#else
#error "AM_PMR_KIND: AM_PMR_MONOTONIC, AM_PMR_POOL or AM_PMR_SYNC_POOL"
#endif

// the upstream first, since the resource keeps a pointer to it; the resource's
// type is final, so a call through it is not virtual
struct heap_state {
    counting_upstream up;
    struct final_resource final : resource_base {
        explicit final_resource(std::pmr::memory_resource *u) : resource_base(u) {}
        // what allocate() and deallocate() do (they add no work of their
        // own), named so that the call is direct: through allocate() it is
        // virtual until the optimizer sees the final type, too late for
        // clang's inliner
        void *take(std::size_t n, std::size_t align) { return resource_base::do_allocate(n, align); }
        void give(void *p, std::size_t n, std::size_t align) { resource_base::do_deallocate(p, n, align); }
    } res;
    explicit heap_state(pmr_heap *h) : up(h), res(&up) {}
};

inline heap_state::final_resource *res_of(pmr_heap *h) {
    return &static_cast<heap_state *>(h->resource)->res;
}

} // namespace

extern "C" void *pmr_resource_new(pmr_heap *h, const am_options *o) {
    (void)o;
    try {
        return new heap_state(h);
    } catch (...) {
        return nullptr;
    }
}

extern "C" void pmr_resource_delete(void *r) { delete static_cast<heap_state *>(r); }

extern "C" void pmr_release(pmr_heap *h) { res_of(h)->release(); }

#if AM_PMR_KIND == AM_PMR_MONOTONIC
// the arena aligns each block as it is asked: sizes and alignments go as they are
inline std::size_t block_align(std::size_t align) { return align; }
inline std::size_t block_bytes(std::size_t n, std::size_t) { return n; }
#else
// libstdc++'s pools cut a chunk into blocks of their class's size one after
// another, so that a block is aligned only as far as that size allows: the
// 24-byte class gives 8-aligned blocks whatever alignment was asked. A size
// rounded up to a multiple of the alignment lands in a class that is a
// multiple of it too (16, 32, 48, 64, 80 ... 768, 1024, 1536, 2048, 3072, then
// powers of two); AM_MIN_ALIGN at least, so that the chunks of blocks are
// asked with it and the upstream tells them from the tables.
inline std::size_t block_align(std::size_t align) { return align > AM_MIN_ALIGN ? align : AM_MIN_ALIGN; }
inline std::size_t block_bytes(std::size_t n, std::size_t align) { return (n + align - 1) & ~(align - 1); }
#endif

AM_CXX_FAST_PATH void *pmr_alloc(pmr_heap *h, std::size_t n) {
    // a size this large would wrap when rounded (nothing is that large)
    if (AM_PMR_KIND != AM_PMR_MONOTONIC && n > SIZE_MAX / 2) return nullptr;
    try {
        return res_of(h)->take(block_bytes(n, AM_MIN_ALIGN), AM_MIN_ALIGN);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

AM_CXX_FAST_PATH void pmr_free(pmr_heap *h, void *p, std::size_t n) {
    if (p) res_of(h)->give(p, block_bytes(n, AM_MIN_ALIGN), AM_MIN_ALIGN);
    // monotonic_buffer_resource's deallocate does nothing: with no use of p
    // left, the compiler deletes the walk that frees (the harness's, a list's
    // teardown), and the row would skip work every other row of a block does.
    // An empty asm of p keeps the walk and costs no instruction.
    __asm__ __volatile__("" : : "r"(p));
}

// No request above SIZE_MAX / 2 reaches the resource: libstdc++ 12's
// monotonic_buffer_resource answered allocate(SIZE_MAX - 100, 4096) with a
// pointer (its chunk size wraps), where every smaller alignment throws.
extern "C" void *pmr_alloc_aligned(pmr_heap *h, std::size_t n, std::size_t align) {
    if (n > SIZE_MAX / 2) return nullptr;
    align = block_align(align);
    try {
        return res_of(h)->allocate(block_bytes(n, align), align);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

extern "C" void pmr_free_aligned(pmr_heap *h, void *p, std::size_t n, std::size_t align) {
    align = block_align(align);
    if (p) res_of(h)->deallocate(p, block_bytes(n, align), align);
}
