/* The k-port binomial tree: see tree.h. */
#include "coll/gather/tree.h"

/* Place value of the lowest non-zero base-`radix` digit of u > 0. */
static long lowest_place(long u, int radix)
{
    long d = 1;
    while ((u / d) % radix == 0)
        d *= radix;
    return d;
}

int gs_tree_span(const gs_tree_t *t, int u)
{
    if (u == 0)
        return t->size;
    long d = lowest_place(u, t->radix), left = (long)t->size - u;
    return (int)(d < left ? d : left);
}

int gs_tree_abs(const gs_tree_t *t, int u)
{
    return (int)(((long)u + t->root) % t->size);
}

void gs_tree_init(gs_tree_t *t, const rcoll_args_t *a, int *child_store)
{
    int k = a->team->ctx->cfg.kport;
    t->size = a->size;
    t->radix = (k < 1 ? 1 : k) + 1;
    t->root = a->root;
    t->me = (a->rank - a->root + a->size) % a->size;
    t->span = gs_tree_span(t, t->me);
    t->child = child_store;
    t->nchild = 0;
    long top = t->me ? lowest_place(t->me, t->radix) : (long)t->size;
    t->parent = t->me ? (int)(t->me - ((t->me / top) % t->radix) * top) : -1;
    for (long d = 1; d < top; d *= t->radix)
        for (int i = 1; i < t->radix; i++) {
            long c = t->me + i * d;
            if (c >= t->size)
                return; /* farther children (larger i or d) are out of range too */
            t->child[t->nchild++] = (int)c;
        }
}

int gs_tree_pieces(const gs_tree_t *t, int first, int count, size_t m, size_t off[2], size_t len[2])
{
    int abs = gs_tree_abs(t, first);
    int head = count < t->size - abs ? count : t->size - abs;
    off[0] = (size_t)abs * m;
    len[0] = (size_t)head * m;
    if (head == count)
        return 1;
    off[1] = 0;
    len[1] = (size_t)(count - head) * m;
    return 2;
}
