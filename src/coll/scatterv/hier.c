/* Scatterv, node-aware leader form: the counts learnt on each node, the root's blocks packed in
 * node order to its node's leader, the leaders' scatterv of node blocks, node scattervs.
 * Paper: [qian-phd] chapter 4 (SMP-aware collectives: shared memory inside a node, only
 * leaders on the network), for counts that differ by rank. Only the root knows every count, so
 * what the others need is learnt through shared memory first, never in an extra network round.
 * Steps: (0) every node gathers its ranks' (received) counts (a size_t each) at its leader
 * (local index 0): its node's total and how to split it; the root packs every other rank's
 * block in node order; (1) where the root does not lead its node, it hands the node totals and
 * then the packed blocks to the leader through shared memory (node-team scattervs in which only
 * the leader receives); (2) the leader of the root's node scattervs node blocks (node totals)
 * among the leaders (the group-0 team's own selection); (3) every node's leader scattervs its
 * node block to its ranks through shared memory. The root's own block is in place already
 * (the entry copied it): it counts 0 throughout.
 * Bytes on the network: N-1 messages of a node's total from the root's node instead of one per
 * rank elsewhere; the root copies the sum of counts once more.
 * When it wins: small counts on teams spanning nodes with several ranks per node (as scatter
 * hier; docs/algorithms.md). */
#include "coll/hier.h"

/* Step 2 among the leaders: node block k from its node-order place of `all` at the root's
 * node's leader (h->counts: the node totals and displacements there) to node k's leader. */
static rcoll_status_t leaders_scatterv(rcoll_args_t *a, rcoll_hier_t *h, const rcoll_hier_v_t *v)
{
    struct rcoll_team *t = a->team;
    int rnode = t->node_of[a->root];
    bool here = t->node_of[a->rank] == rnode;
    return rcoll_scatterv(h->group, v->all, here ? h->counts : NULL, here ? h->counts + t->node_count : NULL,
                          here ? RCOLL_IN_PLACE : v->node, v->node_bytes, rnode);
}

/* Step 3 on every node: each rank's block from the leader's packed node block (the root
 * receives nothing: its block is in place). */
static rcoll_status_t node_scatterv(rcoll_args_t *a, rcoll_hier_t *h, const rcoll_hier_v_t *v)
{
    bool root = a->rank == a->root, leader = h->lidx_of[a->rank] == 0;
    size_t *local = rcoll_hier_local_counts(h, a->team);
    return rcoll_scatterv(h->node, v->node, leader ? local : NULL, leader ? local + h->node->size : NULL,
                          a->recvbuf, root ? 0 : a->bytes, 0);
}

static rcoll_status_t scatterv_hier(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    bool root = a->rank == a->root, leader = h->lidx_of[a->rank] == 0;
    bool handover = t->node_of[a->rank] == t->node_of[a->root] && h->lidx_of[a->root] != 0;
    rcoll_status_t first = RCOLL_OK;
    rcoll_hier_v_t v;
    if (!rcoll_hier_v_begin(a, h, a->scounts, &v, &first))
        return first;
    if (root)
        rcoll_hier_v_pack(a, h, v.all, a->sendbuf, a->scounts, a->sdispls);
    if (handover)
        HIER_STEP(a, h->node, rcoll_hier_to_leader(a, h, v.all, v.all, v.total), first);
    if (leader)
        HIER_STEP(a, h->group, leaders_scatterv(a, h, &v), first);
    HIER_STEP(a, h->node, node_scatterv(a, h, &v), first);
    return first;
}

/* No cost model: the selection keys the v-forms on no size (every rank decides alike without
 * the counts), so the model has nothing to price; the rules choose (select/model.c). */
const rcoll_algo_t rcoll_scatterv_hier = {
    .name = "hier",
    .coll = RCOLL_COLL_SCATTERV,
    .summary = "[qian-phd] node-aware: counts learnt on each node, leaders' scatterv from the root's node, node scattervs",
    .run = scatterv_hier,
    .not_for = rcoll_composed_not_for,
    .fallback = &rcoll_scatterv_direct,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .cost = NULL,
};
