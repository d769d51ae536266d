/* list.h: a doubly linked list whose nodes come one at a time from an
 * allocmark heap: std::list with an allocator. A template by inclusion:
 *
 *     #define AM_LIST_NAME list_int
 *     #define AM_LIST_T int
 *     #define AM_LIST_LESS(a, b) ((a) < (b))   (optional: enables _sort)
 *     #include "list.h"
 *
 * gives list_int, list_int_node, list_int_init, list_int_push_back, ... Nodes
 * are NULL-terminated at both ends (no sentinel inside the struct), so a list
 * may be moved by plain assignment, e.g. when it is a map value or a vector
 * element. Functions that can fail return AM_LIST_OOM (or NULL) and leave the
 * list as it was. Not thread-safe; not an intrusive list. */
#include <string.h>
#include "allocator.h"

#ifndef AM_LIST_NAME
#error "define AM_LIST_NAME and AM_LIST_T before including list.h"
#endif

#ifndef AM_LIST_COMMON
#define AM_LIST_COMMON
#define AM_LIST_CAT_(a, b) a##_##b
#define AM_LIST_CAT(a, b) AM_LIST_CAT_(a, b)
#define AM_LIST_OOM 1
#endif

#define L AM_LIST_NAME
#define LT AM_LIST_T
#define LF(f) AM_LIST_CAT(L, f)
#define LN LF(node)

typedef struct LN {
    struct LN *next, *prev;
    LT value;
} LN;

typedef struct L {
    LN *head, *tail;
    size_t size;
    am_heap *heap;
} L;

AM_INLINE void LF(init)(L *l, am_heap *h) {
    l->head = l->tail = NULL;
    l->size = 0;
    l->heap = h;
}

/* Frees every node; the list stays usable (empty, same heap). */
AM_INLINE void LF(clear)(L *l) {
    LN *n = l->head;
    while (n) {
        LN *next = n->next;
        am_free(l->heap, n, sizeof(LN));
        n = next;
    }
    l->head = l->tail = NULL;
    l->size = 0;
}

AM_INLINE void LF(destroy)(L *l) { LF(clear)(l); }

AM_INLINE int LF(push_back)(L *l, LT x) {
    LN *n = (LN *)am_alloc(l->heap, sizeof(LN));
    if (AM_UNLIKELY(!n)) return AM_LIST_OOM;
    n->value = x;
    n->next = NULL;
    n->prev = l->tail;
    if (l->tail) l->tail->next = n;
    else l->head = n;
    l->tail = n;
    l->size++;
    return 0;
}

AM_INLINE int LF(push_front)(L *l, LT x) {
    LN *n = (LN *)am_alloc(l->heap, sizeof(LN));
    if (AM_UNLIKELY(!n)) return AM_LIST_OOM;
    n->value = x;
    n->prev = NULL;
    n->next = l->head;
    if (l->head) l->head->prev = n;
    else l->tail = n;
    l->head = n;
    l->size++;
    return 0;
}

/* Inserts x before pos (pos NULL: at the end, like std::list::end()).
 * Returns the new node, NULL when out of memory. */
AM_INLINE LN *LF(insert_before)(L *l, LN *pos, LT x) {
    if (!pos) return LF(push_back)(l, x) ? NULL : l->tail;
    LN *n = (LN *)am_alloc(l->heap, sizeof(LN));
    if (AM_UNLIKELY(!n)) return NULL;
    n->value = x;
    n->next = pos;
    n->prev = pos->prev;
    if (pos->prev) pos->prev->next = n;
    else l->head = n;
    pos->prev = n;
    l->size++;
    return n;
}

/* Unlinks and frees n; returns the node after it (NULL at the end). */
AM_INLINE LN *LF(erase)(L *l, LN *n) {
    LN *next = n->next;
    if (n->prev) n->prev->next = next;
    else l->head = next;
    if (next) next->prev = n->prev;
    else l->tail = n->prev;
    l->size--;
    am_free(l->heap, n, sizeof(LN));
    return next;
}

/* pop_* on an empty list is a caller error, as in std::list. */
AM_INLINE void LF(pop_front)(L *l) { LF(erase)(l, l->head); }
AM_INLINE void LF(pop_back)(L *l) { LF(erase)(l, l->tail); }

AM_INLINE size_t LF(size)(const L *l) { return l->size; }
AM_INLINE LN *LF(first)(const L *l) { return l->head; }
AM_INLINE LN *LF(last)(const L *l) { return l->tail; }
AM_INLINE LN *LF(next)(const LN *n) { return n->next; }
AM_INLINE LN *LF(prev)(const LN *n) { return n->prev; }

/* dst (uninitialised before) becomes a deep copy of src, its nodes from heap
 * h. On failure dst is left empty and valid, and every node taken is freed. */
AM_INLINE int LF(copy)(L *dst, const L *src, am_heap *h) {
    LF(init)(dst, h);
    for (const LN *n = src->head; n; n = n->next) {
        if (LF(push_back)(dst, n->value)) {
            LF(clear)(dst);
            return AM_LIST_OOM;
        }
    }
    return 0;
}

#ifdef AM_LIST_LESS
/* Merges two NULL-terminated chains linked by `next` only. Ties take from a,
 * which holds the earlier elements: that is what keeps the sort stable. */
AM_INLINE LN *LF(merge_chains)(LN *a, LN *b) {
    LN *first = NULL, **t = &first;
    while (a && b) {
        if (AM_LIST_LESS(b->value, a->value)) { *t = b; b = b->next; }
        else { *t = a; a = a->next; }
        t = &(*t)->next;
    }
    *t = a ? a : b;
    return first;
}

/* Stable merge sort that relinks nodes, as std::list::sort: O(n log n), no
 * allocation. bins[i] holds a sorted run of 2^i nodes, all of them earlier in
 * the input than any run in a lower bin; prev links are rebuilt at the end. */
AM_INLINE void LF(sort)(L *l) {
    if (l->size < 2) return;
    LN *bins[64];
    int used = 0;
    LN *p = l->head;
    while (p) {
        LN *carry = p;
        p = p->next;
        carry->next = NULL;
        int i = 0;
        for (; i < used && bins[i]; i++) {
            carry = LF(merge_chains)(bins[i], carry);
            bins[i] = NULL;
        }
        if (i == used) used++;
        bins[i] = carry;
    }
    LN *all = NULL;
    for (int i = 0; i < used; i++)
        if (bins[i]) all = LF(merge_chains)(bins[i], all);
    LN *prev = NULL;
    l->head = all;
    for (LN *n = all; n; n = n->next) {
        n->prev = prev;
        prev = n;
    }
    l->tail = prev;
}
#endif

#undef L
#undef LT
#undef LF
#undef LN
#undef AM_LIST_NAME
#undef AM_LIST_T
#undef AM_LIST_LESS
