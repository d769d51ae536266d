/* map.h: an ordered map (red-black tree) whose nodes come one at a time from
 * an allocmark heap: std::map with an allocator. A template by inclusion:
 *
 *     #define AM_MAP_NAME map_il
 *     #define AM_MAP_K int
 *     #define AM_MAP_V list_ic
 *     #define AM_MAP_LESS(a, b) ((a) < (b))              (optional; this is the default)
 *     #define AM_MAP_VALUE_INIT(vp, heap) list_ic_init(vp, heap)  (optional; default: zero)
 *     #define AM_MAP_VALUE_DESTROY(vp) list_ic_destroy(vp)      (optional; default: nothing)
 *     #include "map.h"
 *
 * gives map_il, map_il_node, map_il_init, map_il_find_or_insert, ... A node
 * never moves while it is in the map (erase relinks, it does not copy keys), so
 * node and value pointers stay valid until that node is erased. Insertion
 * returns NULL when the heap is out of memory and leaves the map as it was;
 * nothing else allocates. Not thread-safe. */
#include <string.h>
#include "allocator.h"

#if !defined(AM_MAP_NAME) || !defined(AM_MAP_K) || !defined(AM_MAP_V)
#error "define AM_MAP_NAME, AM_MAP_K and AM_MAP_V before including map.h"
#endif

#ifndef AM_MAP_COMMON
#define AM_MAP_COMMON
#define AM_MAP_CAT_(a, b) a##_##b
#define AM_MAP_CAT(a, b) AM_MAP_CAT_(a, b)
#endif

#ifndef AM_MAP_LESS
#define AM_MAP_LESS(a, b) ((a) < (b))
#endif
#ifndef AM_MAP_VALUE_INIT
#define AM_MAP_VALUE_INIT(vp, heap) memset((vp), 0, sizeof *(vp))
#endif
#ifndef AM_MAP_VALUE_DESTROY
#define AM_MAP_VALUE_DESTROY(vp) ((void)(vp))
#endif

#define M AM_MAP_NAME
#define MK AM_MAP_K
#define MV AM_MAP_V
#define MF(f) AM_MAP_CAT(M, f)
#define MN MF(node)

/* Three links and a colour, as libstdc++'s _Rb_tree_node: a node asks the
 * allocator for about what std::map's would. */
typedef struct MN {
    struct MN *parent, *left, *right;
    int red;
    MK key;
    MV value;
} MN;

typedef struct M {
    MN *root;
    size_t size;
    am_heap *heap;
} M;

AM_INLINE void MF(init)(M *m, am_heap *h) {
    m->root = NULL;
    m->size = 0;
    m->heap = h;
}

/* Right subtrees by recursion, left spines by iteration: the stack is the
 * tree's height, at most 2 log2(n). */
AM_SLOW_PATH void MF(free_subtree)(M *m, MN *n) {
    while (n) {
        MF(free_subtree)(m, n->right);
        MN *left = n->left;
        AM_MAP_VALUE_DESTROY(&n->value);
        am_free(m->heap, n, sizeof(MN));
        n = left;
    }
}

/* Frees every node (destroying every value); the map stays usable. */
AM_INLINE void MF(clear)(M *m) {
    MF(free_subtree)(m, m->root);
    m->root = NULL;
    m->size = 0;
}

AM_INLINE void MF(destroy)(M *m) { MF(clear)(m); }

AM_INLINE size_t MF(size)(const M *m) { return m->size; }

/* ---- ordered iteration ---- */
AM_INLINE MN *MF(first)(const M *m) {
    MN *n = m->root;
    if (n) while (n->left) n = n->left;
    return n;
}

AM_INLINE MN *MF(last)(const M *m) {
    MN *n = m->root;
    if (n) while (n->right) n = n->right;
    return n;
}

AM_INLINE MN *MF(next)(const MN *n) {
    if (n->right) {
        n = n->right;
        while (n->left) n = n->left;
        return (MN *)n;
    }
    MN *p = n->parent;
    while (p && n == p->right) { n = p; p = p->parent; }
    return p;
}

