/* Reduce, node-aware: reduce inside each node, reduce among the leaders to the root's node,
 * hand the result to the root (the leader form of [qian-phd] ch. 4's SMP-aware collectives
 * applied to a reduction, as MVAPICH2's and Open MPI han's two-level reduce).
 * Steps: (1) node-team reduce to the leader (local index 0; one-sided on the node, each node's
 * own selection); (2) the leaders' reduce (the group-0 team's own selection) to the leader of the
 * root's node; (3) on the root's node only, where the root is not its leader: a node-team
 * scatterv that gives the root the result and the others nothing.
 * Bytes on the network: one vector per node (gather_reduce sends every rank's).
 * Fold order: each node's ranks in order, then the nodes in order: RCOLL_REPRODUCIBLE=1
 * excludes it (coll.h reorders), and a non-commutative operation needs every node's ranks
 * consecutive in the team.
 * When it wins: teams spanning nodes with several ranks per node, from medium vectors on, where
 * the network is the cost (docs/tuning.md, "Reductions"). */
#include "coll/hier.h"
#include "coll/reduce.h"

/* Step (3): the leader's `result` to the root, on the root's node. */
static rcoll_status_t to_root(rcoll_args_t *a, rcoll_hier_t *h, const void *result, rcoll_status_t *first)
{
    int L = h->node->size, lroot = h->lidx_of[a->root];
    rcoll_reduce_lists_t l;
    if (!rcoll_reduce_lists(a, &l, "reduce"))
        return RCOLL_ERR_NOMEM;
    for (int i = 0; i < L; i++) {
        l.v[i] = i == lroot ? a->bytes : 0;
        l.v[L + i] = 0;
    }
    bool root = a->rank == a->root;
    HIER_STEP(a, h->node,
              rcoll_scatterv(h->node, result, l.v, l.v + L, root ? a->recvbuf : NULL, root ? a->bytes : 0, 0),
              *first);
    return *first;
}

static rcoll_status_t reduce_hier(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    rcoll_status_t first = RCOLL_OK;
    bool leader = h->lidx_of[a->rank] == 0, root = a->rank == a->root;
    bool root_node = t->node_of[a->rank] == t->node_of[a->root];
    /* Where a leader holds its node's result: the root's receive buffer, or scratch. */
    void *held = NULL;
    if (leader) {
        held = root ? a->recvbuf : rcoll_reduce_tmp(a, RCOLL_TMP_REDUCE, a->bytes, "reduce");
        if (!held)
            return RCOLL_ERR_NOMEM;
    }
    const void *send = leader && a->sendbuf == held ? RCOLL_IN_PLACE : a->sendbuf;
    HIER_STEP(a, h->node, rcoll_reduce(h->node, send, held, a->count, a->dtype, a->op, 0), first);
    if (leader)
        HIER_STEP(a, h->group,
                  rcoll_reduce(h->group, root_node ? RCOLL_IN_PLACE : held, held, a->count, a->dtype, a->op,
                               t->node_of[a->root]),
                  first);
    if (root_node && h->lidx_of[a->root] != 0)
        return to_root(a, h, held, &first);
    return first;
}

static const char *reduce_hier_not_for(const rcoll_args_t *a)
{
    return rcoll_composed_fold_not_for(a, rcoll_composed_not_for(a), rcoll_op_commutative(a->op));
}

const rcoll_algo_t rcoll_reduce_hier = {
    .name = "hier",
    .coll = RCOLL_COLL_REDUCE,
    .summary = "[qian-phd] node-aware: reduce in each node, reduce among the leaders to the root's "
               "node, then to the root",
    .run = reduce_hier,
    .not_for = reduce_hier_not_for,
    .reorders = true,
    .fallback = &rcoll_reduce_gather_reduce,
    .limits = "teams spanning nodes with several ranks on some; not with RCOLL_REPRODUCIBLE=1; a "
              "non-commutative operation only where every node's ranks are consecutive",
    .composed = true,
};
