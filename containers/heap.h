/* heap.h: a Dijkstra priority queue shaped like OSRM's QueryHeap, every byte
 * from an allocmark heap. A template by inclusion:
 *
 *     #define AM_QHEAP_NAME qheap
 *     #define AM_QHEAP_KEY int32_t     (the weight; compared with <)
 *     #define AM_QHEAP_DATA uint32_t   (per-node payload, e.g. the parent)
 *     #define AM_QHEAP_HASH 1          (optional: node -> index in a hash map; default dense array)
 *     #include "heap.h"
 *
 * Parts: the inserted nodes {node, key, data, handle} in a vector; a 4-ary
 * min-heap of {key, index} entries (ties broken by index), each move writing
 * the entry's position back into its node's handle; and node -> index storage.
 * Dense storage is an array of node_count indices, valid only where the
 * inserted node it points at names the same node, so clear never touches it.
 * Hash storage is chained buckets with one allocation per entry, as the
 * std::unordered_map that OSRM's profile blamed; clear frees them all.
 *
 * One heap belongs to the thread that created it: it must not be copied into
 * another thread (OSRM's TBB copied a heap whose pool was thread-local, so two
 * threads shared one pool). There is no copy function on purpose; with
 * AM_DEBUG=1 every operation checks the calling thread. Functions that can fail
 * return AM_QHEAP_OOM and leave the heap as it was. */
#include <string.h>
#include "allocator.h"

#if !defined(AM_QHEAP_NAME) || !defined(AM_QHEAP_KEY) || !defined(AM_QHEAP_DATA)
#error "define AM_QHEAP_NAME, AM_QHEAP_KEY and AM_QHEAP_DATA before including heap.h"
#endif

#ifndef AM_QHEAP_COMMON
#define AM_QHEAP_COMMON
#define AM_QHEAP_CAT_(a, b) a##_##b
#define AM_QHEAP_CAT(a, b) AM_QHEAP_CAT_(a, b)
#define AM_QHEAP_OOM 1
#define AM_QHEAP_REMOVED UINT32_MAX /* the handle of a node taken by delete_min */
#ifndef AM_DEBUG
#define AM_DEBUG 0
#endif
/* heap.c: an address unique to the calling thread, and what a debug build
 * calls when a heap is used from a thread other than its creator (abort by
 * default; tests replace it to see that the check fires). */
const void *am_thread_token(void);
extern void (*am_qheap_wrong_thread)(const char *operation);
#endif

#ifndef AM_QHEAP_HASH
#define AM_QHEAP_HASH 0
#endif

#define Q AM_QHEAP_NAME
#define QK AM_QHEAP_KEY
#define QD AM_QHEAP_DATA
#define QF(f) AM_QHEAP_CAT(Q, f)
#define QNODE QF(node)
#define QENTRY QF(entry)

typedef struct QNODE {
    uint32_t node;
    uint32_t handle; /* position in the heap array, AM_QHEAP_REMOVED once deleted */
    QK key;
    QD data;
} QNODE;

typedef struct QENTRY {
    QK key;
    uint32_t index; /* into the inserted nodes */
} QENTRY;

#define AM_VEC_NAME QF(nodes)
#define AM_VEC_T QNODE
#include "vector.h"
#define AM_VEC_NAME QF(entries)
#define AM_VEC_T QENTRY
#include "vector.h"

#if AM_QHEAP_HASH
typedef struct QF(slot) {
    struct QF(slot) *next;
    uint32_t node, index;
} QF(slot);
#endif

typedef struct Q {
    QF(nodes) inserted;
    QF(entries) heap;
#if AM_QHEAP_HASH
    QF(slot) **buckets; /* a power of two of them; NULL until the first insert */
    size_t bucket_count, slots;
    unsigned shift;     /* 32 - log2(bucket_count) */
#else
    uint32_t *index;    /* node -> index into inserted, node_count of them */
#endif
    uint32_t node_count;
    am_heap *mem;
#if AM_DEBUG
    const void *owner;
#endif
} Q;

#if AM_DEBUG
#define AM_QHEAP_OWNED(q, op) \
    do { if ((q)->owner != am_thread_token()) am_qheap_wrong_thread(op); } while (0)
#else
#define AM_QHEAP_OWNED(q, op) ((void)0)
#endif

/* ---- node -> index storage ---- */
#if AM_QHEAP_HASH
AM_INLINE size_t QF(bucket)(const Q *q, uint32_t node) {
    return (size_t)((uint32_t)(node * 0x9E3779B1u) >> q->shift); /* Fibonacci hashing */
}

AM_INLINE QNODE *QF(find)(const Q *q, uint32_t node) {
    if (!q->slots) return NULL;
    for (const QF(slot) *s = q->buckets[QF(bucket)(q, node)]; s; s = s->next)
        if (s->node == node) return &q->inserted.data[s->index];
    return NULL;
}

/* Doubles the buckets past one entry a bucket (std::unordered_map's default
 * load factor). If the new array cannot be had the old one is kept. */