AM_INLINE MN *MF(prev)(const MN *n) {
    if (n->left) {
        n = n->left;
        while (n->right) n = n->right;
        return (MN *)n;
    }
    MN *p = n->parent;
    while (p && n == p->left) { n = p; p = p->parent; }
    return p;
}

/* ---- lookup: one comparison a level, as std::map::lower_bound ---- */

/* The first node whose key is not less than k; NULL if there is none. */
AM_INLINE MN *MF(lower_bound)(const M *m, MK k) {
    MN *n = m->root, *cand = NULL;
    while (n) {
        if (!AM_MAP_LESS(n->key, k)) { cand = n; n = n->left; }
        else n = n->right;
    }
    return cand;
}

AM_INLINE MN *MF(find)(const M *m, MK k) {
    MN *n = MF(lower_bound)(m, k);
    return n && !AM_MAP_LESS(k, n->key) ? n : NULL;
}

/* A pointer to k's value, NULL if k is absent. */
AM_INLINE MV *MF(get)(const M *m, MK k) {
    MN *n = MF(find)(m, k);
    return n ? &n->value : NULL;
}

/* ---- rebalancing: out of line, as libstdc++ keeps _Rb_tree_insert_and_rebalance ---- */
AM_INLINE void MF(rotate_left)(M *m, MN *x) {
    MN *y = x->right;
    x->right = y->left;
    if (y->left) y->left->parent = x;
    y->parent = x->parent;
    if (!x->parent) m->root = y;
    else if (x == x->parent->left) x->parent->left = y;
    else x->parent->right = y;
    y->left = x;
    x->parent = y;
}

AM_INLINE void MF(rotate_right)(M *m, MN *x) {
    MN *y = x->left;
    x->left = y->right;
    if (y->right) y->right->parent = x;
    y->parent = x->parent;
    if (!x->parent) m->root = y;
    else if (x == x->parent->right) x->parent->right = y;
    else x->parent->left = y;
    y->right = x;
    x->parent = y;
}

/* z is a new red leaf: repair a red parent by recolouring up the tree, then
 * at most two rotations. */
AM_SLOW_PATH void MF(insert_fixup)(M *m, MN *z) {
    MN *p;
    while ((p = z->parent) != NULL && p->red) {
        MN *g = p->parent; /* p is red, so not the root */
        if (p == g->left) {
            MN *u = g->right;
            if (u && u->red) {
                p->red = u->red = 0;
                g->red = 1;
                z = g;
                continue;
            }
            if (z == p->right) { MF(rotate_left)(m, p); z = p; p = z->parent; }
            p->red = 0;
            g->red = 1;
            MF(rotate_right)(m, g);
        } else {
            MN *u = g->left;
            if (u && u->red) {
                p->red = u->red = 0;
                g->red = 1;
                z = g;
                continue;
            }
            if (z == p->left) { MF(rotate_right)(m, p); z = p; p = z->parent; }
            p->red = 0;
            g->red = 1;
            MF(rotate_left)(m, g);
        }
    }
    m->root->red = 0;
}

/* ---- insertion ---- */

/* map[k]: a pointer to k's value, inserting k with a fresh value
 * (AM_MAP_VALUE_INIT) when absent. *inserted (if not NULL) says which.
 * NULL when out of memory; the map is then unchanged. */
AM_INLINE MV *MF(find_or_insert)(M *m, MK k, int *inserted) {
    MN *n = m->root, *parent = NULL, *cand = NULL;
    int left = 0;
    while (n) {
        parent = n;
        if (!AM_MAP_LESS(n->key, k)) { cand = n; n = n->left; left = 1; }
        else { n = n->right; left = 0; }
    }
    if (cand && !AM_MAP_LESS(k, cand->key)) {
        if (inserted) *inserted = 0;
        return &cand->value;
    }
    MN *z = (MN *)am_alloc(m->heap, sizeof(MN));
    if (AM_UNLIKELY(!z)) return NULL;
    z->key = k;
    AM_MAP_VALUE_INIT(&z->value, m->heap);
    z->left = z->right = NULL;
    z->parent = parent;
    z->red = 1;
    if (!parent) m->root = z;
    else if (left) parent->left = z;
    else parent->right = z;
    MF(insert_fixup)(m, z);
    m->size++;
    if (inserted) *inserted = 1;
    return &z->value;
}

