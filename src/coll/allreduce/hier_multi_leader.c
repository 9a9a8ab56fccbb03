/* Allreduce, node-aware with every local rank a leader: split by local rank.
 * Paper: [qian-phd] chapter 5's multi-leader idea (several leaders per node use several
 * connections and cores at once) applied to a reduction, as [rabenseifner04]'s reduce-scatter
 * then allgather split across the two levels (the "multi-leader" allreduce of MVAPICH2 and of
 * Open MPI han).
 * Steps: (1) node-team reduce_scatter: local rank i gets slice i of its node's sum (slices of
 * the vector among the L local ranks, coll/reduce.h; one-sided on the node), in its place in
 * the receive buffer; (2) group-team allreduce of slice i among the local ranks i of every node
 * (all L groups at once, each with the group team's own selection); (3) node-team allgatherv
 * of the slices, in place.
 * Bytes on the network per rank: those of an allreduce of m / L among the N nodes (hier: the
 * leader alone carries an allreduce of m); shared memory: a reduce-scatter and an allgather of m.
 * Fold order: each node's ranks in order, then the nodes in order (as hier): the same bits on
 * every rank, but RCOLL_REPRODUCIBLE=1 excludes it, and a non-commutative operation needs every
 * node's ranks consecutive in the team.
 * When it wins: large vectors across nodes with several ranks per node, where one leader's link
 * and core carry hier's whole network part (docs/tuning.md, "Reductions"). */
#include "coll/hier.h"
#include "coll/reduce.h"

static rcoll_status_t allreduce_hier_multi_leader(rcoll_args_t *a)
{
    rcoll_hier_t *h = a->team->hier;
    int L = h->node->size, me = h->node->rank;
    size_t es = rcoll_dtype_size(a->dtype);
    rcoll_reduce_lists_t l;
    if (!rcoll_reduce_lists(a, &l, "allreduce"))
        return RCOLL_ERR_NOMEM;
    size_t *counts = l.v, *bytes = l.v + L, *displs = l.v + 2 * L;
    for (int i = 0; i < L; i++) {
        counts[i] = rcoll_slice_n(a->count, L, i);
        bytes[i] = counts[i] * es;
        displs[i] = rcoll_slice_lo(a->count, L, i) * es;
    }
    char *mine = (char *)a->recvbuf + displs[me];
    rcoll_status_t first = RCOLL_OK;
    bool inplace = a->sendbuf == a->recvbuf;
    /* In place the node's slice lands at the buffer's start (the input was all of it). */
    HIER_STEP(a, h->node,
              rcoll_reduce_scatter(h->node, inplace ? RCOLL_IN_PLACE : a->sendbuf, inplace ? a->recvbuf : mine,
                                   counts, a->dtype, a->op),
              first);
    if (inplace && displs[me])
        memmove(mine, a->recvbuf, bytes[me]);
    HIER_STEP(a, h->group, rcoll_allreduce(h->group, RCOLL_IN_PLACE, mine, counts[me], a->dtype, a->op), first);
    HIER_STEP(a, h->node, rcoll_allgatherv(h->node, RCOLL_IN_PLACE, bytes[me], a->recvbuf, bytes, displs), first);
    return first;
}

static const char *not_for(const rcoll_args_t *a)
{
    return rcoll_composed_fold_not_for(a, rcoll_composed_even_not_for(a), rcoll_op_commutative(a->op));
}

const rcoll_algo_t rcoll_allreduce_hier_multi_leader = {
    .name = "hier_multi_leader",
    .coll = RCOLL_COLL_ALLREDUCE,
    .summary = "[qian-phd] multi-leader: node reduce_scatter, every local rank allreduces its slice "
               "across nodes, node allgatherv",
    .run = allreduce_hier_multi_leader,
    .not_for = not_for,
    .reorders = true,
    .fallback = &rcoll_allreduce_reduce_scatter_allgather, /* the flat choice for large vectors */
    .limits = "teams spanning nodes with the same number (> 1) of ranks on every node; not with "
              "RCOLL_REPRODUCIBLE=1; a non-commutative operation only where every node's ranks are "
              "consecutive",
    .composed = true,
};