AM_SLOW_PATH int QF(rehash)(Q *q) {
    size_t count = q->bucket_count ? q->bucket_count * 2 : 16;
    unsigned shift = q->bucket_count ? q->shift - 1 : 28;
    QF(slot) **b = (QF(slot) **)am_alloc_array(q->mem, count, sizeof *b);
    if (!b) return q->bucket_count ? 0 : AM_QHEAP_OOM;
    memset(b, 0, count * sizeof *b);
    for (size_t i = 0; i < q->bucket_count; i++) {
        QF(slot) *s = q->buckets[i];
        while (s) {
            QF(slot) *next = s->next;
            size_t k = (size_t)((uint32_t)(s->node * 0x9E3779B1u) >> shift);
            s->next = b[k];
            b[k] = s;
            s = next;
        }
    }
    if (q->buckets) am_free_array(q->mem, q->buckets, q->bucket_count, sizeof *b);
    q->buckets = b;
    q->bucket_count = count;
    q->shift = shift;
    return 0;
}

AM_INLINE int QF(store)(Q *q, uint32_t node, uint32_t index) {
    if (AM_UNLIKELY(q->slots >= q->bucket_count) && QF(rehash)(q)) return AM_QHEAP_OOM;
    QF(slot) *s = (QF(slot) *)am_alloc(q->mem, sizeof *s);
    if (AM_UNLIKELY(!s)) return AM_QHEAP_OOM;
    size_t k = QF(bucket)(q, node);
    s->node = node;
    s->index = index;
    s->next = q->buckets[k];
    q->buckets[k] = s;
    q->slots++;
    return 0;
}

/* Frees every entry, visiting only the buckets of inserted nodes. */
AM_INLINE void QF(forget_all)(Q *q) {
    for (size_t i = 0; i < q->inserted.size && q->slots; i++) {
        QF(slot) **b = &q->buckets[QF(bucket)(q, q->inserted.data[i].node)];
        QF(slot) *s = *b;
        *b = NULL;
        while (s) {
            QF(slot) *next = s->next;
            am_free(q->mem, s, sizeof *s);
            q->slots--;
            s = next;
        }
    }
}
#else
AM_INLINE QNODE *QF(find)(const Q *q, uint32_t node) {
    uint32_t i = q->index[node];
    if (i < q->inserted.size && q->inserted.data[i].node == node) return &q->inserted.data[i];
    return NULL;
}

AM_INLINE int QF(store)(Q *q, uint32_t node, uint32_t index) {
    q->index[node] = index;
    return 0;
}

AM_INLINE void QF(forget_all)(Q *q) { (void)q; }
#endif

/* ---- creation ---- */

/* node ids are below node_count (dense storage sizes its array by it; hash
 * storage ignores it). Returns AM_QHEAP_OOM if the array cannot be had. */
AM_INLINE int QF(init)(Q *q, am_heap *h, uint32_t node_count) {
    memset(q, 0, sizeof *q);
    q->mem = h;
    q->node_count = node_count;
    QF(nodes_init)(&q->inserted, h);
    QF(entries_init)(&q->heap, h);
#if AM_DEBUG
    q->owner = am_thread_token();
#endif
#if !AM_QHEAP_HASH
    if (node_count) {
        q->index = (uint32_t *)am_alloc_array(h, node_count, sizeof(uint32_t));
        if (!q->index) return AM_QHEAP_OOM;
        /* any value is safe (find checks the back-reference); zero keeps
         * memory checkers quiet */
        memset(q->index, 0, (size_t)node_count * sizeof(uint32_t));
    }
#endif
    return 0;
}

/* Empties the heap for the next query, keeping its arrays. */
AM_INLINE void QF(clear)(Q *q) {
    AM_QHEAP_OWNED(q, "clear");
    QF(forget_all)(q);
    q->inserted.size = 0;
    q->heap.size = 0;
}

/* Returns every byte; safe after a failed init. */
AM_INLINE void QF(destroy)(Q *q) {
    AM_QHEAP_OWNED(q, "destroy");
    QF(forget_all)(q);
#if AM_QHEAP_HASH
    if (q->buckets) am_free_array(q->mem, q->buckets, q->bucket_count, sizeof *q->buckets);
    q->buckets = NULL;
    q->bucket_count = 0;
#else
    if (q->index) am_free_array(q->mem, q->index, q->node_count, sizeof(uint32_t));
    q->index = NULL;
#endif
    QF(nodes_destroy)(&q->inserted);
    QF(entries_destroy)(&q->heap);
}

/* ---- queries ---- */

/* The node's record if it was inserted since the last clear, else NULL (OSRM's
 * GetHeapNodeIfWasInserted: one lookup for Dijkstra's relaxation). */
AM_INLINE QNODE *QF(get)(const Q *q, uint32_t node) {
    AM_QHEAP_OWNED(q, "get");
    return QF(find)(q, node);
}

AM_INLINE int QF(was_inserted)(const Q *q, uint32_t node) { return QF(get)(q, node) != NULL; }