/* ---- erasure ---- */

/* Puts v (possibly NULL) where u was, as u's parent's child. */
AM_INLINE void MF(transplant)(M *m, MN *u, MN *v) {
    if (!u->parent) m->root = v;
    else if (u == u->parent->left) u->parent->left = v;
    else u->parent->right = v;
    if (v) v->parent = u->parent;
}

/* x (possibly NULL, child of xp) is short one black: push the deficit up or
 * fix it with rotations. x's sibling exists, since its side has black height
 * at least one. */
AM_SLOW_PATH void MF(erase_fixup)(M *m, MN *x, MN *xp) {
    while (x != m->root && (!x || !x->red)) {
        if (x == xp->left) {
            MN *w = xp->right;
            if (w->red) {
                w->red = 0;
                xp->red = 1;
                MF(rotate_left)(m, xp);
                w = xp->right;
            }
            if ((!w->left || !w->left->red) && (!w->right || !w->right->red)) {
                w->red = 1;
                x = xp;
                xp = x->parent;
            } else {
                if (!w->right || !w->right->red) {
                    w->left->red = 0;
                    w->red = 1;
                    MF(rotate_right)(m, w);
                    w = xp->right;
                }
                w->red = xp->red;
                xp->red = 0;
                if (w->right) w->right->red = 0;
                MF(rotate_left)(m, xp);
                x = m->root;
            }
        } else {
            MN *w = xp->left;
            if (w->red) {
                w->red = 0;
                xp->red = 1;
                MF(rotate_right)(m, xp);
                w = xp->left;
            }
            if ((!w->left || !w->left->red) && (!w->right || !w->right->red)) {
                w->red = 1;
                x = xp;
                xp = x->parent;
            } else {
                if (!w->left || !w->left->red) {
                    w->right->red = 0;
                    w->red = 1;
                    MF(rotate_left)(m, w);
                    w = xp->left;
                }
                w->red = xp->red;
                xp->red = 0;
                if (w->left) w->left->red = 0;
                MF(rotate_right)(m, xp);
                x = m->root;
            }
        }
    }
    if (x) x->red = 0;
}

/* Unlinks z, destroys its value and frees it; returns the node after it. A
 * node with two children is replaced by its successor node (relinked, not
 * copied), so no other node's address changes. */
AM_INLINE MN *MF(erase_node)(M *m, MN *z) {
    MN *after = MF(next)(z);
    MN *x, *xp;
    int removed_red = z->red;
    if (!z->left) {
        x = z->right;
        xp = z->parent;
        MF(transplant)(m, z, z->right);
    } else if (!z->right) {
        x = z->left;
        xp = z->parent;
        MF(transplant)(m, z, z->left);
    } else {
        MN *y = after; /* the leftmost node of z's right subtree */
        removed_red = y->red;
        x = y->right;
        if (y->parent == z) {
            xp = y;
        } else {
            xp = y->parent;
            MF(transplant)(m, y, y->right);
            y->right = z->right;
            y->right->parent = y;
        }
        MF(transplant)(m, z, y);
        y->left = z->left;
        y->left->parent = y;
        y->red = z->red;
    }
    if (!removed_red) MF(erase_fixup)(m, x, xp);
    m->size--;
    AM_MAP_VALUE_DESTROY(&z->value);
    am_free(m->heap, z, sizeof(MN));
    return after;
}

/* Returns 1 if k was there (and is now erased), 0 if it was absent. */
AM_INLINE int MF(erase)(M *m, MK k) {
    MN *n = MF(find)(m, k);
    if (!n) return 0;
    MF(erase_node)(m, n);
    return 1;
}

#undef M
#undef MK
#undef MV
#undef MF
#undef MN
#undef AM_MAP_NAME
#undef AM_MAP_K
#undef AM_MAP_V
#undef AM_MAP_LESS
#undef AM_MAP_VALUE_INIT
#undef AM_MAP_VALUE_DESTROY
