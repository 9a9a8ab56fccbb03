/* Allgather, gather-based multi-group across nodes: every node's whole block gathered by one
 * master per node, each master in a different group.
 * Paper: [qian-phd] 5.5.2, Multi-group Gather-based Multi-connection Aware allgather (Fig. 5.3):
 * the outbound connections of a node spread over its cores, for very small messages.
 * Steps: (1) node-team allgather, so every rank holds its node's L blocks; (2) group g (the ranks
 * of local index g on every node) gathers those node blocks at its masters: the member on node k
 * is a master when k mod L = g, so every node has one master and a group has two or more when
 * there are more nodes than ranks per node (the seed's remedy; one gather per master); groups
 * with no master rest; (3) each master broadcasts the P m result to its node (node-team bcast
 * from local rank k mod L); (4) node order into rank order where nodes' ranks are not
 * consecutive.
 * Bytes on the network: each master receives N-1 messages of L m; every rank sends its node block
 * (L m) to its group's masters, so a node's outbound messages go from L cores at once (Gather-
 * and-Broadcast sends them all from its one leader).
 * When it wins: very small blocks (the seed: up to 32 bytes), where the cost of a message is the
 * core that sends it; the shared-memory volume (a node allgather, then P m to every rank) rules
 * it out for larger blocks. */
#include <string.h>

#include "coll/hier.h"

/* Step 2: my group's node blocks, from `all` (node-major), at each master of the group. */
static rcoll_status_t group_gathers(rcoll_args_t *a, rcoll_hier_t *h, unsigned char *all)
{
    struct rcoll_team *t = a->team;
    int L = h->node->size, g = h->lidx_of[a->rank], N = t->node_count, node = t->node_of[a->rank];
    size_t block = (size_t)L * a->bytes;
    unsigned char *mine = all + (size_t)h->node_off[node] * a->bytes;
    /* The group team's rank k holds node place_of[k] (group order follows team ranks). */
    size_t *counts = h->counts, *displs = counts + N;
    for (int k = 0; k < N; k++) {
        int member = h->rank_at[h->node_off[k] + g];
        int place = h->group_major[member] - h->group_off[g];
        counts[place] = block;
        displs[place] = (size_t)h->node_off[k] * a->bytes;
    }
    rcoll_status_t first = RCOLL_OK;
    for (int k = g; k < N; k += L) { /* the masters of group g: nodes g, g + L, ... */
        int root = h->group_major[h->rank_at[h->node_off[k] + g]] - h->group_off[g];
        const void *send = k == node ? RCOLL_IN_PLACE : (const void *)mine;
        rcoll_status_t st = rcoll_gatherv(h->group, send, block, all, counts, displs, root);
        if (!rcoll_hier_step(t, h->group, st, &first))
            return first;
    }
    return first;
}

static rcoll_status_t allgather_hier_multi_gather(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    size_t m = a->bytes, total = (size_t)a->size * m;
    int node = t->node_of[a->rank], L = h->node->size;
    unsigned char *all = h->blocked ? a->recvbuf : rcoll_team_tmp(t, RCOLL_TMP_ALGO, total);
    if (!all)
        return rcoll_team_error(t, RCOLL_ERR_NOMEM, "allgather: no memory for the node-order result");
    unsigned char *nodebuf = all + (size_t)h->node_off[node] * m;
    if (!h->blocked)
        memcpy(nodebuf + (size_t)h->lidx_of[a->rank] * m, (unsigned char *)a->recvbuf + (size_t)a->rank * m, m);
    rcoll_status_t first = RCOLL_OK;
    HIER_STEP(a, h->node, rcoll_allgather(h->node, RCOLL_IN_PLACE, nodebuf, m), first);
    if (h->lidx_of[a->rank] < t->node_count)
        HIER_STEP(a, h->group, group_gathers(a, h, all), first);
    HIER_STEP(a, h->node, rcoll_bcast(h->node, all, total, node % L), first);
    if (!h->blocked)
        for (int r = 0; r < a->size; r++)
            if (r != a->rank)
                memcpy((unsigned char *)a->recvbuf + (size_t)r * m, all + (size_t)h->node_major[r] * m, m);
    return first;
}

/* Cost model: the node allgather of m, ceil(N/L) gathers of L m blocks among N ranks (up to L
 * groups at once), the node bcast of P m. */
static double cost(const rcoll_cost_in_t *in)
{
    int rounds = (in->N + in->L - 1) / in->L, share = in->N < in->L ? in->N : in->L;
    return in->sub(in, RCOLL_COLL_ALLGATHER, in->bytes, in->L, 1, in->L, 1) +
           rounds * in->sub(in, RCOLL_COLL_GATHER, (size_t)in->L * in->bytes, in->N, in->N, 1, share) +
           in->sub(in, RCOLL_COLL_BCAST, (size_t)in->P * in->bytes, in->L, 1, in->L, 1);
}

const rcoll_algo_t rcoll_allgather_hier_multi_gather = {
    .name = "hier_multi_gather",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd] 5.5.2 gather-based multi-group: node allgather, every group gathers "
               "the node blocks at its master on one node, node bcast",
    .run = allgather_hier_multi_gather,
    .not_for = rcoll_composed_even_not_for,
    .fallback = &rcoll_allgather_hier_gather_bcast,
    .limits = "teams spanning nodes with the same number (> 1) of ranks on every node",
    .composed = true,
    .cost = cost,
};
