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
class counting_upstream final : public std::pmr::memory_resource {
public:
    explicit counting_upstream(pmr_heap *h) : heap_(h), next_(std::pmr::get_default_resource()) {}

private:
    void *do_allocate(std::size_t n, std::size_t align) override {
        // no object is larger than PTRDIFF_MAX: refused here, since a
        // sanitizer's operator new ends the process on such a size instead of
        // throwing (a huge request grows past it by the resource's header)
        if (n > static_cast<std::size_t>(PTRDIFF_MAX)) throw std::bad_alloc();
        if (heap_->limit != 0 && (n > heap_->limit || heap_->reserved > heap_->limit - n)) throw std::bad_alloc();
        void *p = next_->allocate(n, align);
        heap_->reserved += n;
        if (heap_->reserved > heap_->reserved_peak) heap_->reserved_peak = heap_->reserved;
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

AM_CXX_FAST_PATH void *pmr_alloc(pmr_heap *h, std::size_t n) {
    try {
        return res_of(h)->take(n, AM_MIN_ALIGN);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

AM_CXX_FAST_PATH void pmr_free(pmr_heap *h, void *p, std::size_t n) {
    if (p) res_of(h)->give(p, n, AM_MIN_ALIGN);
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
    try {
        return res_of(h)->allocate(n, align);
    } catch (const std::bad_alloc &) {
        return nullptr;
    }
}

extern "C" void pmr_free_aligned(pmr_heap *h, void *p, std::size_t n, std::size_t align) {
    if (p) res_of(h)->deallocate(p, n, align);
}
