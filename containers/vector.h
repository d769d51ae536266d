/* vector.h: a contiguous, growable array whose every byte comes from an
 * allocmark heap: std::vector with an allocator. A template by inclusion, so
 * the element type and its comparison are known to the compiler:
 *
 *     #define AM_VEC_NAME vec_int
 *     #define AM_VEC_T int
 *     #define AM_VEC_LESS(a, b) ((a) < (b))   (optional: enables _sort)
 *     #include "vector.h"
 *
 * gives vec_int, vec_int_init, vec_int_push_back, vec_int_sort, ... Functions
 * that can fail return 0 on success and AM_ERR_OOM when the heap is out of
 * memory, leaving the vector as it was. */
#include <string.h>
#include "allocator.h"

#ifndef AM_VEC_NAME
#error "define AM_VEC_NAME and AM_VEC_T before including vector.h"
#endif

#ifndef AM_VEC_COMMON
#define AM_VEC_COMMON
#define AM_VEC_CAT_(a, b) a##_##b
#define AM_VEC_CAT(a, b) AM_VEC_CAT_(a, b)
#define AM_VEC_OOM 1
#endif

#define V AM_VEC_NAME
#define T AM_VEC_T
#define VF(f) AM_VEC_CAT(V, f)

typedef struct V {
    T *data;
    size_t size, cap;
    am_heap *heap;
} V;

AM_INLINE void VF(init)(V *v, am_heap *h) {
    v->data = NULL;
    v->size = v->cap = 0;
    v->heap = h;
}

AM_INLINE void VF(destroy)(V *v) {
    if (v->data) am_free_array(v->heap, v->data, v->cap, sizeof(T));
    v->data = NULL;
    v->size = v->cap = 0;
}

/* Growth goes through the strategy's array realloc, which grows in place where
 * it can and allocates, copies and frees where it cannot. */
AM_INLINE int VF(reserve)(V *v, size_t n) {
    if (n <= v->cap) return 0;
    if (n > SIZE_MAX / sizeof(T)) return AM_VEC_OOM;
    T *p = (T *)am_realloc_array(v->heap, v->data, v->cap, n, sizeof(T));
    if (!p) return AM_VEC_OOM;
    v->data = p;
    v->cap = n;
    return 0;
}

AM_SLOW_PATH int VF(grow_for_push)(V *v) {
    return VF(reserve)(v, v->cap ? v->cap * 2 : 1);
}

AM_INLINE int VF(push_back)(V *v, T x) {
    if (AM_UNLIKELY(v->size == v->cap) && VF(grow_for_push)(v)) return AM_VEC_OOM;
    v->data[v->size++] = x;
    return 0;
}

AM_INLINE void VF(pop_back)(V *v) { v->size--; }

/* New elements are value-initialised (zero), as std::vector::resize does. */
AM_INLINE int VF(resize)(V *v, size_t n) {
    if (n > v->cap) {
        size_t want = v->cap * 2 > n ? v->cap * 2 : n;
        if (VF(reserve)(v, want)) return AM_VEC_OOM;
    }
    if (n > v->size) memset(v->data + v->size, 0, (n - v->size) * sizeof(T));
    v->size = n;
    return 0;
}

AM_INLINE void VF(clear)(V *v) { v->size = 0; }

/* dst becomes a copy of src with storage from heap h (dst uninitialised before). */
AM_INLINE int VF(copy)(V *dst, const V *src, am_heap *h) {
    VF(init)(dst, h);
    if (!src->size) return 0;
    if (VF(reserve)(dst, src->size)) return AM_VEC_OOM;
    memcpy(dst->data, src->data, src->size * sizeof(T));
    dst->size = src->size;
    return 0;
}

#ifdef AM_VEC_LESS
/* Introsort: median-of-three quicksort, heapsort past 2*log2(n) levels,
 * insertion sort below 16 elements. Not stable (neither is std::sort). */
AM_INLINE void VF(insertion_sort)(T *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        T x = a[i];
        size_t j = i;
        while (j > 0 && AM_VEC_LESS(x, a[j - 1])) { a[j] = a[j - 1]; j--; }
        a[j] = x;
    }
}

AM_INLINE void VF(sift_down)(T *a, size_t root, size_t n) {
    T x = a[root];
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) break;
        if (child + 1 < n && AM_VEC_LESS(a[child], a[child + 1])) child++;
        if (!AM_VEC_LESS(x, a[child])) break;
        a[root] = a[child];
        root = child;
    }
    a[root] = x;
}

AM_INLINE void VF(heap_sort)(T *a, size_t n) {
    for (size_t i = n / 2; i-- > 0;) VF(sift_down)(a, i, n);
    for (size_t end = n; end-- > 1;) {
        T t = a[0]; a[0] = a[end]; a[end] = t;
        VF(sift_down)(a, 0, end);
    }
}

AM_INLINE void VF(intro_sort)(T *a, size_t n, unsigned depth) {
    while (n > 16) {
        if (depth-- == 0) { VF(heap_sort)(a, n); return; }
        /* median of three to a[0], then Hoare partition around it */
        size_t mid = n / 2;
        T t;
        if (AM_VEC_LESS(a[mid], a[0])) { t = a[mid]; a[mid] = a[0]; a[0] = t; }
        if (AM_VEC_LESS(a[n - 1], a[mid])) { t = a[n - 1]; a[n - 1] = a[mid]; a[mid] = t;
            if (AM_VEC_LESS(a[mid], a[0])) { t = a[mid]; a[mid] = a[0]; a[0] = t; } }
        t = a[0]; a[0] = a[mid]; a[mid] = t;
        T pivot = a[0];
        size_t i = 0, j = n;
        for (;;) {
            do { i++; } while (i < n && AM_VEC_LESS(a[i], pivot));
            do { j--; } while (AM_VEC_LESS(pivot, a[j]));
            if (i >= j) break;
            t = a[i]; a[i] = a[j]; a[j] = t;
        }
        t = a[0]; a[0] = a[j]; a[j] = t;
        /* recurse into the smaller side, loop on the larger: O(log n) stack */
        if (j < n - j - 1) {
            VF(intro_sort)(a, j, depth);
            a += j + 1;
            n -= j + 1;
        } else {
            VF(intro_sort)(a + j + 1, n - j - 1, depth);
            n = j;
        }
    }
    VF(insertion_sort)(a, n);
}

AM_INLINE void VF(sort)(V *v) {
    unsigned depth = 0;
    for (size_t n = v->size; n > 1; n >>= 1) depth += 2;
    VF(intro_sort)(v->data, v->size, depth);
}
#endif

#undef V
#undef T
#undef VF
#undef AM_VEC_NAME
#undef AM_VEC_T
#undef AM_VEC_LESS
