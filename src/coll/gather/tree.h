/* The k-port spanning binomial tree of [qian-phd], 3.4.1 (a (k+1)-nomial tree), for any team size
 * and any root, in ranks relative to the root (u = (rank - root) mod P).
 *
 * With radix r = k+1: a rank u > 0 whose lowest non-zero base-r digit is c at place d has the
 * parent u - c*d; its children are u + i*d' for every place d' < d and i = 1..k (those < P);
 * the root's children are i*d' for every d' < P. The subtree of u > 0 is the contiguous range
 * [u, u + min(d, P - u)): blocks of a subtree are contiguous in relative order, so every tree
 * message is one contiguous run of blocks (two runs of the user's buffer where it wraps past
 * rank P-1). The root sends (or receives) k messages of P/(k+1) blocks each at the first step,
 * and so on: ceil(log_{k+1} P) steps. */
#ifndef RCOLL_COLL_GATHER_TREE_H
#define RCOLL_COLL_GATHER_TREE_H

#include "coll/coll.h"

typedef struct {
    int size, radix, root;
    int me;       /* my relative rank */
    int parent;   /* relative, -1 at the root */
    int span;     /* ranks in my subtree: relative me .. me+span-1 */
    int nchild;
    int *child;   /* relative ranks of my children, nearest first */
} gs_tree_t;

/* Builds my node of the tree of `a` (radix from RCOLL_KPORT); the child list goes into
 * `child_store` (room for size-1 ints). */
void gs_tree_init(gs_tree_t *t, const rcoll_args_t *a, int *child_store);
/* Ranks in the subtree of relative rank u. */
int gs_tree_span(const gs_tree_t *t, int u);
/* Team rank of relative rank u. */
int gs_tree_abs(const gs_tree_t *t, int u);

/* A run of `count` blocks of `m` bytes, from relative rank `first` on, in a buffer laid out by
 * team rank: up to two pieces (it wraps past rank P-1). Returns the number of pieces. */
int gs_tree_pieces(const gs_tree_t *t, int first, int count, size_t m, size_t off[2], size_t len[2]);

#endif