/* node must have been inserted */
AM_INLINE int QF(was_removed)(const Q *q, uint32_t node) {
    return QF(get)(q, node)->handle == AM_QHEAP_REMOVED;
}
AM_INLINE QK QF(key)(const Q *q, uint32_t node) { return QF(get)(q, node)->key; }
AM_INLINE QD *QF(data)(const Q *q, uint32_t node) { return &QF(get)(q, node)->data; }

AM_INLINE int QF(empty)(const Q *q) { return q->heap.size == 0; }
AM_INLINE size_t QF(size)(const Q *q) { return q->heap.size; }
AM_INLINE size_t QF(inserted_count)(const Q *q) { return q->inserted.size; }

/* the heap must not be empty */
AM_INLINE uint32_t QF(min)(const Q *q) { return q->inserted.data[q->heap.data[0].index].node; }
AM_INLINE QK QF(min_key)(const Q *q) { return q->heap.data[0].key; }

/* ---- the 4-ary heap ---- */
AM_INLINE int QF(less)(QENTRY a, QENTRY b) {
    return a.key < b.key || (!(b.key < a.key) && a.index < b.index);
}

AM_INLINE void QF(sift_up)(Q *q, size_t pos, QENTRY e) {
    QENTRY *h = q->heap.data;
    QNODE *nodes = q->inserted.data;
    while (pos > 0) {
        size_t parent = (pos - 1) / 4;
        if (!QF(less)(e, h[parent])) break;
        h[pos] = h[parent];
        nodes[h[pos].index].handle = (uint32_t)pos;
        pos = parent;
    }
    h[pos] = e;
    nodes[e.index].handle = (uint32_t)pos;
}

AM_INLINE void QF(sift_down)(Q *q, size_t pos, QENTRY e) {
    QENTRY *h = q->heap.data;
    QNODE *nodes = q->inserted.data;
    size_t n = q->heap.size;
    for (;;) {
        size_t first = 4 * pos + 1;
        if (first >= n) break;
        size_t end = first + 4 < n ? first + 4 : n;
        size_t best = first;
        for (size_t c = first + 1; c < end; c++)
            if (QF(less)(h[c], h[best])) best = c;
        if (!QF(less)(h[best], e)) break;
        h[pos] = h[best];
        nodes[h[pos].index].handle = (uint32_t)pos;
        pos = best;
    }
    h[pos] = e;
    nodes[e.index].handle = (uint32_t)pos;
}

/* Both arrays grow (doubling) before anything is written, so a failure leaves
 * the heap as it was. */
AM_SLOW_PATH int QF(grow)(Q *q) {
    size_t want = q->inserted.cap ? q->inserted.cap * 2 : 16;
    if (q->inserted.size == q->inserted.cap && QF(nodes_reserve)(&q->inserted, want))
        return AM_QHEAP_OOM;
    want = q->heap.cap ? q->heap.cap * 2 : 16;
    if (q->heap.size == q->heap.cap && QF(entries_reserve)(&q->heap, want)) return AM_QHEAP_OOM;
    return 0;
}

/* node must not have been inserted since the last clear. */
AM_INLINE int QF(insert)(Q *q, uint32_t node, QK key, QD data) {
    AM_QHEAP_OWNED(q, "insert");
    if (AM_UNLIKELY(q->inserted.size == q->inserted.cap || q->heap.size == q->heap.cap) &&
        QF(grow)(q))
        return AM_QHEAP_OOM;
    uint32_t index = (uint32_t)q->inserted.size;
    if (QF(store)(q, node, index)) return AM_QHEAP_OOM;
    QNODE *n = &q->inserted.data[q->inserted.size++];
    n->node = node;
    n->key = key;
    n->data = data;
    QENTRY e;
    e.key = key;
    e.index = index;
    QF(sift_up)(q, q->heap.size++, e);
    return 0;
}

/* node must be in the heap (inserted, not removed) and key not above its key. */
AM_INLINE void QF(decrease_key)(Q *q, uint32_t node, QK key) {
    QNODE *n = QF(get)(q, node);
    n->key = key;
    QENTRY e;
    e.key = key;
    e.index = (uint32_t)(n - q->inserted.data);
    QF(sift_up)(q, n->handle, e);
}

/* Removes the entry with the least key (then least index); returns its node,
 * whose record stays (was_removed answers 1). The heap must not be empty. */
AM_INLINE uint32_t QF(delete_min)(Q *q) {
    AM_QHEAP_OWNED(q, "delete_min");
    QNODE *top = &q->inserted.data[q->heap.data[0].index];
    top->handle = AM_QHEAP_REMOVED;
    QENTRY last = q->heap.data[--q->heap.size];
    if (q->heap.size) QF(sift_down)(q, 0, last);
    return top->node;
}

#undef Q
#undef QK
#undef QD
#undef QF
#undef QNODE
#undef QENTRY
#undef AM_QHEAP_NAME
#undef AM_QHEAP_KEY
#undef AM_QHEAP_DATA
#undef AM_QHEAP_HASH
