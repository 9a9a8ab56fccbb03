/* Allgather, SMP-aware Gather-and-Broadcast across nodes (one leader per node).
 * Paper: [qian-phd] chapter 4, SMP-aware Gather-and-Broadcast: ranks hand their blocks to
 * their node's leader through shared memory, only leaders exchange over the network, each
 * leader hands the whole result back through shared memory.
 * Steps: (1) node-team gather of every local block to the leader (local index 0), into the
 * node's place of the result; (2) the leaders allgather their node blocks (L m bytes each; an
 * allgatherv where nodes hold different numbers of ranks) with the group-0 team's own
 * selection (recursive doubling, Bruck, direct or ring by size: the seed's SMP-aware Direct
 * and Bruck); (3) node-team bcast of the P m result from the leader (shared memory: readers copy
 * out of the leader's buffer in parallel). Where a node's ranks are not consecutive in the
 * team (RCOLL_NODE_MAP=0,1,0,1) the result is built in node order and each rank reorders it.
 * Bytes on the network: (N-1) L m per leader in the leaders' algorithm, none from other ranks;
 * a flat algorithm sends about L times as many messages from each node.
 * When it wins: small and medium blocks on teams spanning nodes with several ranks per node,
 * where the count of network messages is the cost (docs/tuning.md, "Node-aware collectives"). */
#include <string.h>

#include "coll/hier.h"

/* The leaders' exchange of node blocks, in node order at `all`. */
static rcoll_status_t leaders_exchange(rcoll_args_t *a, rcoll_hier_t *h, unsigned char *all)
{
    struct rcoll_team *t = a->team;
    size_t m = a->bytes;
    int node = t->node_of[a->rank];
    if (rcoll_hier_even(t)) /* group-0 rank k is node k: its block at k L m */
        return rcoll_allgather(h->group, RCOLL_IN_PLACE, all, (size_t)t->ppn_max * m);
    size_t *counts = rcoll_hier_node_blocks(h, t, m);
    return rcoll_allgatherv(h->group, RCOLL_IN_PLACE, counts[node], all, counts, counts + t->node_count);
}

static rcoll_status_t allgather_hier_gather_bcast(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    size_t m = a->bytes, total = (size_t)a->size * m;
    unsigned char *all = h->blocked ? a->recvbuf : rcoll_team_tmp(t, RCOLL_TMP_ALGO, total);
    if (!all)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "allgather: no memory for the node-order result");
    const unsigned char *mine = (const unsigned char *)a->recvbuf + (size_t)a->rank * m;
    unsigned char *nodebuf = all + (size_t)h->node_off[t->node_of[a->rank]] * m;
    bool leader = h->lidx_of[a->rank] == 0;
    rcoll_status_t first = RCOLL_OK;
    /* In place at a leader whose block already sits at its node's first place. */
    const void *send = leader && h->blocked ? RCOLL_IN_PLACE : (const void *)mine;
    HIER_STEP(a, h->node, rcoll_gather(h->node, send, nodebuf, m, 0), first);
    if (leader)
        HIER_STEP(a, h->group, leaders_exchange(a, h, all), first);
    HIER_STEP(a, h->node, rcoll_bcast(h->node, all, total, 0), first);
    if (!h->blocked)
        for (int r = 0; r < a->size; r++)
            memcpy((unsigned char *)a->recvbuf + (size_t)r * m, all + (size_t)h->node_major[r] * m, m);
    return first;
}

/* Cost model: its three calls: node gather of m, the leaders' allgather of L m blocks, node
 * bcast of P m. */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes, all = in->P * m;
    (void)m;
    return in->sub(in, RCOLL_COLL_GATHER, in->bytes, in->L, 1, in->L, 1) +
           in->sub(in, RCOLL_COLL_ALLGATHER, (size_t)in->L * in->bytes, in->N, in->N, 1, 1) +
           in->sub(in, RCOLL_COLL_BCAST, (size_t)all, in->L, 1, in->L, 1);
}

const rcoll_algo_t rcoll_allgather_hier_gather_bcast = {
    .name = "hier_gather_bcast",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd] SMP-aware Gather-and-Broadcast: node gather, leaders' allgather, node bcast",
    .run = allgather_hier_gather_bcast,
    .not_for = rcoll_composed_not_for,
    .fallback = &rcoll_allgather_recursive_doubling,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .cost = cost,
};
