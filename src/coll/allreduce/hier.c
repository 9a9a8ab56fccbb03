/* Allreduce, node-aware: reduce inside each node, allreduce among the leaders, release inside
 * each node (the leader form of [qian-phd] ch. 4's SMP-aware collectives applied to a
 * reduction, as MVAPICH2's and Open MPI han's two-level allreduce).
 * Steps: (1) node-team reduce to the leader (local index 0; one-sided on the node), (2) the
 * leaders' allreduce of the node results (the group-0 team's own selection), (3) node-team
 * bcast of the result from the leader.
 * Bytes on the network: one vector per node into the leaders' allreduce, instead of every
 * rank's (gather_all sends P vectors across, reduce_scatter_allgather 2 (P-1)/P of one per
 * rank).
 * Fold order: each node's ranks in order, then the nodes in order -- the same on every rank
 * (the leaders compute it, the release copies it), but not the flat algorithms' order of
 * single ranks: RCOLL_REPRODUCIBLE=1 excludes it, and a non-commutative operation needs every
 * node's ranks consecutive in the team.
 * When it wins: teams spanning nodes with several ranks per node, where the network is the cost
 * (docs/tuning.md, "Reductions"). */
#include "coll/hier.h"
#include "coll/reduce.h"

static rcoll_status_t allreduce_hier(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    rcoll_status_t first = RCOLL_OK;
    bool leader = h->lidx_of[a->rank] == 0;
    /* A leader's node result lands in its receive buffer (its own input may be there). */
    const void *send = leader && a->sendbuf == a->recvbuf ? RCOLL_IN_PLACE : a->sendbuf;
    HIER_STEP(a, h->node, rcoll_reduce(h->node, send, leader ? a->recvbuf : NULL, a->count, a->dtype, a->op, 0),
              first);
    if (leader)
        HIER_STEP(a, h->group, rcoll_allreduce(h->group, RCOLL_IN_PLACE, a->recvbuf, a->count, a->dtype, a->op),
                  first);
    HIER_STEP(a, h->node, rcoll_bcast(h->node, a->recvbuf, a->bytes, 0), first);
    return first;
}

static const char *allreduce_hier_not_for(const rcoll_args_t *a)
{
    /* Nodes with different numbers of ranks: not yet (tests/mpi's test_mpi_basic at np=5 with
     * RCOLL_PPN=2 and the node_arrival barrier over UCX tcp failed in a later node-aware
     * allgatherv, "read from rank 2: UCX reports the peer gone", in 3 of 6 runs; not
     * understood, see docs/reductions.md). */
    return rcoll_composed_fold_not_for(a, rcoll_composed_even_not_for(a), rcoll_op_commutative(a->op));
}

const rcoll_algo_t rcoll_allreduce_hier = {
    .name = "hier",
    .coll = RCOLL_COLL_ALLREDUCE,
    .summary = "[qian-phd] node-aware: reduce in each node, allreduce among the leaders, bcast in "
               "each node",
    .run = allreduce_hier,
    .not_for = allreduce_hier_not_for,
    .reorders = true,
    .fallback = &rcoll_allreduce_gather_all,
    .limits = "teams spanning nodes with the same number (> 1) of ranks on every node; not with "
              "RCOLL_REPRODUCIBLE=1; a non-commutative operation only where every node's ranks are "
              "consecutive",
    .composed = true,
};
