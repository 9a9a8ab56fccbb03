/* The fan-in of the tree reductions (reduce and allreduce knomial): the k-port binomial tree of
 * [qian-phd] 3.4.1 (coll/gather/tree.h; radix RCOLL_KPORT + 1), walked leaves to root. A rank
 * waits for its children's partial results, folds its own vector with them, and sends the
 * result to its parent as one message: inline in the signal line when tiny, into the parent's
 * inbox below the zero-copy threshold, else single copy into the parent's scratch (advertised
 * by the rank's prepare); child i of a parent lands in slot i, so children never wait for each
 * other. A leaf sends its input as it is.
 * Fold order: a subtree is a contiguous range of ranks relative to the tree's root, its children
 * in increasing order, so a rank folds own op (child 1 op (child 2 ...)): rank order from the
 * tree's root on -- a non-commutative operation needs the tree rooted at rank 0, and the
 * bracketing is the tree's (RCOLL_REPRODUCIBLE=1 excludes the tree algorithms).
 * Pipelined (the xhc style): vectors from 64 KB, where ranks do not share cores, go up in parts
 * of 16 KB, each its own message (signal step i for part i, at its place in the parent's slot):
 * a rank folds part i of its children's partials and sends it up while they send part i + 1,
 * so the tree's levels overlap instead of following each other (about levels + parts part
 * times instead of levels whole vectors). Where ranks share cores each part would cost a wait
 * (often a context switch): one message there. A part's signal line may already tell a later
 * part's length when it is seen, so only a whole-vector message is checked against the
 * expected length. */
#ifndef RCOLL_COLL_REDUCE_TREE_H
#define RCOLL_COLL_REDUCE_TREE_H

#include "coll/reduce.h"

/* Before the rank enters: scratch for its children's partials and its own, advertised. */
rcoll_status_t rcoll_fanin_prepare(rcoll_args_t *a, const char *coll);
/* The fan-in to the tree's root (a->root): there the fold lands in `out`. */
rcoll_status_t rcoll_fanin(rcoll_args_t *a, void *out, const char *coll);
/* Bytes of one part of the fan-in (the whole vector where it does not go in parts). */
size_t rcoll_fanin_part(const rcoll_args_t *a);
/* The same, and at the root `done` after each part of `out` is final (step i, its place). */
rcoll_status_t rcoll_fanin_parts(rcoll_args_t *a, void *out, const char *coll,
                                 rcoll_status_t (*done)(rcoll_args_t *a, unsigned step, size_t off,
                                                        size_t len));

#endif
