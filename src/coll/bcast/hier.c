/* Bcast, node-aware leader form: the root's node first, then the leaders, then the other nodes.
 * Paper: [qian-phd] chapter 4 (SMP-aware collectives: shared memory inside a node, only
 * leaders on the network).
 * Steps: (1) on the root's node, a node-team bcast from the root (its leader gets the message
 * with the others); (2) the leaders (local index 0) bcast among themselves from the root's
 * node's leader (the group-0 team's own selection); (3) on every other node, a node-team bcast
 * from the leader.
 * Bytes on the network: those of a bcast of m among N nodes instead of P ranks.
 * When it wins: teams spanning nodes with several ranks per node (docs/tuning.md). */
#include "coll/hier.h"

static rcoll_status_t bcast_hier(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    rcoll_status_t first = RCOLL_OK;
    void *buf = a->recvbuf;
    int rnode = t->node_of[a->root], node = t->node_of[a->rank];
    if (node == rnode)
        HIER_STEP(a, h->node, rcoll_bcast(h->node, buf, a->bytes, h->lidx_of[a->root]), first);
    if (h->lidx_of[a->rank] == 0)
        HIER_STEP(a, h->group, rcoll_bcast(h->group, buf, a->bytes, rnode), first);
    if (node != rnode)
        HIER_STEP(a, h->node, rcoll_bcast(h->node, buf, a->bytes, 0), first);
    return first;
}

/* Cost model: a node bcast on the root's node, the leaders' bcast, a node bcast elsewhere. */
static double cost(const rcoll_cost_in_t *in)
{
    double node = in->sub(in, RCOLL_COLL_BCAST, in->bytes, in->L, 1, in->L, 1);
    return 2 * node + in->sub(in, RCOLL_COLL_BCAST, in->bytes, in->N, in->N, 1, 1);
}

const rcoll_algo_t rcoll_bcast_hier = {
    .name = "hier",
    .coll = RCOLL_COLL_BCAST,
    .summary = "[qian-phd] node-aware: the root's node, then the leaders, then the other nodes",
    .run = bcast_hier,
    .not_for = rcoll_composed_not_for,
    .fallback = &rcoll_bcast_knomial,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .cost = cost,
};
