/* Gather, node-aware leader form: node gathers, the leaders' gather to the root's node, the
 * result to the root.
 * Paper: [qian-phd] chapter 4 (SMP-aware collectives: shared memory inside a node, only
 * leaders on the network).
 * Steps: (1) every node gathers its ranks' blocks at its leader (local index 0), in node
 * order; (2) the leaders gather their node blocks at the leader of the root's node (a gatherv
 * where nodes differ in size; the group-0 team's own selection); (3) where the root is not that
 * leader, the leader hands the P m result to it through shared memory (a node-team gatherv in
 * which only the leader sends); (4) the root reorders node order into rank order where a
 * node's ranks are not consecutive.
 * Bytes on the network: N-1 messages of L m into the root's node instead of P-L of m.
 * When it wins: small blocks on teams spanning nodes with several ranks per node, where the
 * root's count of network messages is the cost (docs/tuning.md). */
#include <string.h>

#include "coll/hier.h"

/* Step 2 among the leaders: node blocks at node_off m of `all` on the root's node's leader. */
static rcoll_status_t leaders_gather(rcoll_args_t *a, rcoll_hier_t *h, unsigned char *all, int rnode)
{
    struct rcoll_team *t = a->team;
    size_t m = a->bytes;
    int node = t->node_of[a->rank];
    unsigned char *mine = all + (size_t)h->node_off[node] * m;
    const void *send = node == rnode ? RCOLL_IN_PLACE : (const void *)mine;
    if (rcoll_hier_even(t))
        return rcoll_gather(h->group, send, all, (size_t)t->ppn_max * m, rnode);
    size_t *counts = rcoll_hier_node_blocks(h, t, m);
    return rcoll_gatherv(h->group, send, counts[node], all, counts, counts + t->node_count, rnode);
}

static rcoll_status_t gather_hier(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    size_t m = a->bytes, total = (size_t)a->size * m;
    int rnode = t->node_of[a->root], node = t->node_of[a->rank], g = h->lidx_of[a->rank];
    bool root = a->rank == a->root, root_leads = h->lidx_of[a->root] == 0;
    bool nomem;
    unsigned char *all = rcoll_hier_node_order(a, h, a->recvbuf, &nomem);
    if (nomem)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "gather: no memory for the node-order result");
    unsigned char *nodebuf = g == 0 ? all + (size_t)h->node_off[node] * m : NULL;
    const void *send = nodebuf == a->sendbuf ? RCOLL_IN_PLACE : a->sendbuf;
    rcoll_status_t first = RCOLL_OK;
    HIER_STEP(a, h->node, rcoll_gather(h->node, send, nodebuf, m, 0), first);
    if (g == 0)
        HIER_STEP(a, h->group, leaders_gather(a, h, all, rnode), first);
    if (node == rnode && !root_leads) { /* the leader hands the result to the root */
        size_t *counts = rcoll_hier_one_block(h, t, total), *displs = counts + h->node->size;
        const void *send_all = g == 0 ? (const void *)all : root ? RCOLL_IN_PLACE : (const void *)h;
        HIER_STEP(a, h->node, rcoll_gatherv(h->node, send_all, g == 0 ? total : 0,
                                            root ? all : NULL, counts, displs, h->lidx_of[a->root]),
                  first); /* (a rank that sends nothing names any buffer) */
    }
    if (root && all != a->recvbuf)
        for (int r = 0; r < a->size; r++)
            if (r != a->rank)
                memcpy((unsigned char *)a->recvbuf + (size_t)r * m, all + (size_t)h->node_major[r] * m, m);
    return first;
}

/* Cost model: node gather of m, the leaders' gather of L m blocks, the root's reordering (its
 * hand-over from a leader, when it is not one, left out). */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes;
    return in->sub(in, RCOLL_COLL_GATHER, in->bytes, in->L, 1, in->L, 1) +
           in->sub(in, RCOLL_COLL_GATHER, (size_t)in->L * in->bytes, in->N, in->N, 1, 1) +
           rcoll_cost_copy(in, in->P * m);
}

const rcoll_algo_t rcoll_gather_hier = {
    .name = "hier",
    .coll = RCOLL_COLL_GATHER,
    .summary = "[qian-phd] node-aware: node gathers, leaders' gather to the root's node, then the root",
    .run = gather_hier,
    .not_for = rcoll_composed_not_for,
    .fallback = &rcoll_gather_direct,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .cost = cost,
};
