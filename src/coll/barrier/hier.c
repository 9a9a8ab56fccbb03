/* Barrier, node-aware: shared-memory fan-in on each node, a barrier among the nodes' leaders,
 * one shared release per node.
 * Paper: [kini-tr03] (the gather-and-release structure, the hierarchical discussion) and
 * [qian-phd] chapter 4 (SMP-aware collectives: only leaders cross the network).
 * Steps: (1) node team gather of one byte to its leader (local index 0): every rank writes one
 * line; (2) the leaders run the group-0 team's barrier (its own selection: any flat barrier);
 * (3) node team bcast of one byte from the leader: one published line every local rank polls.
 * Messages on the network: those of a barrier among N nodes (N log2 N for dissemination),
 * instead of P log2 P for a flat barrier over all P ranks.
 * When it wins: teams spanning nodes with several ranks per node, every size (docs/tuning.md,
 * "Node-aware collectives"). */
#include "coll/hier.h"

static rcoll_status_t barrier_hier(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    rcoll_status_t first = RCOLL_OK;
    unsigned char one = 1, *in = (unsigned char *)t->scratch; /* >= size bytes */
    HIER_STEP(a, h->node, rcoll_gather(h->node, &one, in, 1, 0), first);
    if (h->lidx_of[a->rank] == 0)
        HIER_STEP(a, h->group, rcoll_barrier(h->group), first);
    HIER_STEP(a, h->node, rcoll_bcast(h->node, &one, 1, 0), first);
    return first;
}

/* Cost model: its three calls: node gather of a byte, the leaders' barrier, node bcast. */
static double cost(const rcoll_cost_in_t *in)
{
    return in->sub(in, RCOLL_COLL_GATHER, 1, in->L, 1, in->L, 1) +
           in->sub(in, RCOLL_COLL_BARRIER, 0, in->N, in->N, 1, 1) +
           in->sub(in, RCOLL_COLL_BCAST, 1, in->L, 1, in->L, 1);
}

const rcoll_algo_t rcoll_barrier_hier = {
    .name = "hier",
    .coll = RCOLL_COLL_BARRIER,
    .summary = "[kini-tr03]/[qian-phd] node-aware: fan-in on each node, barrier among leaders, one release per node",
    .run = barrier_hier,
    .not_for = rcoll_composed_not_for,
    .fallback = &rcoll_barrier_dissemination,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .cost = cost,
};
