/* Scatter, node-aware leader form: the root's blocks to its node's leader, the leaders'
 * scatter of node blocks, node scatters.
 * Paper: [qian-phd] chapter 4 (SMP-aware collectives: shared memory inside a node, only
 * leaders on the network).
 * Steps: (1) where the root is not its node's leader, it hands its P blocks, in node order, to
 * the leader through shared memory (a node-team scatterv in which only the leader receives);
 * (2) the leader of the root's node scatters node blocks (L m each; a scatterv where nodes
 * differ in size) among the leaders (the group-0 team's own selection); (3) every node's leader
 * scatters its node block to its ranks through shared memory.
 * Bytes on the network: N-1 messages of L m from the root's node instead of P-L of m.
 * When it wins: small blocks on teams spanning nodes with several ranks per node
 * (docs/tuning.md). */
#include <string.h>

#include "coll/hier.h"

/* Step 2 among the leaders: node block k from node_off[k] m of `all` at the root's node's
 * leader into the same place of every leader's `all`. */
static rcoll_status_t leaders_scatter(rcoll_args_t *a, rcoll_hier_t *h, unsigned char *all, int rnode)
{
    struct rcoll_team *t = a->team;
    size_t m = a->bytes;
    int node = t->node_of[a->rank];
    unsigned char *mine = all + (size_t)h->node_off[node] * m;
    void *recv = node == rnode ? RCOLL_IN_PLACE : (void *)mine;
    if (rcoll_hier_even(t))
        return rcoll_scatter(h->group, all, recv, (size_t)t->ppn_max * m, rnode);
    size_t *counts = rcoll_hier_node_blocks(h, t, m);
    return rcoll_scatterv(h->group, all, counts, counts + t->node_count, recv, counts[node], rnode);
}

static rcoll_status_t scatter_hier(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    size_t m = a->bytes, total = (size_t)a->size * m;
    int rnode = t->node_of[a->root], node = t->node_of[a->rank], g = h->lidx_of[a->rank];
    bool root = a->rank == a->root, root_leads = h->lidx_of[a->root] == 0;
    bool nomem;
    unsigned char *all = rcoll_hier_node_order(a, h, (void *)(uintptr_t)a->sendbuf, &nomem);
    if (nomem)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "scatter: no memory for the node-order blocks");
    if (root && all != a->sendbuf)
        for (int r = 0; r < a->size; r++)
            memcpy(all + (size_t)h->node_major[r] * m, (const unsigned char *)a->sendbuf + (size_t)r * m, m);
    rcoll_status_t first = RCOLL_OK;
    if (node == rnode && !root_leads) { /* the root hands its blocks to the leader */
        size_t *counts = rcoll_hier_one_block(h, t, total), *displs = counts + h->node->size;
        HIER_STEP(a, h->node, rcoll_scatterv(h->node, root ? all : NULL, counts, displs,
                                             g == 0 ? all : root ? RCOLL_IN_PLACE : NULL,
                                             g == 0 ? total : 0, h->lidx_of[a->root]), first);
    }
    if (g == 0)
        HIER_STEP(a, h->group, leaders_scatter(a, h, all, rnode), first);
    /* The root's block is in place already (the entry copied it): it takes a scratch copy. */
    void *recv = root ? (void *)t->scratch : a->recvbuf;
    if (root && m > 2 * (size_t)a->size * sizeof(int))
        recv = rcoll_team_tmp(t, RCOLL_TMP_ALGO2, m);
    if (!recv)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "scatter: no memory");
    unsigned char *nodebuf = g == 0 ? all + (size_t)h->node_off[node] * m : NULL;
    HIER_STEP(a, h->node, rcoll_scatter(h->node, nodebuf, recv, m, 0), first);
    return first;
}

/* Cost model: the root's reordering, the leaders' scatter of L m blocks, node scatter of m (the
 * root's hand-over to its leader, when it is not one, left out). */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes;
    return rcoll_cost_copy(in, in->P * m) +
           in->sub(in, RCOLL_COLL_SCATTER, (size_t)in->L * in->bytes, in->N, in->N, 1, 1) +
           in->sub(in, RCOLL_COLL_SCATTER, in->bytes, in->L, 1, in->L, 1);
}

const rcoll_algo_t rcoll_scatter_hier = {
    .name = "hier",
    .coll = RCOLL_COLL_SCATTER,
    .summary = "[qian-phd] node-aware: the root's node's leader scatters node blocks, leaders scatter on their nodes",
    .run = scatter_hier,
    .not_for = rcoll_composed_not_for,
    .fallback = &rcoll_scatter_direct,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .cost = cost,
};
