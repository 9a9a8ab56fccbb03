/* Allgather, multi-leader across nodes: every local rank is the leader of its group.
 * Paper: [qian-phd] chapter 5 (multi-connection and multi-core aware allgather, Fig. 5.4-5.5:
 * several leaders per node use several connections and cores at once); here the number of
 * groups is the number of ranks per node, group g being the ranks of local index g.
 * Steps: (1) every group allgathers its members' blocks over the network (all groups at once,
 * each with the group team's own selection), into the group's place of a group-major buffer;
 * (2) node-team allgather of the N-block group results (shared memory), so every rank holds
 * all P blocks; (3) each rank reorders group-major into rank order (one local copy of P m).
 * Bytes on the network: per rank those of an allgather of m among N ranks, all L groups in
 * parallel; shared memory moves N m from each local rank to every other.
 * When it wins: medium and large blocks, where one leader's link or core is the bottleneck and
 * L leaders share the work. Nodes of different sizes: a group missing from a node would leave
 * its blocks unheld there, so it gives way to hier_gather_bcast. The steps are those of
 * hier_multi_group with G = L (rcoll_allgather_groups), which skips its gather to the leaders. */
#include "coll/hier.h"

static rcoll_status_t allgather_hier_multi_leader(rcoll_args_t *a)
{
    return rcoll_allgather_groups(a, a->team->hier->node->size);
}

/* Cost model: L group allgathers of m among N ranks at once (their messages share each node's
 * link), a node allgather of N-block group results, the reordering copy. */
static double cost(const rcoll_cost_in_t *in)
{
    double m = (double)in->bytes;
    return in->sub(in, RCOLL_COLL_ALLGATHER, in->bytes, in->N, in->N, 1, in->L) +
           in->sub(in, RCOLL_COLL_ALLGATHER, (size_t)in->N * in->bytes, in->L, 1, in->L, 1) +
           rcoll_cost_copy(in, in->P * m);
}

const rcoll_algo_t rcoll_allgather_hier_multi_leader = {
    .name = "hier_multi_leader",
    .coll = RCOLL_COLL_ALLGATHER,
    .summary = "[qian-phd] multi-leader: every local rank leads its group across nodes, then a node allgather",
    .run = allgather_hier_multi_leader,
    .not_for = rcoll_composed_even_not_for,
    .fallback = &rcoll_allgather_hier_gather_bcast,
    .limits = "teams spanning nodes with the same number (> 1) of ranks on every node",
    .composed = true,
    .cost = cost,
};
