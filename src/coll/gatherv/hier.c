/* Gatherv, node-aware leader form: the counts learnt on each node, node gathervs, the leaders'
 * gatherv to the root's node, the result to the root.
 * Paper: [qian-phd] chapter 4 (SMP-aware collectives: shared memory inside a node, only
 * leaders on the network), for counts that differ by rank. Only the root knows every count, so
 * what the others need is learnt through shared memory first, never in an extra network round.
 * Steps: (0) every node gathers its ranks' counts (a size_t each) at its leader (local index
 * 0); where the root does not lead its node it gives the leader the node totals (a node-team
 * scatterv in which only the leader receives, on the root's node only); (1) every node gathervs
 * its ranks' blocks at its leader, packed in node order; (2) the leaders gatherv their node
 * blocks (node totals) at the leader of the root's node (the group-0 team's own selection); (3)
 * where the root is not that leader, the leader hands the packed result to it through shared
 * memory (a node-team gatherv in which only the leader sends); (4) the root copies each block
 * to its displacement. The root's own block is in place already: it counts 0 throughout.
 * Bytes on the network: N-1 messages of a node's total into the root's node instead of one per
 * rank elsewhere; the root copies the sum of counts once more.
 * When it wins: small counts on teams spanning nodes with several ranks per node, where the
 * root's count of network messages is the cost (as gather hier; docs/algorithms.md). */
#include "coll/hier.h"

/* Step 1 on every node: the blocks of its ranks, packed in node order, at the leader. */
static rcoll_status_t node_gatherv(rcoll_args_t *a, rcoll_hier_t *h, const rcoll_hier_v_t *v)
{
    bool root = a->rank == a->root, leader = h->lidx_of[a->rank] == 0;
    size_t *local = rcoll_hier_local_counts(h, a->team);
    const void *send = root ? (const void *)h : a->sendbuf; /* the root sends nothing */
    return rcoll_gatherv(h->node, send, root ? 0 : a->bytes, v->node, leader ? local : NULL,
                         leader ? local + h->node->size : NULL, 0);
}

/* Step 2 among the leaders: node k's block at its node-order place of `all` on the root's
 * node's leader (h->counts: the node totals and displacements there). */
static rcoll_status_t leaders_gatherv(rcoll_args_t *a, rcoll_hier_t *h, const rcoll_hier_v_t *v)
{
    struct rcoll_team *t = a->team;
    int rnode = t->node_of[a->root];
    bool here = t->node_of[a->rank] == rnode;
    return rcoll_gatherv(h->group, here ? RCOLL_IN_PLACE : v->node, v->node_bytes, v->all,
                         here ? h->counts : NULL, here ? h->counts + t->node_count : NULL, rnode);
}

static rcoll_status_t gatherv_hier(rcoll_args_t *a)
{
    struct rcoll_team *t = a->team;
    rcoll_hier_t *h = t->hier;
    bool root = a->rank == a->root, leader = h->lidx_of[a->rank] == 0;
    bool handover = t->node_of[a->rank] == t->node_of[a->root] && h->lidx_of[a->root] != 0;
    rcoll_status_t first = RCOLL_OK;
    rcoll_hier_v_t v;
    if (!rcoll_hier_v_begin(a, h, a->rcounts, &v, &first))
        return first;
    HIER_STEP(a, h->node, node_gatherv(a, h, &v), first);
    if (leader)
        HIER_STEP(a, h->group, leaders_gatherv(a, h, &v), first);
    if (handover)
        HIER_STEP(a, h->node, rcoll_hier_from_leader(a, h, v.all, v.all, v.total), first);
    if (root)
        rcoll_hier_v_unpack(a, h, v.all, a->recvbuf, a->rcounts, a->rdispls);
    return first;
}

/* No cost model: the selection keys the v-forms on no size (every rank decides alike without
 * the counts), so the model has nothing to price; the rules choose (select/model.c). */
const rcoll_algo_t rcoll_gatherv_hier = {
    .name = "hier",
    .coll = RCOLL_COLL_GATHERV,
    .summary = "[qian-phd] node-aware: counts learnt on each node, node gathervs, leaders' gatherv to the root's node",
    .run = gatherv_hier,
    .not_for = rcoll_composed_not_for,
    .fallback = &rcoll_gatherv_direct,
    .limits = "teams spanning nodes with several ranks on a node",
    .composed = true,
    .cost = NULL,
};
