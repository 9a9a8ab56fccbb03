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
 * bracketing is the tree's (RCOLL_REPRODUCIBLE=1 excludes the tree algorithms). */
#ifndef RCOLL_COLL_REDUCE_TREE_H
#define RCOLL_COLL_REDUCE_TREE_H

#include "coll/reduce.h"

/* Before the rank enters: scratch for its children's partials and its own, advertised. */
rcoll_status_t rcoll_fanin_prepare(rcoll_args_t *a, const char *coll);
/* The fan-in to the tree's root (a->root): there the fold lands in `out`. */
rcoll_status_t rcoll_fanin(rcoll_args_t *a, void *out, const char *coll);

#endif
